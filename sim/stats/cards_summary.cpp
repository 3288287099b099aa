#include "sim/stats/cards_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/chip/card.h"
#include "sim/stats/analysis.h"

namespace dfsim {

namespace {

using OJson = nlohmann::ordered_json;

double ns(Tick t) { return ticks_to_ns(t); }
double round6(double v) { return std::round(v * 1e6) / 1e6; }
double share(double a, double b) { return b > 0 ? round6(a / b) : 0.0; }

// Time covered by the union of the intervals (sorts them).
Tick covered(std::vector<std::pair<Tick, Tick>>& spans) {
  std::sort(spans.begin(), spans.end());
  Tick total = 0, reach = 0;
  for (auto [a, b] : spans) {
    a = std::max(a, reach);
    if (b > a) total += b - a;
    reach = std::max(reach, b);
  }
  return total;
}

}  // namespace

OJson cards_json(Simulation& sim, const RunResult& res) {
  const KernelGraph& g = sim.graph();
  const ExpandedGraph& x = sim.expanded();
  const auto& recs = sim.recorder().tasks();
  struct PerCard {
    Tick comm = 0, collective = 0, last = 0;
    std::uint64_t macs = 0, offchip = 0;
    std::vector<std::pair<Tick, Tick>> link_spans, collective_spans;
  };
  std::vector<PerCard> per(static_cast<std::size_t>(sim.system().cards()));
  for (std::size_t i = 0; i < x.instances.size(); ++i) {
    const TaskInstance& t = x.instances[i];
    const TaskRecord& r = recs[i];
    PerCard& p = per[static_cast<std::size_t>(t.card)];
    p.macs += macs_of(g, t);
    p.offchip += offchip_bytes_of(g, t);
    if (!r.done) continue;
    p.last = std::max(p.last, r.end);
    // Collectives waiting for their groups may overlap on a card's port: count the time once.
    if (g.tasks[t.task].unit == UnitKind::link) {
      p.link_spans.emplace_back(r.start, r.end);
      const std::string& op = g.tasks[t.task].op;
      if (op != "from_host" && op != "to_host") p.collective_spans.emplace_back(r.start, r.end);
    }
  }
  for (PerCard& p : per) {
    p.comm = covered(p.link_spans);
    p.collective = covered(p.collective_spans);
  }
  OJson out = OJson::array();
  for (std::size_t c = 0; c < per.size(); ++c) {
    const MemStats& m = sim.system().card(static_cast<int>(c)).memory().stats();
    out.push_back({{"card", c},
                   {"offchip_bytes_read", m.bytes_read},
                   {"offchip_bytes_written", m.bytes_written},
                   {"graph_offchip_bytes", per[c].offchip},
                   {"macs", per[c].macs},
                   {"last_task_end_ns", round6(ns(per[c].last))},
                   {"communication_ns", round6(ns(per[c].comm))},
                   {"collective_ns", round6(ns(per[c].collective))},
                   {"communication_share", share(static_cast<double>(per[c].comm), static_cast<double>(res.end))}});
  }
  return out;
}

OJson pcie_json(Simulation& sim, const RunResult& res) {
  const PcieFabric& f = sim.system().fabric();
  const Recorder& rec = sim.recorder();
  OJson links = OJson::array();
  for (const auto& l : f.links()) {
    Tick busy = rec.tracks()[static_cast<std::size_t>(l.res.track())].busy;
    links.push_back({{"link", l.name}, {"bytes", l.bytes}, {"busy_ns", round6(ns(busy))},
                     {"utilization", share(static_cast<double>(busy), static_cast<double>(res.end))}});
  }
  return {{"bytes_sent", f.bytes_sent()},
          {"reduced_elements", sim.system().collectives().reduced_elements()},
          {"links", links}};
}

std::string cards_text(const OJson& s) {
  if (!s.contains("cards")) return "";  // one card that moved nothing over PCIe
  std::string busiest;
  double top = -1;
  for (const auto& l : s["pcie"]["links"])
    if (l["utilization"].get<double>() > top) {
      top = l["utilization"].get<double>();
      busiest = l["link"].get<std::string>();
    }
  double comm = 0;
  for (const auto& c : s["cards"]) comm = std::max(comm, c["communication_share"].get<double>());
  return fmt::format("  pcie      {:.2f} MiB sent, busiest link {} {:.0f}%; communication up to {:.1f}% of the run on a card\n",
                     s["pcie"]["bytes_sent"].get<double>() / (1 << 20), busiest, 100 * top, 100 * comm);
}

}  // namespace dfsim
