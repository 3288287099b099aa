// Parsing and checking of `--set key.path=value`.
#include "sim/config/config_overrides.h"

#include <algorithm>

#include "sim/common/error.h"
#include "sim/common/json_io.h"
#include "sim/config/params.h"

namespace dfsim {

namespace {

constexpr const char* kSetFile = "--set";

// The value as JSON, else as a string. Through parse_json_text for its nesting limit: a
// suite's "set": ["k=[[[[..."] of a million brackets overflowed the stack (a crash). Errors
// of JSON that parsed this far (too deep, a key twice, a number beyond a double) stand.
Json parse_value(const std::string& key, const std::string& text) {
  try {
    return parse_json_text(text, kSetFile);
  } catch (const InputError& e) {
    // A number beyond a double (1e400) said "expected a number, got a string".
    for (const char* real : {"nested deeper", "duplicate key", "is out of range"})  // named at the key
      if (e.detail().find(real) != std::string::npos) throw InputError(kSetFile, key, e.path() + ": " + e.detail());
    return Json(text);
  }
}

std::string pointer_of(const std::string& dotted) {
  std::string p = "/" + dotted;
  std::replace(p.begin(), p.end(), '.', '/');
  return p;
}

[[noreturn]] void unknown(const std::string& key) {
  std::string prefix = key + ".";
  for (const auto& p : chip_params())
    if (p.path.compare(0, prefix.size(), prefix) == 0)
      throw InputError(kSetFile, key, "a group of parameters, not one; set a parameter such as \"" + p.path + "\"");
  std::string h = closest_match(key, param_paths_with_map_keys());
  throw InputError(kSetFile, key, "unknown parameter" + (h.empty() ? "" : " (did you mean \"" + h + "\"?)") +
                                      "; `dfsim info --params` lists them");
}

// One entry of a map parameter: the key must be allowed and the value in range.
void check_map_entry(const Param& map, const std::string& entry, const Json& value) {
  std::string key = map.path + "." + entry;
  if (std::find(map.choices.begin(), map.choices.end(), entry) == map.choices.end()) {
    std::string h = closest_match(entry, map.choices);
    throw InputError(kSetFile, key, "unknown key \"" + entry + "\" of " + map.path +
                                        (h.empty() ? "" : " (did you mean \"" + h + "\"?)"));
  }
  map.check_map_value(JsonView(value, kSetFile, key));
}

}  // namespace

void apply_override(Json& merged, const std::string& arg, Origins& origins) {
  auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(kSetFile, arg, "expected key.path=value, e.g. core.pt.rows=16");
  std::string key = arg.substr(0, eq), text = arg.substr(eq + 1);
  Json value = parse_value(key, text);

  if (const Param* p = find_param(key)) {
    if (p->type == ParamType::String && !value.is_string()) value = text;  // name=123 is a name
    if (p->is_map() && value.is_object()) {  // entries named by dotted keys in errors
      for (const auto& [k, x] : value.items()) check_map_entry(*p, k, x);
    }
    p->check(JsonView(value, kSetFile, key));
    merge_json(merged[Json::json_pointer(p->pointer())], value, p->pointer(), kSetFile, &origins);
    return;
  }
  auto dot = key.rfind('.');
  const Param* map = dot == std::string::npos ? nullptr : find_param(key.substr(0, dot));
  if (!map || !map->is_map()) unknown(key);
  check_map_entry(*map, key.substr(dot + 1), value);
  std::string ptr = pointer_of(key);
  merged[Json::json_pointer(ptr)] = value;
  origins.replace(ptr, value, kSetFile);
}

}  // namespace dfsim
