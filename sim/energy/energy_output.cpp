// The energy report as summary.json's "energy" section, the terminal line, the budget warning
// and the card's power counter.
#include <fmt/format.h>

#include "sim/energy/energy_report.h"

namespace dfsim {

namespace {

using OJson = nlohmann::ordered_json;

OJson components_json(const ComponentEnergy& c) {
  OJson j = OJson::object();
  for (std::size_t i = 0; i < kEnergyComponents; ++i) j[kEnergyComponentNames[i]] = c.j[i];
  return j;
}

// Joules in a readable unit.
std::string joules(double j) {
  if (j >= 1) return fmt::format("{:.3g} J", j);
  if (j >= 1e-3) return fmt::format("{:.3g} mJ", j * 1e3);
  if (j >= 1e-6) return fmt::format("{:.3g} uJ", j * 1e6);
  return fmt::format("{:.3g} nJ", j * 1e9);
}

// A simulated duration in a readable unit.
std::string duration(Tick t) {
  double ns = ticks_to_ns(t);
  if (ns >= 1e6) return fmt::format("{:g} ms", ns / 1e6);
  if (ns >= 1e3) return fmt::format("{:g} us", ns / 1e3);
  return fmt::format("{:g} ns", ns);
}

}  // namespace

OJson energy_json(const EnergyReport& e) {
  const EnergyCounts& n = e.counts;
  OJson s;
  s["total_j"] = e.total_j;
  s["average_w"] = e.average_w;
  s["peak_w"] = e.peak_w;
  s["peak_bucket_ns"] = ticks_to_ns(e.profile.bucket);
  s["static_w"] = e.static_w;
  s["by_component_j"] = components_json(e.by_component);
  s["biggest_component"] = kEnergyComponentNames[static_cast<std::size_t>(e.by_component.biggest())];
  s["dram_j"] = {{"read", e.dram.read_j}, {"write", e.dram.write_j}, {"activate", e.dram.activate_j}};
  s["static_j"] = {{"card", e.stat.card_j}, {"cores", e.stat.cores_j}, {"dram_refresh", e.stat.dram_refresh_j}};
  OJson macs = OJson::object(), sfp = OJson::object(), sfp32 = OJson::object();
  for (const auto& [d, v] : n.pt_macs) macs[std::string(dtype_name(d))] = v;
  for (const auto& [k, v] : n.sfp_elements) sfp[k] = v;
  for (const auto& [k, v] : n.sfp_fp32_elements) sfp32[k] = v;
  s["counts"] = {{"pt_macs", macs},
                 {"sfp_elements", sfp},
                 {"sfp_fp32_elements", sfp32},
                 {"lx_bytes_read", n.lx_bytes_read},
                 {"lx_bytes_written", n.lx_bytes_written},
                 {"dma_bytes", n.dma_bytes},
                 {"ring_byte_hops", n.ring_byte_hops},
                 {"dram_bytes_read", n.dram_bytes_read},
                 {"dram_bytes_written", n.dram_bytes_written},
                 {"dram_activates", n.dram_activates},
                 {"dram_refreshes", n.dram_refreshes},
                 {"pcie_bytes", n.pcie_bytes},
                 {"active_cores", n.active_cores}};
  s["budget"] = {{"power_budget_w", e.budget_w},
                 {"window_ns", ticks_to_ns(e.window)},
                 {"max_window_w", e.max_window_w},
                 {"max_window_start_ns", ticks_to_ns(e.max_window_start)},
                 {"exceeded", e.over_budget()}};
  OJson kernels = OJson::array();
  for (const KernelEnergy& k : e.kernels)
    kernels.push_back({{"name", k.name}, {"dynamic_j", k.j.total()}, {"by_component_j", components_json(k.j)}});
  s["kernels"] = kernels;
  return s;
}

std::string energy_text(const OJson& summary) {
  if (!summary.contains("energy")) return "";
  const auto& e = summary["energy"];
  double total = e["total_j"].get<double>();
  std::string big = e["biggest_component"].get<std::string>();
  double part = e["by_component_j"][big].get<double>();
  std::string per_token = e.contains("j_per_token") ? fmt::format("; {} per token, {:.1f} tokens/J",
                                                                  joules(e["j_per_token"].get<double>()),
                                                                  e["tokens_per_j"].get<double>())
                                                    : "";
  // Nothing spent (every energy.* coefficient 0) has no biggest part: it said "most in pt (0%)".
  std::string most = total > 0 ? fmt::format("; most in {} ({:.0f}%)", big, 100 * part / total) : "";
  return fmt::format("  energy    {}, {:.1f} W average, {:.1f} W peak{}{}\n", joules(total), e["average_w"].get<double>(),
                     e["peak_w"].get<double>(), most, per_token);
}

std::string power_budget_warning(const EnergyReport& e) {
  if (!e.over_budget()) return "";
  std::string over = e.window >= e.profile.end
                         ? fmt::format("over the whole run ({}, shorter than the {} window)", duration(e.profile.end),
                                       duration(e.window))
                         : fmt::format("over {} from {}", duration(e.window), duration(e.max_window_start));
  return fmt::format("dfsim: warning: card power averaged {} is {:.1f} W, above card.power_budget_w = {:g} W", over,
                     e.max_window_w, e.budget_w);
}

void record_power(Recorder& rec, const EnergyReport& e, int cards) {
  // The profile is the power of every card the run uses: named for them, not for card 0.
  rec.add_series(BucketSeries{cards > 1 ? "system" : "card 0", "power", "W", e.profile.watts()});
}

void add_energy_per_token(OJson& energy, std::uint64_t tokens) {
  double j = energy.value("total_j", 0.0);
  energy["j_per_token"] = tokens > 0 ? j / static_cast<double>(tokens) : 0.0;
  energy["tokens_per_j"] = j > 0 ? static_cast<double>(tokens) / j : 0.0;
}

}  // namespace dfsim
