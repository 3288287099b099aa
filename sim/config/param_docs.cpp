// Renderings of the parameter registry: the table (Markdown, plain text) and a JSON Schema.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/config/params.h"

namespace dfsim {

namespace {

std::string cell(std::string s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

Json schema_number(double v) {
  if (std::floor(v) == v && std::fabs(v) < 9e15) return static_cast<std::int64_t>(v);
  return v;
}

Json int_schema(const Param& p) {
  Json s = {{"type", "integer"}, {"minimum", p.int_min}};
  if (p.int_max != std::numeric_limits<std::int64_t>::max()) s["maximum"] = p.int_max;
  return s;
}

Json number_schema(const Param& p) {
  Json s = {{"type", "number"}};
  s[p.num_min_open ? "exclusiveMinimum" : "minimum"] = schema_number(p.num_min);
  if (!std::isinf(p.num_max)) s["maximum"] = schema_number(p.num_max);
  return s;
}

Json value_schema(const Param& p) {
  switch (p.type) {
    case ParamType::Int:
    case ParamType::UInt64: return int_schema(p);
    case ParamType::Double: return number_schema(p);
    case ParamType::Bool: return {{"type", "boolean"}};
    case ParamType::String: {
      Json s = {{"type", "string"}};
      if (!p.choices.empty()) s["enum"] = p.choices;
      return s;
    }
    case ParamType::DtypeIntMap:
    case ParamType::StringDoubleMap: {
      Json props = Json::object();
      for (const auto& k : p.choices) props[k] = p.type == ParamType::DtypeIntMap ? int_schema(p) : number_schema(p);
      return {{"type", "object"}, {"properties", props}, {"additionalProperties", false}};
    }
    case ParamType::IntList: return {{"type", "array"}, {"items", int_schema(p)}};
  }
  return Json::object();
}

// The object schema at a dotted group path ("" = top level), created on first use.
Json& group_schema(Json& root, const std::string& parent_path) {
  Json* node = &root;
  std::stringstream ss(parent_path);
  std::string part;
  while (std::getline(ss, part, '.')) {
    Json& child = (*node)["properties"][part];
    if (child.is_null())
      child = {{"type", "object"}, {"additionalProperties", false}, {"properties", Json::object()}};
    node = &child;
  }
  return *node;
}

}  // namespace

std::vector<ParamRow> param_table() {
  std::vector<ParamRow> rows;
  for (const auto& p : chip_params())
    rows.push_back({p.path, p.type_name(), p.default_value().dump(), p.unit, p.range_text(),
                    p.compile_time ? p.description + " (compile time: a compiled kernel graph already holds it)"
                                   : p.description});
  return rows;
}

std::string params_markdown() {
  std::string s = "| Parameter | Type | Default | Unit | Range | Description |\n|---|---|---|---|---|---|\n";
  for (const auto& r : param_table()) {
    s += "| `" + r.path + "` | `" + r.type + "` | `" + cell(r.default_text) + "` | " + cell(r.unit) + " | " +
         cell(r.range) + " | " + cell(r.description) + " |\n";
  }
  return s;
}

std::string params_text() {
  auto rows = param_table();
  std::size_t w_path = 9, w_type = 4, w_unit = 4;
  for (const auto& r : rows) {
    w_path = std::max(w_path, r.path.size());
    w_type = std::max(w_type, r.type.size());
    w_unit = std::max(w_unit, r.unit.size());
  }
  auto pad = [](const std::string& s, std::size_t w) { return s + std::string(w - std::min(w, s.size()) + 2, ' '); };
  std::string s = pad("parameter", w_path) + pad("type", w_type) + pad("unit", w_unit) + "default; range; description\n";
  for (const auto& r : rows) {
    s += pad(r.path, w_path) + pad(r.type, w_type) + pad(r.unit, w_unit) + r.default_text;
    if (!r.range.empty()) s += "; " + r.range;
    s += "; " + r.description + "\n";
  }
  return s;
}

Json params_json_schema() {
  Json root = {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
               {"$id", "dfsim.config.schema.json"},
               {"title", "dfsim chip config"},
               {"description", "Hardware and simulation parameters of a dfsim chip (docs/config.md). "
                               "Generated from the parameter registry (sim/config/param_registry.cpp)."},
               {"type", "object"},
               {"additionalProperties", false},
               {"properties",
                {{"$schema", {{"type", "string"}, {"description", "JSON Schema of this file (ignored)"}}},
                 {"description", {{"type", "string"}, {"description", "free text (ignored)"}}},
                 {"extends",
                  {{"type", "string"},
                   {"description", "parent config, relative to this file's folder; this file's values win"}}}}}};
  for (const auto& p : chip_params()) {
    auto dot = p.path.rfind('.');
    std::string parent = dot == std::string::npos ? "" : p.path.substr(0, dot);
    std::string leaf = dot == std::string::npos ? p.path : p.path.substr(dot + 1);
    Json s = value_schema(p);
    s["description"] = p.description + (p.unit.empty() ? "" : " [" + p.unit + "]");
    s["default"] = p.default_value();
    group_schema(root, parent)["properties"][leaf] = s;
  }
  return root;
}

}  // namespace dfsim
