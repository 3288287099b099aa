#include "sim/regress/metrics.h"

#include <fmt/format.h>

#include <cmath>

#include "sim/common/json_path.h"

namespace dfsim {

namespace {

void collect(const Json& j, const std::string& path, std::map<std::string, Json>& out, bool top) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (top && (k == "host" || k == "config_resolved" || k == "kernels")) continue;
      collect(v, path.empty() ? k : path + "." + k, out, false);
    }
  } else if (!j.is_array() && !j.is_null()) {
    out[path] = j;
  }
}

}  // namespace

const Json* find_metric(const Json& summary, const std::string& dotted_path) {
  const Json* j = find_json_path(summary, dotted_path);
  return j && !j->is_structured() ? j : nullptr;
}

const Json* find_kernel(const Json& summary, const std::string& name) {
  auto it = summary.find("kernels");
  if (it == summary.end() || !it->is_array()) return nullptr;
  for (const auto& k : *it)
    if (k.value("name", "") == name) return &k;
  return nullptr;
}

std::map<std::string, Json> summary_scalars(const Json& summary) {
  std::map<std::string, Json> out;
  collect(summary, "", out, true);
  return out;
}

std::map<std::string, Json> kernel_scalars(const Json& kernel) {
  std::map<std::string, Json> out;
  collect(kernel, "", out, false);
  out.erase("name");
  return out;
}

bool Tolerance::accepts(const Json& expected, const Json& got) const {
  if (!expected.is_number() || !got.is_number()) return expected == got;
  double e = expected.get<double>(), g = got.get<double>();
  switch (kind) {
    case Kind::exact: return e == g;
    // A hair of slack so that a band's own edge passes despite binary rounding (0.52 - 0.5).
    case Kind::absolute: return std::fabs(g - e) <= amount * (1 + 1e-12) + 1e-300;
    case Kind::relative_pct: return std::fabs(g - e) <= std::fabs(e) * amount / 100.0 * (1 + 1e-12);
  }
  return false;
}

std::string Tolerance::text() const {
  switch (kind) {
    case Kind::exact: return "exact";
    case Kind::relative_pct: return fmt::format("±{:g} %", amount);
    case Kind::absolute: return fmt::format("±{:g}", amount);
  }
  return "";
}

std::string metric_text(const Json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (d == std::floor(d) && std::fabs(d) < 1e15) return fmt::format("{:.1f}", d);
    return fmt::format("{}", d);  // shortest text that reads back the same
  }
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string delta_text(const Json& expected, const Json& got) {
  if (!expected.is_number() || !got.is_number()) return expected == got ? "" : "changed";
  double e = expected.get<double>(), g = got.get<double>();
  if (e == g) return "0";
  if (e != 0) return fmt::format("{:+.2f} %", 100.0 * (g - e) / std::fabs(e));
  return fmt::format("{:+.6g}", g - e);
}

}  // namespace dfsim
