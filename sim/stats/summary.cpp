#include "sim/stats/summary.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <map>

#include "models/chip/card.h"
#include "sim/energy/energy_report.h"
#include "sim/stats/analysis.h"
#include "sim/stats/cards_summary.h"
#include "sim/stats/model_report.h"

namespace dfsim {

namespace {

using OJson = nlohmann::ordered_json;

double ns(Tick t) { return ticks_to_ns(t); }
double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }
double round6(double v) { return std::round(v * 1e6) / 1e6; }

const char* status_name(RunResult::Status s) {
  switch (s) {
    case RunResult::Status::finished: return "finished";
    case RunResult::Status::deadlock: return "deadlock";
    case RunResult::Status::limit: return "limit";
    case RunResult::Status::interrupted: return "interrupted";
  }
  return "?";
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

OJson units_json(const Recorder& rec, Tick end) {
  OJson list = OJson::array();
  std::map<std::string, std::pair<Tick, int>> by_kind;
  for (const Track& t : rec.tracks()) {
    if (t.items == 0) continue;
    list.push_back({{"unit", t.group + "/" + t.name}, {"kind", t.kind}, {"busy_ns", round6(ns(t.busy))},
                    {"utilization", round6(ratio(t.busy, end))}, {"items", t.items}});
    by_kind[t.kind].first += t.busy;
    by_kind[t.kind].second += 1;
  }
  OJson kinds = OJson::object();
  for (auto& [k, v] : by_kind)
    kinds[k] = {{"units", v.second}, {"busy_ns", round6(ns(v.first))},
                {"mean_utilization", round6(ratio(static_cast<double>(v.first), static_cast<double>(end) * v.second))}};
  return {{"by_kind", kinds}, {"units", list}};
}

// The DRAM channel tracks of each card (by group: "memory", "card 1 memory", ...).
std::vector<std::vector<int>> channel_tracks(const Recorder& rec) {
  std::map<std::string, std::vector<int>> by_group;
  for (std::size_t i = 0; i < rec.tracks().size(); ++i)
    if (rec.tracks()[i].kind == "dram") by_group[rec.tracks()[i].group].push_back(static_cast<int>(i));
  std::vector<std::vector<int>> out;
  for (auto& [g, t] : by_group) out.push_back(std::move(t));
  return out;
}

// busy_imbalance of the DRAM channels over [from, to): the least even card's.
double channel_imbalance(const Recorder& rec, const std::vector<std::vector<int>>& cards, Tick from, Tick to) {
  double most = 0;
  for (const std::vector<int>& c : cards) most = std::max(most, busy_imbalance(rec, c, from, to));
  return most;
}

OJson busy_map(const std::map<std::string, Tick>& m) {
  OJson j = OJson::object();
  for (auto& [k, v] : m) j[k] = round6(ns(v));
  return j;
}

}  // namespace

OJson make_summary(Simulation& sim, const RunResult& res, const RunInfo& info) {
  const KernelGraph& g = sim.graph();
  const ExpandedGraph& x = sim.expanded();
  const ChipConfig& cfg = sim.config();
  const Recorder& rec = sim.recorder();
  Card& card = sim.system().card();
  Tick end = res.end;
  ClockDomain core_clk(cfg.core.clock_mhz);

  OJson s;
  s["format"] = "dfsim.summary";
  s["version"] = 1;
  s["dfsim_version"] = DFSIM_VERSION;
  s["workload"] = {{"name", g.name}, {"file", info.workload_file}, {"format", info.workload_format}};
  s["config"] = {{"name", cfg.name}, {"file", info.config_file}};
  s["status"] = status_name(res.status);
  if (!res.ok()) {
    s["partial"] = true;
    s["reason"] = res.reason;
    s["blocked"] = res.blocked;
  }
  s["sim_time_ns"] = round6(ns(end));
  s["cycles"] = core_clk.to_cycles(end);
  s["cores_used"] = g.cores;
  if (g.cards > 1) s["cards_used"] = g.cards;

  // Tasks.
  std::map<std::string, std::uint64_t> by_unit;
  std::uint64_t macs = 0, dma_hbm = 0;
  // The roofline's work: every instance's, or in a partial run the completed ones' (the whole
  // graph's bytes over a run stopped early put it "at 13981 %" of its roofline).
  std::uint64_t roof_macs = 0, roof_bytes = 0;
  std::map<Dtype, std::uint64_t> macs_by_precision;
  for (std::size_t i = 0; i < x.instances.size(); ++i) {
    const TaskInstance& t = x.instances[i];
    ++by_unit[unit_name(g.tasks[t.task].unit)];
    macs += macs_of(g, t);
    dma_hbm += offchip_bytes_of(g, t);
    if (res.ok() || rec.tasks()[i].done) {
      roof_macs += macs_of(g, t);
      roof_bytes += offchip_bytes_of(g, t);
      add_macs_by_precision(g, t, macs_by_precision);
    }
  }
  s["tasks"] = {{"templates", g.tasks.size()}, {"instances", x.instances.size()}, {"by_unit", by_unit}};
  // What the PCIe ports' DMAs streamed through the cards' memories for collectives and host
  // transfers: memory work of the graph that no DMA task counts.
  const std::vector<PcieFabric::KernelTraffic>& traffic = sim.system().fabric().kernel_traffic();
  std::uint64_t link_read = 0, link_written = 0;
  for (const auto& k : traffic) {
    link_read += k.memory_read;
    link_written += k.memory_written;
  }
  const std::uint64_t link_bytes = link_read + link_written;
  roof_bytes += link_bytes;

  // Off-chip memory: every card's (the channels listed are card 0's).
  MemStats ms;
  for (int k = 0; k < sim.system().cards(); ++k) {
    const MemStats& m = sim.system().card(k).memory().stats();
    ms.bytes_read += m.bytes_read;
    ms.bytes_written += m.bytes_written;
    ms.turnarounds += m.turnarounds;
  }
  double peak_gbps = cfg.memory_peak_gbps() * g.cards;
  const std::vector<std::vector<int>> dram_tracks = channel_tracks(rec);
  OJson chans = OJson::array();
  MemStats rows;  // row-buffer totals over the channels
  for (int k = 0; k < sim.system().cards(); ++k) {
    for (const MemStats& c : sim.system().card(k).memory().channel_stats()) {
      rows.row_hits += c.row_hits;
      rows.row_misses += c.row_misses;
      rows.row_conflicts += c.row_conflicts;
      rows.refreshes += c.refreshes;
      if (k > 0) continue;
      chans.push_back({{"bytes_read", c.bytes_read}, {"bytes_written", c.bytes_written}, {"turnarounds", c.turnarounds},
                       {"row_hits", c.row_hits}, {"row_misses", c.row_misses}, {"row_conflicts", c.row_conflicts},
                       {"refreshes", c.refreshes}, {"max_queue", c.max_queue}});
    }
  }
  std::uint64_t activations = rows.row_misses + rows.row_conflicts;
  std::uint64_t bytes_read = ms.bytes_read, bytes_written = ms.bytes_written;
  if (cfg.memory.ideal) {  // no burst reaches the memory model: count what the DMAs moved
    DmaStats moved;
    for (int k = 0; k < sim.system().cards(); ++k)
      for (int c = 0; c < card.cores(); ++c) moved += sim.system().card(k).core(c).dma_stats();
    bytes_read = moved.hbm_to_lx + moved.hbm_to_hbm + link_read;
    bytes_written = moved.lx_to_hbm + moved.hbm_to_hbm + link_written;
  }
  s["offchip"] = {{"bytes_read", bytes_read},
                  {"bytes_written", bytes_written},
                  {"graph_bytes", dma_hbm},
                  {"link_bytes", link_bytes},
                  {"achieved_gbps", round6(ratio(static_cast<double>(bytes_read + bytes_written), ns(end)))},
                  {"peak_gbps", round6(peak_gbps)},
                  {"turnarounds", ms.turnarounds},
                  {"row_hits", rows.row_hits},
                  {"row_misses", rows.row_misses},
                  {"row_conflicts", rows.row_conflicts},
                  {"row_hit_rate", round6(ratio(static_cast<double>(rows.row_hits),
                                                static_cast<double>(rows.row_hits + activations)))},
                  {"refreshes", rows.refreshes},
                  {"channel_imbalance", round6(channel_imbalance(rec, dram_tracks, 0, end))},
                  {"ideal", cfg.memory.ideal},
                  {"channels", chans}};

  // Compute.
  // Each precision's MACs at its own peak: an fp8 or int4 matmul at the fp16 peak was "at 129 %"
  // (239 %) of its roofline.
  double peak_macs = cfg.peak_macs_per_ns(Dtype::fp16) * g.cores * g.cards;
  double mac_ns = cfg.compute_bound_ns(macs_by_precision, g.cores, g.cards);
  s["compute"] = {{"macs", macs},
                  {"achieved_macs_per_ns", round6(ratio(static_cast<double>(roof_macs), ns(end)))},
                  {"peak_macs_per_ns_fp16", round6(peak_macs)},
                  {"peak_macs_per_ns", round6(mac_ns > 0 ? static_cast<double>(roof_macs) / mac_ns : peak_macs)}};

  // Roofline: the run can be no faster than its bytes at peak bandwidth, its MACs at peak rate,
  // or the bytes of its busiest PCIe link at that link's nominal rate (a graph of collectives
  // alone moves nothing the first two count).
  double mem_ns = cfg.memory.ideal ? 0.0 : ratio(static_cast<double>(roof_bytes), peak_gbps);
  double pcie_ns = 0;
  for (const auto& l : sim.system().fabric().links())
    pcie_ns = std::max(pcie_ns, ratio(static_cast<double>(l.bytes), l.nominal_gbps));
  double bound = std::max({mem_ns, mac_ns, pcie_ns});
  s["roofline"] = {{"memory_bound_ns", round6(mem_ns)},
                   {"compute_bound_ns", round6(mac_ns)},
                   {"pcie_bound_ns", round6(pcie_ns)},
                   {"bound_by", pcie_ns > std::max(mem_ns, mac_ns) ? "pcie" : mem_ns >= mac_ns ? "memory" : "compute"},
                   {"fraction_of_roofline", round6(ratio(bound, ns(end)))}};

  s["units"] = units_json(rec, end);

  // LX, DMA, ring.
  OJson peaks = OJson::array();
  std::uint64_t peak_max = 0;
  for (int k = 0; k < sim.system().cards(); ++k)  // card by card
    for (int c = 0; c < g.cores; ++c) {
      peaks.push_back(sim.system().card(k).core(c).lx().peak());
      peak_max = std::max(peak_max, sim.system().card(k).core(c).lx().peak());
    }
  s["lx"] = {{"usable_bytes_per_core", cfg.core.lx.usable_bytes}, {"peak_bytes_max", peak_max}, {"peak_bytes_per_core", peaks}};
  DmaStats d;
  std::uint64_t ring_bytes = 0;
  for (int k = 0; k < sim.system().cards(); ++k) {
    for (int c = 0; c < card.cores(); ++c) d += sim.system().card(k).core(c).dma_stats();
    ring_bytes += sim.system().card(k).ring().bytes_carried();
  }
  s["dma"] = {{"hbm_to_lx_bytes", d.hbm_to_lx}, {"lx_to_hbm_bytes", d.lx_to_hbm}, {"lx_to_lx_bytes", d.lx_to_lx},
              {"hbm_to_hbm_bytes", d.hbm_to_hbm}, {"bursts", d.bursts}, {"sticks", d.sticks},
              {"multicast_extra_bytes", d.multicast_extra},
              {"mean_burst_latency_ns", round6(d.bursts ? ns(d.burst_time) / static_cast<double>(d.bursts) : 0.0)},
              {"max_outstanding", d.max_outstanding}};
  // Little's law: bursts in flight on average while a DMA queue is busy.
  if (s.contains("units") && s["units"]["by_kind"].contains("dma")) {
    double busy = s["units"]["by_kind"]["dma"]["busy_ns"].get<double>();
    s["dma"]["mean_outstanding"] = round6(busy > 0 ? ns(d.burst_time) / busy : 0.0);
  }
  s["ring"] = {{"bytes_carried", ring_bytes}};
  if (g.cards > 1 || sim.system().fabric().bytes_sent() > 0) s["cards"] = cards_json(sim, res);
  s["pcie"] = pcie_json(sim, res);  // always: sweeps compare its bytes across cards
  s["energy"] = energy_json(info.energy ? *info.energy : compute_energy(sim, res));

  // Where the time went.
  OJson kernels = OJson::array();
  Tick lx_wait = 0, unit_wait = 0;
  std::vector<KernelBreakdown> breakdown = kernel_breakdown(g, x, rec);
  for (std::size_t k = 0; k < traffic.size() && k < breakdown.size(); ++k) {
    breakdown[k].link_bytes = traffic[k].memory_read + traffic[k].memory_written;
    breakdown[k].pcie_bytes = traffic[k].sent;
    breakdown[k].pcie_link_bytes = traffic[k].link_bytes;
  }
  const bool any_pcie = sim.system().fabric().bytes_sent() > 0;
  for (const KernelBreakdown& k : breakdown) {
    lx_wait += k.waiting_for_lx;
    unit_wait += k.waiting_for_unit;
    kernels.push_back({{"name", k.name}, {"start_ns", round6(ns(k.start))}, {"end_ns", round6(ns(k.end))},
                       {"duration_ns", round6(ns(k.end - k.start))}, {"instances", k.instances},
                       {"busy_ns", busy_map(k.busy_by_unit)}, {"waiting_for_lx_ns", round6(ns(k.waiting_for_lx))},
                       {"waiting_for_unit_ns", round6(ns(k.waiting_for_unit))}, {"offchip_bytes", k.offchip_bytes},
                       {"macs", k.macs},
                       {"dram_channel_imbalance", round6(channel_imbalance(rec, dram_tracks, k.start, k.end))}});
    if (any_pcie) {  // a run that crossed PCIe: every kernel says what it put there
      kernels.back()["link_bytes"] = k.link_bytes;
      kernels.back()["pcie_bytes"] = k.pcie_bytes;
    }
  }
  s["kernels"] = kernels;
  s["stalls"] = {{"waiting_for_lx_ns", round6(ns(lx_wait))}, {"waiting_for_unit_ns", round6(ns(unit_wait))}};
  if (res.ok()) {
    CriticalPath cp = critical_path(g, x, rec);
    OJson tail = OJson::array();
    std::size_t from = cp.instances.size() > 8 ? cp.instances.size() - 8 : 0;
    for (std::size_t i = from; i < cp.instances.size(); ++i) {
      const TaskInstance& t = x.instances[cp.instances[i]];
      tail.push_back(fmt::format("{} (core {})", g.tasks[t.task].name, t.core));
    }
    s["critical_path"] = {{"length_ns", round6(ns(cp.length))}, {"instances", cp.instances.size()},
                          {"busy_ns", busy_map(cp.busy_by_unit)}, {"waiting_ns", round6(ns(cp.waiting))},
                          {"last_tasks", tail}};
  }
  if (g.model && res.ok()) {
    std::vector<double> link_gbps;
    for (const auto& l : sim.system().fabric().links()) link_gbps.push_back(l.nominal_gbps);
    s["model"] = model_report_json(g, x, breakdown, end, cfg, link_gbps);
    const ModelStep& m = *g.model;
    add_energy_per_token(s["energy"], static_cast<std::uint64_t>(m.batch * (m.decode() ? 1 : m.tokens)));
  }
  s["config_resolved"] = cfg.resolved;
  double wall = res.wall_seconds;
  s["host"] = {{"wall_seconds", wall},
               {"events", res.activations},
               {"events_per_second", ratio(static_cast<double>(res.activations), wall)},
               {"sim_cycles_per_host_second", ratio(static_cast<double>(core_clk.to_cycles(end)), wall)},
               {"peak_rss_mib", peak_rss_mib()}};
  return s;
}

std::string summary_text(const OJson& s) {
  std::string out;
  int cores = s["cores_used"].get<int>();
  std::string cards = s.contains("cards_used") ? fmt::format(" x {} cards", s["cards_used"].get<int>()) : "";
  out += fmt::format("{} on {}: {}  {:.3f} us  ({} cycles, {} core{}{})\n", s["workload"]["name"].get<std::string>(),
                     s["config"]["name"].get<std::string>(), s["status"].get<std::string>(),
                     s["sim_time_ns"].get<double>() / 1000.0, s["cycles"].get<std::uint64_t>(), cores,
                     cores == 1 ? "" : "s", cards);
  const auto& off = s["offchip"];
  out += fmt::format("  off-chip  {:.1f} MiB read, {:.1f} MiB written, {:.1f} GB/s of {:.1f} peak\n",
                     off["bytes_read"].get<double>() / (1 << 20), off["bytes_written"].get<double>() / (1 << 20),
                     off["achieved_gbps"].get<double>(), off["peak_gbps"].get<double>());
  // Channels that take turns instead of sharing the work (a stride that meets one channel at a
  // time): named with the kernel, among those moving 5 % of the bytes or more, where it is worst.
  if (off.contains("channel_imbalance") && off["channel_imbalance"].get<double>() >= 1.5) {
    std::string worst;
    double most = 0;
    const double bytes = off["graph_bytes"].get<double>();
    for (const auto& k : s["kernels"])
      if (k["offchip_bytes"].get<double>() >= 0.05 * bytes && k["dram_channel_imbalance"].get<double>() > most) {
        most = k["dram_channel_imbalance"].get<double>();
        worst = k["name"].get<std::string>();
      }
    out += fmt::format("            channels uneven: the busiest carries {:.1f}x their mean at a time{}\n",
                       off["channel_imbalance"].get<double>(),
                       worst.empty() ? "" : fmt::format(" (most in {}, {:.1f}x)", worst, most));
  }
  const auto& c = s["compute"];
  if (c["macs"].get<std::uint64_t>() > 0)
    out += fmt::format("  compute   {:.3g} MACs, {:.1f} MAC/ns of {:.1f} peak\n", c["macs"].get<double>(),
                       c["achieved_macs_per_ns"].get<double>(), c["peak_macs_per_ns"].get<double>());
  const auto& r = s["roofline"];
  if (s["offchip"]["ideal"].get<bool>() && c["macs"].get<std::uint64_t>() == 0 &&
      r["pcie_bound_ns"].get<double>() == 0)
    out += "  roofline  none: ideal memory takes no time and the graph has no MACs\n";
  else
    out += fmt::format("  roofline  {}-bound, run is at {:.0f}% of its roofline\n", r["bound_by"].get<std::string>(),
                       100 * r["fraction_of_roofline"].get<double>());
  // Two DMA queues per core are shown apart: a saturated inbound queue averaged with an idle
  // outbound one would read as half busy. Likewise the ring's links apart from its memory ports
  // (a few ports, each the way in or out of a half of the cores): the busiest port of each
  // direction, since a run bound by one port's requests would read as a quiet ring.
  std::map<std::string, std::pair<double, int>> dma_queues;  // "in" / "out": utilization sum, units
  std::pair<double, int> links{0.0, 0};                      // ring links: utilization sum, units
  std::map<std::string, double> ports;                       // "rd" / "wr": the busiest port's utilization
  for (const auto& u : s["units"]["units"]) {
    const std::string name = u["unit"].get<std::string>();
    const double busy = u["utilization"].get<double>();
    if (u["kind"] == "dma") {
      for (std::string q : {"in", "out"})
        if (name.ends_with("/dma " + q)) {
          dma_queues[q].first += busy;
          dma_queues[q].second += 1;
        }
    } else if (u["kind"] == "ring") {
      const bool port = name.find("/mem port ") != std::string::npos;
      if (port && (name.ends_with(" rd") || name.ends_with(" wr"))) {
        double& most = ports[name.substr(name.size() - 2)];
        most = std::max(most, busy);
      } else if (!port) {
        links.first += busy;
        links.second += 1;
      }
    }
  }
  std::string kinds;
  for (auto& [k, v] : s["units"]["by_kind"].items()) {
    if (k == "dma" && !dma_queues.empty()) {
      kinds += "  dma";
      for (const auto& [q, u] : dma_queues) kinds += fmt::format(" {} {:.0f}%", q, 100 * u.first / u.second);
      continue;
    }
    if (k == "ring" && !ports.empty()) {
      kinds += fmt::format("  ring {:.0f}%  port", links.second ? 100 * links.first / links.second : 0.0);
      for (const auto& [d, u] : ports) kinds += fmt::format(" {} {:.0f}%", d, 100 * u);
      continue;
    }
    kinds += fmt::format("  {} {:.0f}%", k, 100 * v["mean_utilization"].get<double>());
  }
  out += "  busy     " + kinds + "\n";
  const auto& d = s["dma"];
  if (d["bursts"].get<std::uint64_t>() > 0 && d.contains("mean_outstanding")) {
    // Near the cap, the queues wait on the memory's latency rather than on their issue rate.
    int cap = s["config_resolved"]["core"]["dma"]["max_outstanding"].get<int>();
    out += fmt::format("  dma       {:.1f} of {} bursts in flight per busy queue, {:.0f} ns from issue to LX or DRAM\n",
                       d["mean_outstanding"].get<double>(), cap, d["mean_burst_latency_ns"].get<double>());
  }
  out += cards_text(s);
  out += energy_text(s);
  if (s.contains("critical_path")) {
    std::string parts;
    for (auto& [k, v] : s["critical_path"]["busy_ns"].items()) parts += fmt::format("  {} {:.1f} us", k, v.get<double>() / 1000);
    out += fmt::format("  critical path{}  waiting {:.1f} us\n", parts,
                       s["critical_path"]["waiting_ns"].get<double>() / 1000);
  }
  out += model_report_text(s);
  return out;
}

}  // namespace dfsim
