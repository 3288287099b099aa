#include "sim/sweep/sweep_plan.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/app/cli.h"
#include "sim/common/error.h"
#include "sim/common/text_file.h"
#include "sim/config/chip_config.h"
#include "sim/sweep/point_store.h"

namespace dfsim {

namespace fs = std::filesystem;

namespace {

// What a point's key hashes of an input file: a JSON file as parsed (comments and spacing do
// not change its answer), any other (a CSV step table) byte for byte. InputError if unreadable.
std::string file_content(const std::string& file) {
  if (fs::path(file).extension() == ".json") return load_json_file(file).dump();
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw InputError(file, "", "cannot be read");
  return text.str();
}

// The config overrides of a point: no trace (a sweep reads summaries), then the point's own.
std::vector<std::string> set_args(const Json& options) {
  std::vector<std::string> sets{"sim.trace=false"};
  if (options.contains("set"))
    for (const auto& [k, v] : options["set"].items()) sets.push_back(set_arg(k, v));
  return sets;
}

// Where the sweep file gives `option` to point `i`: its axis (or its entry of the point), else the base.
std::string option_path(const SweepSpec& spec, std::size_t i, const std::string& option) {
  for (std::size_t c = 0; c < spec.columns.size(); ++c)
    if (spec.columns[c].option == option && spec.rows[i][c])
      return spec.combine == "points" ? "/points/" + std::to_string(spec.numbers[i]) + "/" + option : "/axes/" + option;
  if (option == spec.kind->input) return "/base/" + option;  // a workload file
  std::string base = spec.kind->is_input_option(option) ? "/base/" + spec.kind->input : "/base";
  return spec.base_options.contains(option) ? base + "/" + option : base;
}

// Where the sweep file names input `file` of a point: the option holding its path (a workload,
// a step table, a request trace), else the model (a gen or serve step's model file).
std::string input_path(const SweepSpec& spec, std::size_t i, const Json& options, const std::string& file) {
  for (const auto& o : spec.kind->option_names())
    if (options.contains(o) && options[o] == file) return option_path(spec, i, o);
  return option_path(spec, i, file == spec.input ? spec.kind->input : "model");
}

// An input must be a file: a missing one or a directory makes the sweep file bad (exit 2),
// found here, before any point runs, not as a column of failed runs.
void check_input_file(const SweepSpec& spec, const std::string& where, const std::string& file) {
  std::error_code ec;
  auto st = fs::status(file, ec);
  if (!fs::exists(st)) throw InputError(spec.file, where, file + ": no such file");
  if (fs::is_directory(st)) throw InputError(spec.file, where, file + ": is a directory, expected a file");
}

// An input the subcommand would refuse (a workload with a cycle) makes the sweep file bad: its
// own error, after where the sweep names it, before any point runs.
void check_input_content(const SweepSpec& spec, const std::string& where, const std::string& file) {
  if (!spec.kind->check_input) return;
  try {
    spec.kind->check_input(file);
  } catch (const InputError& e) {
    throw InputError(spec.file, where, e.what());
  }
}

// A point's options that do not fit together (a gen step beyond its model): a bad sweep file.
void check_point(const SweepSpec& spec, std::size_t i, const Json& options) {
  if (!spec.kind->check_point) return;
  try {
    spec.kind->check_point(options);
  } catch (const InputError& e) {
    if (e.file() == "set") {  // a "set" key the point cannot use: where the sweep file gives it
      std::string where = "/base/set/" + e.path(), point;
      for (std::size_t c = 0; c < spec.columns.size(); ++c)
        if (spec.columns[c].option == "set" && spec.columns[c].set_key == e.path() && spec.rows[i][c]) {
          where = spec.combine == "points" ? "/points/" + std::to_string(spec.numbers[i]) + "/set/" + e.path()
                                           : "/axes/set/" + e.path();
          point = "point " + std::to_string(spec.numbers[i]) + ": ";
        }
      throw InputError(spec.file, where, point + e.detail());
    }
    if (!spec.kind->option(e.file())) throw;  // another file's own error
    std::string values;
    for (std::size_t c = 0; c < spec.columns.size(); ++c)
      if (spec.rows[i][c]) values += (values.empty() ? "" : ", ") + spec.columns[c].name + "=" + cell_text(*spec.rows[i][c]);
    std::string where = values.empty() ? "" : "point " + std::to_string(spec.numbers[i]) + " (" + values + "): ";
    throw InputError(spec.file, option_path(spec, i, e.file()), where + "\"" + e.file() + "\": " + e.detail());
  }
}

// A point's key with every whole number written one way: 1000.0 and 1000 (or -0.0 and 0) are the
// same clock, rate or count, so the same point (they made two keys, ran twice and wrote two rows).
void canonical_numbers(Json& j) {
  if (j.is_structured()) {
    for (auto& v : j) canonical_numbers(v);
  } else if (j.is_number_float()) {
    const double x = j.get<double>();
    if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 9007199254740992.0)  // below 2^53: exact
      j = static_cast<std::int64_t>(x);
  }
}

}  // namespace

SweepPlan plan_sweep(SweepSpec spec, const std::string& store) {
  SweepPlan plan;
  plan.store = fs::absolute(store).lexically_normal().string();
  // The base is checked once, up front: a bad one is a bad sweep file, not a column of failures.
  if (spec.config.empty()) spec.config = default_config_path();
  else check_input_file(spec, "/base/config", spec.config);
  try {
    load_chip_config(spec.config, set_args(spec.base_options));
  } catch (const InputError& e) {
    if (e.file() != "--set") throw;  // the config file's own error
    throw InputError(spec.file, "/base/set/" + e.path(), e.detail());
  }
  std::map<std::string, std::string> input_hashes;  // input file -> the hash of its content
  auto input_hash = [&](const std::string& file, const std::string& where) {
    auto [it, fresh] = input_hashes.emplace(file, "");
    if (fresh) {
      check_input_file(spec, where, file);
      check_input_content(spec, where, file);
      it->second = hash_hex(file_content(file));
    }
    return it->second;
  };
  if (!spec.input.empty()) input_hash(spec.input, "/base/" + spec.kind->input);
  // Every point's options are checked before any point's files or config are read, so that a
  // bad last point of many is refused at once (each point's work below is a config to resolve).
  std::vector<Json> point_opts;
  point_opts.reserve(spec.rows.size());
  for (std::size_t i = 0; i < spec.rows.size(); ++i) {
    point_opts.push_back(point_options(spec, spec.rows[i]));
    check_point(spec, i, point_opts.back());
  }
  // Points that share their overrides share the resolved config (or its error): read once.
  std::map<std::vector<std::string>, std::pair<Json, std::string>> resolved_by_sets;
  std::string cwd = fs::current_path().string();
  for (std::size_t i = 0; i < spec.rows.size(); ++i) {
    SweepPoint p;
    p.index = i;
    Json options = std::move(point_opts[i]);
    std::string hash;  // inputs first: a bad one is a bad sweep file even where a config is refused
    for (const auto& file : spec.kind->input_files(options, spec.input))
      hash += (hash.empty() ? "" : "+") + input_hash(file, input_path(spec, i, options, file));
    std::vector<std::string> sets = set_args(options);
    auto [cached, fresh] = resolved_by_sets.try_emplace(sets);
    if (fresh) {
      try {
        cached->second.first = load_chip_config(spec.config, sets).resolved;
      } catch (const InputError& e) {
        cached->second.second = e.what();
      }
    }
    if (!cached->second.second.empty()) {
      p.error = cached->second.second;
      plan.points.push_back(std::move(p));
      continue;
    }
    const Json& resolved = cached->second.first;
    std::vector<std::string> args{spec.kind->subcommand, "-q", "--config", spec.config};
    spec.kind->input_args(options, spec.input, args);
    for (const auto& s : sets) args.insert(args.end(), {"--set", s});
    Json key_options = Json::object();
    for (const auto& o : spec.kind->options) {
      if (!options.contains(o.name)) continue;
      if (o.to_args) o.to_args(options[o.name], args);
      if (options[o.name] != o.same_as_absent) key_options[o.name] = options[o.name];
    }
    Json key = {{"dfsim", DFSIM_VERSION},
                {"subcommand", spec.kind->subcommand},
                {"config", resolved},
                {"input_fnv64", hash},
                {"options", key_options}};
    canonical_numbers(key);
    p.id = hash_hex(key.dump());
    p.point = {{"key", key}, {"cwd", cwd}, {"args", args}};
    p.dir = point_dir(plan.store, p.id);
    plan.points.push_back(std::move(p));
  }
  plan.spec = std::move(spec);
  return plan;
}

}  // namespace dfsim
