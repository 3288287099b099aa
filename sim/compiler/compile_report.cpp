// The compile report (see compile_report.h): per kernel what was decided, bytes and bounds.
#include "sim/compiler/compile_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "models/pcie/collective_schedule.h"
#include "models/pcie/pcie_fabric.h"
#include "sim/config/chip_config.h"
#include "sim/graph/kernel_graph.h"

namespace dfsim {

KernelReport& CompileReport::kernel(const std::string& name) {
  for (auto& k : kernels)
    if (k.kernel == name) return k;
  kernels.push_back(KernelReport{});
  kernels.back().kernel = name;
  return kernels.back();
}

namespace {

// A buffer of one coarse-loop iteration ("<kernel>/i3/sum") under the name of them all
// ("<kernel>/i*/sum"), so that a loop of many iterations is one line of the report.
std::string iterations_as_one(const std::string& name) {
  for (std::size_t at = name.find("/i"); at != std::string::npos; at = name.find("/i", at + 1)) {
    std::size_t end = at + 2;
    while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
    if (end > at + 2 && end < name.size() && name[end] == '/') return name.substr(0, at + 2) + "*" + name.substr(end);
  }
  return name;
}

// Adds what a link task (a collective, a host transfer) puts on each PCIe link, indexed as
// PcieFabric::links(): the steps the collective engine plays, routed as the fabric routes them.
// (The graph is checked and fits the system by now: a link task's accesses, algorithm and cards.)
void add_link_bytes(const KernelGraph& g, const Task& t, const ChipConfig& chip, std::vector<std::uint64_t>& links) {
  const std::vector<int> group = g.cards_of(t);
  auto send = [&](int src, int dst, std::uint64_t bytes) {
    for (std::size_t l : pcie_route(chip.system.cards, chip.system.cards_per_drawer, src, dst)) links[l] += bytes;
  };
  if (t.op == "from_host" || t.op == "to_host") {
    const bool in = t.op == "from_host";
    const std::uint64_t bytes = (in ? t.writes : t.reads)[0].total_bytes();
    for (int c : group) send(in ? PcieFabric::kHost : c, in ? c : PcieFabric::kHost, bytes);
    return;
  }
  // The full tensor: the gathered output of an all_gather, the input otherwise (as the engine).
  const std::uint64_t bytes = (t.op == "all_gather" ? t.writes : t.reads)[0].total_bytes();
  for (const CollectiveStep& step : collective_steps(t.op, t.algorithm, static_cast<int>(group.size()), bytes, t.root))
    for (const CollectiveTransfer& x : step)
      send(group[static_cast<std::size_t>(x.src)], group[static_cast<std::size_t>(x.dst)], x.bytes);
}

}  // namespace

void CompileReport::measure(const KernelGraph& g, const ChipConfig& chip) {
  std::vector<KernelReport> ordered;
  std::unordered_map<int, std::string> shown;  // an HBM buffer's name in the report, on first use
  for (const Kernel& k : g.kernels) {
    KernelReport r = kernel(k.name);
    r.offchip_bytes.clear();
    r.macs = 0;
    std::uint64_t bytes = 0, sfp_elements = 0;
    std::map<Dtype, std::uint64_t> macs;  // by the precision the PT runs them in
    std::vector<std::uint64_t> link_bytes(static_cast<std::size_t>(2 * chip.system.cards + 2 * chip.system.drawers()), 0);
    for (int ti : k.tasks) {
      const Task& t = g.tasks[static_cast<std::size_t>(ti)];
      const auto n = static_cast<std::uint64_t>(t.core_count);
      if (t.unit == UnitKind::link) add_link_bytes(g, t, chip, link_bytes);
      if (t.unit == UnitKind::pt) {
        r.macs += t.m * t.n * t.k * n;
        macs[pt_operand_dtype(g, t)] += t.m * t.n * t.k * n;
      }
      if (t.unit == UnitKind::sfp) sfp_elements += t.elements * n;
      if (t.unit != UnitKind::dma) continue;
      for (const auto* side : {&t.reads, &t.writes})
        for (const Access& a : *side) {
          const Buffer& b = g.buffers[static_cast<std::size_t>(a.buffer)];
          if (b.space != Space::hbm) continue;
          auto [name, fresh] = shown.try_emplace(a.buffer);
          if (fresh) name->second = iterations_as_one(b.name);
          r.offchip_bytes[name->second] += a.total_bytes() * n;
          bytes += a.total_bytes() * n;
        }
    }
    // Each precision at its own peak; with no MACs 0 (0 / 0 was NaN, null in explain, when the
    // PT lacks fp16).
    const double compute = chip.compute_bound_ns(macs, g.cores);
    const double sfp = static_cast<double>(sfp_elements) /
                       (chip.core.sfp.lanes * chip.core.corelets * chip.core.clock_mhz / 1000.0 * g.cores);
    const double memory = static_cast<double>(bytes) / chip.memory_peak_gbps();
    double pcie = 0;  // the busiest link's bytes at its nominal rate, as the summary's roofline
    for (std::size_t l = 0; l < link_bytes.size(); ++l)
      pcie = std::max(pcie, static_cast<double>(link_bytes[l]) /
                                (pcie_is_uplink(chip.system.cards, l) ? chip.system.pcie.uplink_gbps : chip.system.pcie.link_gbps));
    r.roofline_ns = std::max({compute, sfp, memory, pcie});
    r.bound = pcie > 0 && r.roofline_ns == pcie ? "pcie"
              : r.roofline_ns == memory         ? "memory"
              : r.roofline_ns == compute        ? "compute (PT)"
                                                : "compute (SFP)";
    ordered.push_back(std::move(r));
  }
  kernels = std::move(ordered);
}

Json CompileReport::to_json() const {
  Json out = Json::array();
  for (const KernelReport& k : kernels) {
    Json j = {{"kernel", k.kernel},           {"ops", k.ops},           {"split", k.split},
              {"why", k.why},                 {"loops", k.loops},       {"lx_resident", k.lx_resident},
              {"sharing", k.sharing},         {"layout", k.layout},     {"macs", k.macs},
              {"roofline_ns", k.roofline_ns}, {"bound", k.bound},       {"estimate_ns", k.estimate_ns},
              {"warnings", k.warnings}};
    Json bytes = Json::object();
    for (const auto& [b, n] : k.offchip_bytes) bytes[b] = n;
    j["offchip_bytes"] = bytes;
    Json terms = Json::object();
    for (const auto& [t, ns] : k.estimate_terms_ns) terms[t] = ns;
    j["estimate_terms_ns"] = terms;
    out.push_back(j);
  }
  return out;
}

std::string CompileReport::text() const {
  std::string s;
  for (const KernelReport& k : kernels) {
    s += fmt::format("kernel {}\n", k.kernel);
    if (!k.ops.empty()) {
      s += "  ops:";
      for (const auto& o : k.ops) s += "  " + o;
      s += "\n";
    }
    if (!k.split.empty()) s += fmt::format("  split: {}\n", k.split);
    if (!k.why.empty()) s += fmt::format("  why: {}\n", k.why);
    for (const auto& l : k.loops) s += fmt::format("  loop: {}\n", l);
    for (const auto& l : k.lx_resident) s += fmt::format("  in LX: {}\n", l);
    if (!k.sharing.empty()) s += fmt::format("  sharing: {}\n", k.sharing);
    if (!k.layout.empty()) s += fmt::format("  layout: {}\n", k.layout);
    for (const auto& [b, n] : k.offchip_bytes) s += fmt::format("  off-chip {}: {} bytes\n", b, n);
    std::string terms;
    for (const auto& [t, ns] : k.estimate_terms_ns) terms += fmt::format("{}{} {:.1f}", terms.empty() ? " (" : ", ", t, ns / 1000.0);
    if (!terms.empty()) terms += ")";
    s += fmt::format("  roofline: {:.1f} us ({} bound){}\n", k.roofline_ns / 1000.0, k.bound,
                     k.estimate_ns > 0 ? fmt::format(", compiler estimate {:.1f} us{}", k.estimate_ns / 1000.0, terms) : "");
    for (const auto& w : k.warnings) s += fmt::format("  warning: {}\n", w);
  }
  return s;
}

}  // namespace dfsim
