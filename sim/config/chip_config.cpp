// load_chip_config: defaults <- extends chain <- file <- --set, checked, into a ChipConfig.
#include "sim/config/chip_config.h"

#include <filesystem>

#include "sim/common/error.h"
#include "sim/config/config_layers.h"
#include "sim/config/config_overrides.h"
#include "sim/config/config_validate.h"
#include "sim/config/params.h"

namespace dfsim {

std::string_view dataflow_name(Dataflow d) {
  switch (d) {
    case Dataflow::os: return "os";
    case Dataflow::ws: return "ws";
    case Dataflow::is: return "is";
  }
  return "?";
}

std::optional<Dataflow> dataflow_from_name(std::string_view s) {
  for (Dataflow d : {Dataflow::os, Dataflow::ws, Dataflow::is})
    if (dataflow_name(d) == s) return d;
  return std::nullopt;
}

bool ChipConfig::pt_supports(Dtype d) const {
  const bool configurable = d == Dtype::fp16 || d == Dtype::fp8 || d == Dtype::int8 || d == Dtype::int4;
  return !configurable || core.pt.simd.count(d) > 0;
}

double ChipConfig::pt_macs_per_cycle(Dtype d) const {
  auto it = core.pt.simd.find(d);
  if (it == core.pt.simd.end()) return 0;
  return static_cast<double>(core.corelets) * core.pt.rows * core.pt.cols * it->second;
}

double ChipConfig::peak_macs_per_ns(Dtype d) const { return pt_macs_per_cycle(d) * core.clock_mhz / 1000.0; }

double ChipConfig::compute_bound_ns(const std::map<Dtype, std::uint64_t>& macs, int cores, int cards) const {
  double ns = 0;
  for (const auto& [d, n] : macs) {
    const double peak = peak_macs_per_ns(d) * cores * cards;
    if (peak > 0) ns += static_cast<double>(n) / peak;
  }
  return ns;
}

double ChipConfig::memory_peak_gbps() const {
  return memory.channels * (memory.bus_bits / 8.0) * memory.data_rate_mtps / 1000.0;
}

double ChipConfig::ring_gbps_per_direction() const { return ring.bytes_per_cycle * core.clock_mhz / 1000.0; }

namespace {

// A --set of a parameter that only another memory model reads would change nothing: refused.
// (A config file may keep another model's block: a preset extended with another memory.impl.)
void check_overrides_apply(const ChipConfig& c, const std::vector<std::string>& overrides) {
  const std::string& impl = c.memory.impl;
  for (const auto& o : overrides) {
    const std::string key = o.substr(0, o.find('='));
    std::string needs;
    if (key == "memory.latency_cycles" || key == "memory.turnaround_cycles") needs = impl == "simple" ? "" : "simple";
    else if (key.rfind("memory.lpddr5.", 0) == 0) needs = impl == "simple" ? "lpddr5 or bandwidth" : "";
    else if (key == "sim.memory_lookahead_ns") needs = impl == "lpddr5" ? "" : "lpddr5";
    if (!needs.empty())
      throw InputError("--set", key, "read only by memory.impl " + needs + ", and this config's memory.impl is " + impl +
                                         ": it would change nothing");
  }
}

}  // namespace

ChipConfig load_chip_config(const std::string& file, const std::vector<std::string>& overrides) {
  Origins origins;
  Json layers = load_config_layers(file, origins);
  Json merged = param_defaults();
  merge_json(merged, layers);
  validate_config_tree(merged, origins, file);
  for (const auto& o : overrides) apply_override(merged, o, origins);

  ChipConfig c;
  for (const auto& p : chip_params()) p.set(c, merged.at(Json::json_pointer(p.pointer())));
  if (c.name.empty()) c.name = std::filesystem::path(file).stem().string();
  merged["name"] = c.name;
  check_config_relations(c, origins, file);
  check_overrides_apply(c, overrides);
  c.file = file;
  c.resolved = std::move(merged);
  return c;
}

}  // namespace dfsim
