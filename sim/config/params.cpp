// Param: type names, range text and checking of one value against its registration.
#include "sim/config/params.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/common/error.h"
#include "sim/common/names.h"

namespace dfsim {

namespace {

std::string num_text(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) return std::to_string(static_cast<std::int64_t>(v));
  std::ostringstream ss;
  ss << v;
  return ss.str();
}

std::string quoted_list(const std::vector<std::string>& xs) {
  std::string s;
  for (const auto& x : xs) s += (s.empty() ? "\"" : ", \"") + x + "\"";
  return s;
}

std::string hint(const std::string& word, const std::vector<std::string>& candidates) {
  std::string h = closest_match(word, candidates);
  return h.empty() ? std::string() : " (did you mean \"" + h + "\"?)";
}

}  // namespace

std::string Param::pointer() const {
  std::string p = "/" + path;
  std::replace(p.begin(), p.end(), '.', '/');
  return p;
}

std::string Param::type_name() const {
  switch (type) {
    case ParamType::Int: return "int";
    case ParamType::UInt64: return "uint64";
    case ParamType::Double: return "double";
    case ParamType::Bool: return "bool";
    case ParamType::String: return "string";
    case ParamType::DtypeIntMap: return "map<dtype,int>";
    case ParamType::StringDoubleMap: return "map<string,double>";
    case ParamType::IntList: return "list<int>";
  }
  return "?";
}

std::string Param::range_text() const {
  switch (type) {
    case ParamType::Int:
    case ParamType::UInt64:
    case ParamType::DtypeIntMap:
    case ParamType::IntList:
      if (int_max == std::numeric_limits<std::int64_t>::max())
        return int_min == 1 ? "> 0" : ">= " + std::to_string(int_min);
      return "in [" + std::to_string(int_min) + ", " + std::to_string(int_max) + "]";
    case ParamType::Double:
    case ParamType::StringDoubleMap: {
      if (std::isinf(num_max)) return fmt::format("{} {}", num_min_open ? ">" : ">=", num_text(num_min));
      return fmt::format("in {}{}, {}]", num_min_open ? "(" : "[", num_text(num_min), num_text(num_max));
    }
    case ParamType::String:
      if (choices.empty()) return "";
      {
        std::string s = "one of ";
        for (std::size_t i = 0; i < choices.size(); ++i) s += (i ? ", " : "") + choices[i];
        return s;
      }
    case ParamType::Bool: return "";
  }
  return "";
}

Json Param::default_value() const {
  static const ChipConfig defaults;
  return get(defaults);
}

void Param::check_map_value(const JsonView& v) const {
  if (type == ParamType::DtypeIntMap) {
    std::int64_t x = v.as_int();
    if (x < int_min || x > int_max) v.fail("expected an integer " + range_text() + ", got " + std::to_string(x));
    return;
  }
  if (!v.json().is_number()) v.fail("expected a number, got " + json_type_name(v.json()));
  double x = v.json().get<double>();
  bool low = num_min_open ? !(x > num_min) : !(x >= num_min);
  if (low || !(x <= num_max)) v.fail("expected a number " + range_text() + ", got " + num_text(x));
}

void Param::check(const JsonView& v) const {
  const Json& j = v.json();
  switch (type) {
    case ParamType::Int:
    case ParamType::UInt64: {
      std::int64_t x = v.as_int();
      if (x < int_min || x > int_max) v.fail("expected an integer " + range_text() + ", got " + std::to_string(x));
      return;
    }
    case ParamType::Double: check_map_value(v); return;
    case ParamType::Bool: v.as_bool(); return;
    case ParamType::String: {
      // A free string is the config's name: it names output directories (out/W-NAME). Empty
      // (the default) means the file's stem.
      std::string s = v.as_string();
      if (choices.empty() && !s.empty()) read_name(v, /*path_safe=*/true);
      if (!choices.empty() && std::find(choices.begin(), choices.end(), s) == choices.end())
        v.fail("expected one of " + quoted_list(choices) + ", got \"" + s + "\"" + hint(s, choices));
      return;
    }
    case ParamType::DtypeIntMap:
    case ParamType::StringDoubleMap:
      v.expect_object();
      for (const auto& [k, x] : j.items()) {
        if (std::find(choices.begin(), choices.end(), k) == choices.end())
          v.fail_at(k, "unknown key" + hint(k, choices) + ", expected one of " + quoted_list(choices));
        check_map_value(v.at(k));
      }
      return;
    case ParamType::IntList:
      v.expect_array();
      for (std::size_t i = 0; i < v.size(); ++i) {
        JsonView e = v.at(i);
        std::int64_t x = e.as_int();
        if (x < int_min || x > int_max) e.fail("expected an integer " + range_text() + ", got " + std::to_string(x));
      }
      return;
  }
}

}  // namespace dfsim
