#pragma once
// The parameter registry: every config parameter once, with its JSON path, type, default,
// unit, range and a one-line description (in the spirit of gem5 Params and SST's documented
// parameters). The loader, `dfsim info --params`, docs/config.md and the JSON Schema are all
// derived from it.
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "sim/common/json_io.h"
#include "sim/config/chip_config.h"

namespace dfsim {

enum class ParamType { Int, UInt64, Double, Bool, String, DtypeIntMap, StringDoubleMap, IntList };

// One registered parameter and how it maps to a ChipConfig field.
struct Param {
  std::string path;         // dotted, e.g. "core.pt.rows"
  ParamType type = ParamType::Int;
  std::string unit;         // "" for plain numbers and strings
  std::string description;  // one line
  // Integer range (Int, UInt64, DtypeIntMap values, IntList items).
  std::int64_t int_min = 0, int_max = std::numeric_limits<std::int64_t>::max();
  // Number range (Double, StringDoubleMap values); num_min excluded when num_min_open.
  double num_min = 0, num_max = std::numeric_limits<double>::infinity();
  bool num_min_open = true;
  std::vector<std::string> choices;  // String: allowed values (empty: any); maps: allowed keys
  // Read by the compiler alone (a compiled kernel graph already holds its effect): a --set of it
  // on a kernel graph is refused.
  bool compile_time = false;
  std::function<Json(const ChipConfig&)> get;         // field -> JSON
  std::function<void(ChipConfig&, const Json&)> set;  // checked JSON -> field

  std::string pointer() const;       // JSON pointer, e.g. "/core/pt/rows"
  std::string type_name() const;     // "int", "map<dtype,int>", ...
  std::string range_text() const;    // "in [1, 4096]", "> 0", "one of os, ws, is", ...
  Json default_value() const;        // the value in a default-constructed ChipConfig
  bool is_map() const { return type == ParamType::DtypeIntMap || type == ParamType::StringDoubleMap; }

  // Checks a whole value (type, range, choices, map keys); throws InputError at v's file/path.
  void check(const JsonView& v) const;
  // Checks one map entry's value (the key is checked by the caller).
  void check_map_value(const JsonView& v) const;
};

// All parameters, in documentation order.
const std::vector<Param>& chip_params();
// The parameter at a dotted path, or nullptr.
const Param* find_param(std::string_view dotted);
// Dotted paths of all parameters and of every map entry ("core.pt.simd.fp16"), for hints.
std::vector<std::string> param_paths_with_map_keys();
// Allows another value for a string parameter with choices (e.g. a memory model registering
// its name for "memory.impl"). Safe to call from static initialisers.
void add_param_choice(std::string_view dotted, const std::string& value);

// A nested object holding every parameter's default.
Json param_defaults();

// One row of the parameter table, all as text.
struct ParamRow {
  std::string path, type, default_text, unit, range, description;
};
std::vector<ParamRow> param_table();
// The table as Markdown (docs/config.md embeds it verbatim) and as aligned plain text.
std::string params_markdown();
std::string params_text();
// A JSON Schema (draft 2020-12) for config files (docs/schemas/dfsim.config.schema.json).
Json params_json_schema();

}  // namespace dfsim
