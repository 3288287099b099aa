#pragma once
// Metrics of a run, named by their path in summary.json ("offchip.bytes_read",
// "units.by_kind.pt.mean_utilization"), a kernel's by its name, and tolerances to compare them.
#include <map>
#include <optional>
#include <string>

#include "sim/common/json_io.h"

namespace dfsim {

// The value at a dotted path of summary.json (array elements by index), or nullptr.
const Json* find_metric(const Json& summary, const std::string& dotted_path);
// The entry of `kernels` in summary.json named `name`, or nullptr.
const Json* find_kernel(const Json& summary, const std::string& name);

// The scalar leaves of summary.json by dotted path, outside "host" (wall-clock figures),
// "config_resolved", "kernels" and arrays (per-unit lists; their totals are compared).
std::map<std::string, Json> summary_scalars(const Json& summary);
// The scalar leaves of one kernel entry (busy_ns.dma, duration_ns, ...), without its name.
std::map<std::string, Json> kernel_scalars(const Json& kernel);

// How far a metric may move: a relative band (percent of the expected value), an absolute
// band, or none at all (exact; the only kind for strings and booleans).
struct Tolerance {
  enum class Kind { exact, relative_pct, absolute } kind = Kind::exact;
  double amount = 0;
  bool accepts(const Json& expected, const Json& got) const;
  std::string text() const;  // "exact", "±2 %", "±0.02"
};

// Printing: a JSON scalar (numbers with up to 6 significant digits beyond integers), and the
// signed change from `expected` to `got` ("+1.5 %", "+12", "" when not numeric).
std::string metric_text(const Json& v);
std::string delta_text(const Json& expected, const Json& got);

}  // namespace dfsim
