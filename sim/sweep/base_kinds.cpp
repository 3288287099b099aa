// The table of sweep base kinds and their options (see base_kinds.h).
#include "sim/sweep/base_kinds.h"

#include <cctype>
#include <filesystem>
#include <map>

#include "sim/app/cli.h"
#include "sim/common/error.h"
#include "sim/gen/step_graph.h"
#include "sim/serve/requests.h"
#include "sim/serve/serve_setup.h"
#include "sim/serve/step_table.h"

namespace dfsim {

namespace {

Json check_cores(const JsonView& v) { return v.as_int(1, 1 << 20); }
void cores_args(const Json& v, std::vector<std::string>& a) { a.insert(a.end(), {"--cores", v.dump()}); }

// split and tiles: {"M": 4, "N": 8} or the CLI's "M=4,N=8"; normalised to the object.
Json check_dims(const JsonView& v) {
  Json out = Json::object();
  auto check_name = [&](const std::string& name) {
    bool ok = !name.empty() && std::isalpha(static_cast<unsigned char>(name[0]));
    for (char c : name) ok = ok && std::isalnum(static_cast<unsigned char>(c));
    if (!ok) v.fail("expected dim names like M, N, K, B or d0, got \"" + name + "\"");
  };
  if (v.json().is_string()) {
    std::string s = v.as_string(), item;
    for (std::size_t start = 0; start <= s.size();) {
      std::size_t end = s.find(',', start);
      if (end == std::string::npos) end = s.size();
      item = s.substr(start, end - start);
      auto eq = item.find('=');
      std::size_t used = 0;
      long n = 0;
      try {
        n = eq == std::string::npos ? 0 : std::stol(item.substr(eq + 1), &used);
      } catch (const std::exception&) {
      }
      if (eq == std::string::npos || used != item.size() - eq - 1 || n < 1)
        v.fail("expected \"DIM=N,DIM=N\" with N >= 1 (like \"M=4,N=8\"), got \"" + s + "\"");
      check_name(item.substr(0, eq));
      out[item.substr(0, eq)] = n;
      start = end + 1;
    }
    return out;
  }
  if (!v.json().is_object() || v.size() == 0)
    v.fail("expected an object of dims like {\"M\": 4, \"N\": 8} or a string \"M=4,N=8\", got " + json_type_name(v.json()));
  for (const auto& [k, _] : v.json().items()) {
    check_name(k);
    out[k] = v.at(k).as_int(1, 1 << 20);
  }
  return out;
}
void split_args(const Json& v, std::vector<std::string>& a) { a.insert(a.end(), {"--split", cell_text(v)}); }
void tiles_args(const Json& v, std::vector<std::string>& a) { a.insert(a.end(), {"--tiles", cell_text(v)}); }

// The levels `dfsim run --lx-planning` accepts (one list: parse_lx_planning's).
Json check_lx_planning(const JsonView& v) {
  std::string s = v.as_string();
  try {
    parse_lx_planning(s);
  } catch (const UsageError& e) {
    std::string what = e.what();  // "--lx-planning: expected ...": the flag is not what the file wrote
    v.fail(what.substr(what.find(": ") == std::string::npos ? 0 : what.find(": ") + 2));
  }
  return s;
}
void lx_planning_args(const Json& v, std::vector<std::string>& a) {
  a.insert(a.end(), {"--lx-planning", v.get<std::string>()});
}

Json check_fuse(const JsonView& v) { return v.as_bool(); }
// true is the compiler's default, so only false is passed (issue 9 names only --no-fuse).
void fuse_args(const Json& v, std::vector<std::string>& a) {
  if (!v.get<bool>()) a.push_back("--no-fuse");
}

std::string workload_file(const Json& o, const std::string& input) { return o.value("workload", input); }
void workload_args(const Json& o, const std::string& input, std::vector<std::string>& a) {
  a.insert(a.end(), {"--workload", workload_file(o, input)});
}
std::vector<std::string> workload_files(const Json& o, const std::string& input) { return {workload_file(o, input)}; }

// The options of `dfsim gen` (docs/workloads.md): checked here value by value, as a whole step
// by check_gen_step, and given to `dfsim run --gen-step` as one JSON object.
const ModelSpec& gen_model(const std::string& name) {
  static std::map<std::string, ModelSpec> models;  // a model file is read once per sweep
  auto it = models.find(name);
  if (it == models.end()) it = models.emplace(name, find_model_spec(name, default_models_dir())).first;
  return it->second;
}
Json check_gen_model(const JsonView& v) {
  std::string name = v.as_string();
  try {
    gen_model(name);
  } catch (const InputError& e) {
    if (e.file() != name) throw;  // a model file's own error names that file
    v.fail(e.detail());
  }
  return name;
}
Json check_gen_phase(const JsonView& v) {
  std::string s = v.as_string();
  if (s != "prefill" && s != "decode") v.fail("expected \"prefill\" or \"decode\", got \"" + s + "\"");
  return s;
}
Json check_gen_dtype(const JsonView& v) {
  std::string s = v.as_string();
  if (s != "fp16" && s != "fp8") v.fail("expected \"fp16\" or \"fp8\", got \"" + s + "\"");
  return s;
}
Json check_positive(const JsonView& v) { return v.as_int(1, INT32_MAX); }
Json check_count(const JsonView& v) { return v.as_int(0, INT32_MAX); }
Json check_tp(const JsonView& v) { return v.as_int(1, 64); }  // cards: the point's config needs as many

const std::vector<std::string> kGenOptions = {"model", "phase", "batch", "context", "tokens", "layers", "dtype", "tp"};

void gen_args(const Json& o, const std::string&, std::vector<std::string>& a) {
  Json step = Json::object();
  for (const auto& name : kGenOptions)
    if (o.contains(name)) step[name] = o[name];
  a.insert(a.end(), {"--gen-step", step.dump()});
}
std::vector<std::string> gen_files(const Json& o, const std::string&) {
  return {find_model_file(o.at("model").get<std::string>(), default_models_dir())};
}

void check_gen_step(const Json& o) {
  for (const char* required : {"model", "phase"})
    if (!o.contains(required)) throw InputError(required, "", "expected in the base's \"gen\" or as an axis");
  bool decode = o["phase"] == "decode";
  if (decode && !o.contains("context")) throw InputError("context", "", "a decode step needs \"context\"");
  if (decode && o.contains("tokens")) throw InputError("tokens", "", "applies to \"phase\": \"prefill\" (a decode step makes one token)");
  if (!decode && !o.contains("tokens")) throw InputError("tokens", "", "a prefill step needs \"tokens\"");
  const ModelSpec& m = gen_model(o["model"].get<std::string>());
  StepSpec step;
  step.phase = decode ? StepPhase::decode : StepPhase::prefill;
  step.batch = o.value("batch", 1);
  step.tokens = o.value("tokens", 1);
  step.context = o.value("context", 0);
  step.layers = o.value("layers", 0);
  step.tp = o.value("tp", 1);
  try {
    check_step(m, step);
  } catch (const InputError& e) {
    if (e.file().rfind("--", 0) != 0) throw;
    throw InputError(e.file().substr(2), "", e.detail());
  }
}

// The options of `dfsim serve` (docs/serving.md), each its flag with '_' as '-': checked here
// value by value; `dfsim serve` checks how they fit together (a point it refuses fails).
Json check_rate(const JsonView& v) {  // kept as written: 2 stays "2" in results.csv
  v.as_number(1e-9, 1e6);
  return v.json();
}
Json check_burstiness(const JsonView& v) {  // as dfsim serve: below 0.001 every request arrives at once
  v.as_number(1e-3, 1e6);
  return v.json();
}
Json check_text(const JsonView& v) {  // a length distribution ("normal:200,100") or a number
  if (v.json().is_number_integer()) return v.as_int(1, INT32_MAX);
  std::string s = v.as_string();
  if (s.empty()) v.fail("expected a length like 200 or \"normal:200,100\"");
  // What `dfsim serve` would refuse (a histogram's file is read by the point, relative to it).
  if (s.rfind("hist:", 0) != 0) {
    try {
      serve::parse_length_dist(s, "\"" + s + "\"");
    } catch (const UsageError& e) {
      v.fail(e.what());
    }
  }
  return s;
}
Json check_string(const JsonView& v) {  // a file path, a list like "4,8,16"
  std::string s = v.as_string();
  if (s.empty()) v.fail("expected a non-empty string");
  return s;
}
template <const char* A, const char* B>
Json check_either(const JsonView& v) {
  std::string s = v.as_string();
  if (s != A && s != B) v.fail(std::string("expected \"") + A + "\" or \"" + B + "\", got \"" + s + "\"");
  return s;
}
constexpr char kPoisson[] = "poisson", kGamma[] = "gamma", kSpyre[] = "spyre", kNoInterleave[] = "spyre-no-interleave",
               kPow2[] = "pow2", kBlocks[] = "blocks";

const std::vector<SweepOption> kServeOptions = {
    {"model", check_gen_model, nullptr},
    {"rate", check_rate, nullptr},
    {"requests", check_string, nullptr},
    {"num_requests", check_positive, nullptr, 100},
    {"prompt_len", check_text, nullptr},
    {"output_len", check_text, nullptr},
    {"arrival", check_either<kPoisson, kGamma>, nullptr, "poisson"},
    {"burstiness", check_burstiness, nullptr, 1},
    {"seed", check_count, nullptr, 0},
    {"scheduler", check_either<kSpyre, kNoInterleave>, nullptr, "spyre"},
    {"tp", check_positive, nullptr, 1},
    {"step_table", check_string, nullptr},
    {"block_size", check_positive, nullptr},
    {"num_blocks", check_positive, nullptr},
    {"max_num_seqs", check_positive, nullptr},
    {"max_num_batched_tokens", check_positive, nullptr},
    {"max_model_len", check_positive, nullptr},
    {"volumetric_limit", check_positive, nullptr},
    {"prefill_chunk", check_positive, nullptr},
    {"batch_buckets", check_string, nullptr},
    {"kv_buckets", check_either<kPow2, kBlocks>, nullptr, "pow2"},
    {"query_quantum", check_positive, nullptr},
};

std::vector<std::string> serve_option_names() {
  std::vector<std::string> names;
  for (const auto& o : kServeOptions) names.push_back(o.name);
  return names;
}

void serve_args(const Json& o, const std::string&, std::vector<std::string>& a) {
  for (const auto& opt : kServeOptions) {
    if (!o.contains(opt.name)) continue;
    std::string flag = "--" + opt.name;
    for (char& c : flag) c = c == '_' ? '-' : c;
    a.insert(a.end(), {flag, o[opt.name].is_string() ? o[opt.name].get<std::string>() : o[opt.name].dump()});
  }
}
// The model file, and the step table and request trace a point reads.
std::vector<std::string> serve_files(const Json& o, const std::string& input) {
  std::vector<std::string> files = gen_files(o, input);
  for (const char* f : {"step_table", "requests"})
    if (o.contains(f)) files.push_back(o[f].get<std::string>());
  return files;
}
// Whether a step table gives energies (which config keys still matter with it): read once a sweep.
bool step_table_has_energy(const std::string& file) {
  static std::map<std::string, bool> energy;
  auto it = energy.find(file);
  if (it == energy.end()) it = energy.emplace(file, serve::read_step_table(file).has_energy()).first;
  return it->second;
}
void check_serve_point(const Json& o) {
  if (!o.contains("model")) throw InputError("model", "", "expected in the base's \"serve\" or as an axis");
  if (o.contains("rate") == o.contains("requests"))
    throw InputError(o.contains("rate") ? "requests" : "rate", "", "give either \"rate\" or \"requests\" (a trace file)");
  // A config key the point's step table makes inert: the point would refuse it (as dfsim serve does).
  // (A missing table is named later, where the sweep file gives it, with the other input files.)
  if (o.contains("step_table") && o.contains("set") &&
      std::filesystem::is_regular_file(o["step_table"].get<std::string>())) {
    std::vector<std::string> sets;
    for (const auto& [k, v] : o["set"].items()) sets.push_back(set_arg(k, v));
    try {
      serve::check_step_table_sets(sets, step_table_has_energy(o["step_table"].get<std::string>()));
    } catch (const InputError& e) {
      if (e.file() != "--set") throw;  // the table's own error
      throw InputError("set", e.path(), e.detail());
    }
  }
}

// The options of `dfsim run` that compile an op graph (every kind that runs one has them).
std::vector<SweepOption> compile_options() {
  // The compile options are those of the op graph's "compile" section and of `dfsim run`'s
  // flags (docs/op-graph-format.md).
  return {{"cores", check_cores, cores_args},
          {"split", check_dims, split_args},
          {"tiles", check_dims, tiles_args},
          {"lx_planning", check_lx_planning, lx_planning_args},
          {"fuse", check_fuse, fuse_args, true}};
}

std::vector<SweepOption> gen_kind_options() {
  std::vector<SweepOption> o = compile_options();
  o.insert(o.end(), {{"model", check_gen_model, nullptr},
                     {"phase", check_gen_phase, nullptr},
                     {"batch", check_positive, nullptr, 1},
                     {"context", check_count, nullptr},
                     {"tokens", check_positive, nullptr},
                     {"layers", check_positive, nullptr},
                     {"dtype", check_gen_dtype, nullptr},
                     {"tp", check_tp, nullptr}});
  return o;
}

}  // namespace

const std::vector<BaseKind>& base_kinds() {
  static const std::vector<BaseKind> kinds = {
      {"workload", "run", "summary.json", compile_options(), {}, workload_args, workload_files, nullptr, check_workload_file},
      {"gen", "run", "summary.json", gen_kind_options(), kGenOptions, gen_args, gen_files, check_gen_step},
      {"serve", "serve", "summary.json", kServeOptions, serve_option_names(), serve_args, serve_files, check_serve_point},
  };
  return kinds;
}

const std::vector<std::string>& planned_base_inputs() {
  static const std::vector<std::string> planned = {};
  return planned;
}

const BaseKind* find_base_kind(std::string_view input) {
  for (const auto& k : base_kinds())
    if (k.input == input) return &k;
  return nullptr;
}

const SweepOption* BaseKind::option(std::string_view name) const {
  for (const auto& o : options)
    if (o.name == name) return &o;
  return nullptr;
}

bool BaseKind::is_input_option(std::string_view name) const {
  for (const auto& o : input_options)
    if (o == name) return true;
  return false;
}

std::vector<std::string> BaseKind::option_names() const {
  std::vector<std::string> names{"set"};
  if (input_options.empty()) names.insert(names.begin(), input);
  for (const auto& o : options) names.push_back(o.name);
  return names;
}

Json check_set_value(const JsonView& v) {
  if (v.json().is_null() || v.json().is_array())
    v.fail("expected a config value (number, string, boolean or object), got " + json_type_name(v.json()));
  return v.json();
}

std::string set_arg(const std::string& key, const Json& value) { return key + "=" + value.dump(); }

std::string cell_text(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object()) {
    std::string s;
    for (const auto& [k, v] : value.items()) {
      bool scalar = !v.is_object() && !v.is_array();
      if (!scalar) return value.dump();
      s += (s.empty() ? "" : ",") + k + "=" + cell_text(v);
    }
    return s;
  }
  return value.dump();
}

}  // namespace dfsim
