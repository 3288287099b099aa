#pragma once
// The kinds of sweep base ("workload", a `gen` step, a `serve` run): which input a base
// names, which dfsim subcommand runs a point, and which options a sweep may fix in the base
// or vary along an axis. A new kind of base is one more row in base_kinds.cpp.
#include <string>
#include <string_view>
#include <vector>

#include "sim/common/json_io.h"

namespace dfsim {

// One option of a point ("cores", "split", ...): how a value is checked and passed on.
struct SweepOption {
  std::string name;
  // The value, checked and normalised (InputError naming the file and JSON path if bad).
  Json (*check)(const JsonView& value);
  // Appends the command-line arguments that give the subcommand this value.
  void (*to_args)(const Json& value, std::vector<std::string>& args);
  // The value that means the same as leaving the option out (kept out of a point's key, so
  // such points share results), or null.
  Json same_as_absent = Json();
};

struct BaseKind {
  std::string input;       // the member of "base" naming what every point runs: "workload", "gen", "serve"
  std::string subcommand;  // the dfsim subcommand that runs one point: "run", "serve"
  std::string metric_file; // what the subcommand writes that metrics are read from
  std::vector<SweepOption> options;  // besides "set" (config overrides), which every kind has
  // Empty: the input is a file path (a point may name another one). Else the input is an object
  // of these options (`"gen": {"model": ..., "batch": 1}`), each also an axis of its own.
  std::vector<std::string> input_options;
  // The arguments that give the subcommand a point's input, and the files whose content is part
  // of the point's key (a workload; the model file of a gen step; a serve step table).
  void (*input_args)(const Json& options, const std::string& input, std::vector<std::string>& args);
  std::vector<std::string> (*input_files)(const Json& options, const std::string& input);
  // Checks a point's options as a whole (a gen step must fit its model): InputError whose file
  // is the option at fault ("context"), or another file's own error. nullptr: nothing to check.
  void (*check_point)(const Json& options) = nullptr;
  // Reads a point's input file as the subcommand will, before any point runs (a workload's
  // format, names and dataflow): InputError naming that file. nullptr: only that it is a file.
  void (*check_input)(const std::string& file) = nullptr;

  const SweepOption* option(std::string_view name) const;
  bool is_input_option(std::string_view name) const;
  // What a point may vary: a file input itself (several workloads), "set" and the options.
  std::vector<std::string> option_names() const;
};

const std::vector<BaseKind>& base_kinds();
// The kind whose input is `input`, or nullptr.
const BaseKind* find_base_kind(std::string_view input);
// Inputs that later subcommands will add: named in errors, not yet runnable (none today).
const std::vector<std::string>& planned_base_inputs();

// A checked "set" value: any JSON scalar or object (a map parameter), never null or an array.
Json check_set_value(const JsonView& value);
// "key=value" for `dfsim ... --set`: strings JSON-quoted so that "1e3" stays a string.
std::string set_arg(const std::string& key, const Json& value);

// A value as shown in a results.csv cell: strings as they are, {"M": 4, "N": 8} as "M=4,N=8",
// anything else as compact JSON.
std::string cell_text(const Json& value);

}  // namespace dfsim
