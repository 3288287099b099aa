// Reading a dfsim.suite file: every error names the file, the JSON path and what was expected.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "sim/common/error.h"
#include "sim/common/names.h"
#include "sim/gen/model_spec.h"
#include "sim/graph/op_graph.h"
#include "sim/regress/suite.h"
#include "sim/regress/write_file.h"
#include "sim/serve/serve_setup.h"
#include "sim/serve/step_table.h"
#include "sim/sweep/base_kinds.h"

namespace dfsim {

namespace fs = std::filesystem;

const char* check_name(Check c) {
  switch (c) {
    case Check::roofline: return "roofline";
    case Check::offchip_peak: return "offchip_peak";
    case Check::determinism: return "determinism";
  }
  return "";
}

namespace {

std::string resolve(const std::string& suite_file, const JsonView& v) {
  std::string p = v.as_string();
  if (p.empty()) v.fail("expected a file path, got an empty string");
  fs::path path = fs::path(p).is_absolute() ? fs::path(p) : fs::path(suite_file).parent_path() / p;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) v.fail(fmt::format("no such file: {}", path.lexically_normal().string()));
  return path.lexically_normal().string();
}

std::vector<std::string> read_sets(const JsonView& v) {
  v.expect_array();
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::string s = v.at(i).as_string();
    if (s.find('=') == std::string::npos || s.front() == '=')
      v.at(i).fail("expected key.path=value, got \"" + s + "\"");
    out.push_back(s);
  }
  return out;
}

std::map<std::string, std::int64_t> read_dims(const JsonView& v) {
  v.expect_object();
  std::map<std::string, std::int64_t> out;
  for (const auto& [k, val] : v.json().items()) {
    if (k.empty() || k.find_first_of(",= ") != std::string::npos) v.fail_at(k, "expected a dim name (B, M, N, K, d0, ...)");
    out[k] = v.at(k).as_int(1, 1 << 20);
  }
  return out;
}

CaseCompile read_compile(const JsonView& v) {
  v.expect_object();
  v.only_keys({"cores", "lx_planning", "fuse", "split", "tiles"});
  CaseCompile c;
  if (v.has("cores")) c.cores = static_cast<int>(v.at("cores").as_int(1, 4096));
  if (v.has("lx_planning")) {
    c.lx_planning = v.at("lx_planning").as_string();
    const auto& levels = lx_plannings();
    if (std::none_of(levels.begin(), levels.end(), [&](LxPlanning p) { return c.lx_planning == lx_planning_name(p); }))
      v.at("lx_planning").fail("expected " + lx_planning_names() + ", got \"" + c.lx_planning + "\"");
  }
  if (v.has("fuse")) c.fuse = v.at("fuse").as_bool();
  if (v.has("split")) c.split = read_dims(v.at("split"));
  if (v.has("tiles")) c.tiles = read_dims(v.at("tiles"));
  return c;
}

// The options of a serve case ("serve") or a gen case ("gen"): serve's flags or gen's, with '_'
// for '-', each checked as a sweep's base of that kind checks it (base_kinds.cpp). The files they
// name (a model file, step_table, requests, a hist: length distribution) are relative to the
// suite's directory.
Json read_base_options(const Suite& s, const JsonView& v, const std::string& kind_name) {
  v.expect_object();
  const BaseKind& kind = *find_base_kind(kind_name);
  Json given = v.json();
  for (const char* f : {"step_table", "requests"})
    if (v.has(f)) given[f] = resolve(s.file, v.at(f));
  if (v.has("model") && v.at("model").json().is_string() && is_model_path(v.at("model").as_string()))
    given["model"] = resolve(s.file, v.at("model"));
  for (const char* f : {"prompt_len", "output_len"})
    if (v.has(f) && v.at(f).json().is_string() && v.at(f).as_string().rfind("hist:", 0) == 0) {
      Json file = v.at(f).as_string().substr(5);
      given[f] = "hist:" + resolve(s.file, JsonView(file, s.file, v.at(f).path()));
    }
  JsonView g(given, s.file, v.path());
  // A gen case's compile options are its "compile" (as a workload case's); serve has no others.
  std::vector<std::string> names = kind.input_options;
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  Json out = Json::object();
  for (const auto& [key, _] : given.items()) {
    if (std::find(names.begin(), names.end(), key) == names.end()) {
      std::string hint = closest_match(key, names);
      v.fail_at(key, hint.empty() ? "unknown " + kind_name + " option; expected one of " + list
                                  : "unknown " + kind_name + " option (did you mean \"" + hint + "\"?)");
    }
    out[key] = kind.option(key)->check(g.at(key));
  }
  if (!out.contains("model")) v.fail("missing \"model\" (a name in workloads/models/ or a model file)");
  return out;
}

Json read_serve(const Suite& s, const JsonView& v) {
  Json out = read_base_options(s, v, "serve");
  if (out.contains("rate") == out.contains("requests"))
    v.fail("expected one of \"rate\" (requests per second, one number) and \"requests\" (a trace file)");
  return out;
}

// A gen case's step: as `dfsim gen` would take it (a decode step needs a context, a prefill
// tokens, the step must fit its model).
Json read_gen(const Suite& s, const JsonView& v) {
  Json out = read_base_options(s, v, "gen");
  if (!out.contains("phase")) v.fail("missing \"phase\" (\"decode\" or \"prefill\")");
  try {
    find_base_kind("gen")->check_point(out);
  } catch (const InputError& e) {  // the option at fault is the error's "file"
    const auto& names = find_base_kind("gen")->input_options;
    if (std::find(names.begin(), names.end(), e.file()) == names.end()) throw;  // a model file's own error
    if (v.has(e.file())) v.at(e.file()).fail(e.detail());
    v.fail(e.detail());
  }
  return out;
}

std::vector<Check> read_checks(const JsonView& v) {
  v.expect_array();
  std::vector<Check> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::string s = v.at(i).as_string();
    bool found = false;
    for (Check c : {Check::roofline, Check::offchip_peak, Check::determinism})
      if (s == check_name(c)) {
        if (std::find(out.begin(), out.end(), c) != out.end()) v.at(i).fail("check \"" + s + "\" given twice");
        out.push_back(c), found = true;
      }
    if (!found) v.at(i).fail("unknown check \"" + s + "\", expected roofline, offchip_peak or determinism");
  }
  return out;
}

// {"value": V, "relative_pct": R} | {"value": V, "absolute": A} | {"value": V, "exact": true}
Expectation read_expectation(const JsonView& v, const std::string& kernel, const std::string& metric) {
  v.expect_object();
  v.only_keys({"value", "relative_pct", "absolute", "exact"});
  Expectation e;
  e.kernel = kernel;
  e.metric = metric;
  e.json_path = v.path();
  if (metric.empty() || metric.front() == '.' || metric.back() == '.' || metric.find("..") != std::string::npos)
    v.fail("expected a dotted metric path such as \"offchip.bytes_read\"");
  JsonView val = v.at("value");
  if (!val.json().is_number() && !val.json().is_string() && !val.json().is_boolean())
    val.fail(fmt::format("expected a number, string or boolean, got {}", json_type_name(val.json())));
  e.expected = val.json();
  int kinds = v.has("relative_pct") + v.has("absolute") + v.has("exact");
  if (kinds != 1) v.fail("expected exactly one of relative_pct, absolute or exact");
  if (v.has("exact")) {
    if (!v.at("exact").as_bool()) v.at("exact").fail("expected true (use relative_pct or absolute for a band)");
    e.tolerance = {Tolerance::Kind::exact, 0};
  } else {
    if (!e.expected.is_number()) val.fail("a tolerance band needs a number; strings and booleans are exact");
    bool rel = v.has("relative_pct");
    e.tolerance = {rel ? Tolerance::Kind::relative_pct : Tolerance::Kind::absolute,
                   v.at(rel ? "relative_pct" : "absolute").as_number(0, 1e300)};
  }
  return e;
}

SuiteCase read_case(const Suite& s, const JsonView& v, const JsonView* defaults, std::set<std::string>& names) {
  v.expect_object();
  v.only_keys({"name", "description", "config", "workload", "gen", "serve", "set", "compile", "checks", "expect", "kernels"});
  SuiteCase c;
  c.json_path = v.path();
  c.name = read_name(v.at("name"));
  if (!names.insert(c.name).second) v.at("name").fail("duplicate case name \"" + c.name + "\"");
  auto pick = [&](std::string_view key) -> std::optional<JsonView> {
    if (v.has(key)) return v.at(key);
    if (defaults && defaults->has(key)) return defaults->at(key);
    return std::nullopt;
  };
  if (auto cfg = pick("config")) c.config = resolve(s.file, *cfg);
  else v.fail("missing \"config\" (in the case or in \"defaults\")");
  const int inputs = v.has("workload") + v.has("serve") + v.has("gen");
  if (inputs != 1)
    v.fail(inputs ? "expected one of \"workload\", \"gen\" and \"serve\", got more"
                  : "missing \"workload\" (an op graph or kernel graph), \"gen\" (a model step) or \"serve\" (a dfsim serve run)");
  if (v.has("workload")) c.workload = resolve(s.file, v.at("workload"));
  else if (v.has("gen")) c.gen = read_gen(s, v.at("gen"));
  else c.serve = read_serve(s, v.at("serve"));
  if (defaults && defaults->has("set")) c.sets = read_sets(defaults->at("set"));
  c.default_sets = c.sets.size();
  if (v.has("set"))
    for (auto& x : read_sets(v.at("set"))) c.sets.push_back(x);
  if (c.is_serve()) {  // the defaults' compile options and run checks are the workload cases'
    if (v.has("compile")) v.at("compile").fail("a serve case compiles whole model steps itself; compile options are for workload cases");
    if (v.has("kernels")) v.at("kernels").fail("a serve run has no kernels in its summary.json; expect its metrics under \"expect\"");
    if (v.has("checks")) {
      c.checks = read_checks(v.at("checks"));
      for (std::size_t i = 0; i < c.checks.size(); ++i)
        if (c.checks[i] != Check::determinism)
          v.at("checks").at(i).fail(fmt::format("{} checks a workload run; a serve case has only determinism", check_name(c.checks[i])));
    } else if (defaults && defaults->has("checks")) {
      for (Check ch : read_checks(defaults->at("checks")))
        if (ch == Check::determinism) c.checks.push_back(ch);
    }
    if (c.serve.contains("step_table")) {  // a config key the table makes inert: dfsim serve would refuse it
      try {
        serve::check_step_table_sets(c.sets, serve::read_step_table(c.serve["step_table"].get<std::string>()).has_energy());
      } catch (const InputError& e) {
        if (e.file() != "--set") throw;
        std::size_t i = 0;  // the first --set of that key: the defaults' or the case's own
        while (i + 1 < c.sets.size() && c.sets[i].substr(0, c.sets[i].find('=')) != e.path()) ++i;
        throw InputError(s.file, i < c.default_sets ? "/defaults/set/" + std::to_string(i)
                                                     : c.json_path + "/set/" + std::to_string(i - c.default_sets),
                         e.path() + ": " + e.detail());
      }
    }
  } else {
    if (auto comp = pick("compile")) c.compile = read_compile(*comp);
    if (auto ch = pick("checks")) c.checks = read_checks(*ch);
  }
  if (v.has("expect")) {
    JsonView ex = v.at("expect");
    ex.expect_object();
    for (const auto& [metric, val] : ex.json().items()) c.expect.push_back(read_expectation(ex.at(metric), "", metric));
  }
  if (v.has("kernels")) {
    JsonView ks = v.at("kernels");
    ks.expect_object();
    for (const auto& [kernel, val] : ks.json().items()) {
      JsonView k = ks.at(kernel);
      k.expect_object();
      for (const auto& [metric, mv] : k.json().items()) c.expect.push_back(read_expectation(k.at(metric), kernel, metric));
    }
  }
  return c;
}

}  // namespace

Suite load_suite(const std::string& file) {
  Json j = load_json_file(file);
  JsonView root(j, file);
  root.expect_format("dfsim.suite");
  root.only_keys({"format", "version", "name", "description", "defaults", "cases"});
  root.at("version").as_int(kSuiteVersion, kSuiteVersion);
  Suite s;
  s.file = file;
  s.name = read_name(root.at("name"));
  s.description = root.get_string("description", "");
  std::optional<JsonView> defaults;
  if (root.has("defaults")) {
    defaults = root.at("defaults");
    defaults->expect_object();
    defaults->only_keys({"config", "set", "compile", "checks"});
    // Checked here once, so an error points at the defaults rather than at a case.
    if (defaults->has("config")) resolve(file, defaults->at("config"));
    if (defaults->has("set")) read_sets(defaults->at("set"));
    if (defaults->has("compile")) read_compile(defaults->at("compile"));
    if (defaults->has("checks")) read_checks(defaults->at("checks"));
  }
  JsonView cases = root.at("cases");
  cases.expect_array();
  if (cases.size() == 0) cases.fail("the case list is empty");
  std::set<std::string> names;
  for (std::size_t i = 0; i < cases.size(); ++i)
    s.cases.push_back(read_case(s, cases.at(i), defaults ? &*defaults : nullptr, names));
  return s;
}

std::vector<std::string> case_run_args(const SuiteCase& c, const std::string& out_dir,
                                       const std::vector<std::string>& extra_sets, bool trace) {
  std::vector<std::string> a{c.subcommand(), "-q", "--config", c.config, "--out", out_dir};
  if (c.is_serve()) find_base_kind("serve")->input_args(c.serve, "", a);
  else a.insert(a.end(), {"--workload", c.workload});
  for (const auto& s : c.sets) a.insert(a.end(), {"--set", s});
  for (const auto& s : extra_sets) a.insert(a.end(), {"--set", s});
  a.insert(a.end(), {"--set", trace ? "sim.trace=true" : "sim.trace=false"});
  if (c.compile.cores > 0) a.insert(a.end(), {"--cores", std::to_string(c.compile.cores)});
  if (!c.compile.lx_planning.empty()) a.insert(a.end(), {"--lx-planning", c.compile.lx_planning});
  if (c.compile.fuse && !*c.compile.fuse) a.push_back("--no-fuse");
  auto dims = [](const std::map<std::string, std::int64_t>& m) {
    std::string s;
    for (const auto& [k, v] : m) s += (s.empty() ? "" : ",") + k + "=" + std::to_string(v);
    return s;
  };
  if (!c.compile.split.empty()) a.insert(a.end(), {"--split", dims(c.compile.split)});
  if (!c.compile.tiles.empty()) a.insert(a.end(), {"--tiles", dims(c.compile.tiles)});
  return a;
}

void update_suite_values(const std::string& file, const std::map<std::string, Json>& values) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  auto doc = nlohmann::ordered_json::parse(ss.str(), nullptr, true, /*ignore_comments=*/true);
  for (const auto& [path, v] : values) doc[nlohmann::ordered_json::json_pointer(path + "/value")] = v;
  write_file_atomically(file, doc.dump(2) + "\n", "--update");
}

}  // namespace dfsim
