#include "sim/stats/placement_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace dfsim {

namespace {

double round6(double v) { return std::round(v * 1e6) / 1e6; }

// Per workload: the time during which some instance of it was ready but waiting for its unit
// while another workload's instance held that unit (between that one's start and end), in all
// and per other workload. Wall time (a union over its instances), counted from when they were
// ready (which may be before its first start), so at most its end time.
struct UnitWaits {
  Tick held_by_others = 0;
  std::vector<Tick> held_by;  // per other workload
};

Tick union_length(std::vector<std::pair<Tick, Tick>>& pieces) {
  std::sort(pieces.begin(), pieces.end());
  Tick total = 0, covered = 0;
  for (const auto& [b, e] : pieces) {
    const Tick from = std::max(b, covered);
    if (e > from) total += e - from;
    covered = std::max(covered, e);
  }
  return total;
}

std::vector<UnitWaits> unit_waits(std::size_t workloads, const std::vector<int>& task_workload, const Simulation& sim) {
  const auto& recs = sim.recorder().tasks();
  const ExpandedGraph& x = sim.expanded();
  auto workload_of = [&](std::size_t i) { return static_cast<std::size_t>(task_workload[static_cast<std::size_t>(x.instances[i].task)]); };
  auto end_of = [&](const TaskRecord& r) { return r.done ? r.end : r.start; };
  // Each unit's fired instances by start time, and its longest hold.
  std::map<const void*, std::vector<int>> by_unit;
  std::map<const void*, Tick> longest;
  for (std::size_t i = 0; i < x.instances.size(); ++i) {
    if (!recs[i].fired) continue;
    const void* u = sim.scheduler().unit_of(static_cast<int>(i));
    by_unit[u].push_back(static_cast<int>(i));
    longest[u] = std::max(longest[u], end_of(recs[i]) - recs[i].start);
  }
  for (auto& [u, v] : by_unit)
    std::stable_sort(v.begin(), v.end(), [&](int a, int b) { return recs[a].start < recs[b].start; });
  // pieces[w * workloads + o]: intervals an instance of w waited while one of o held its unit.
  std::vector<std::vector<std::pair<Tick, Tick>>> pieces(workloads * workloads);
  for (std::size_t i = 0; i < x.instances.size(); ++i) {
    const TaskRecord& r = recs[i];
    if (!r.fired || r.start <= r.ready) continue;
    const std::size_t w = workload_of(i);
    const void* u = sim.scheduler().unit_of(static_cast<int>(i));
    const std::vector<int>& on = by_unit[u];
    // The holders started before this one and ended after it became ready.
    auto it = std::lower_bound(on.begin(), on.end(), r.start, [&](int j, Tick t) { return recs[j].start < t; });
    while (it != on.begin()) {
      const TaskRecord& h = recs[*--it];
      if (h.start + longest[u] <= r.ready) break;
      const std::size_t o = workload_of(static_cast<std::size_t>(*it));
      const Tick b = std::max(h.start, r.ready), e = std::min(end_of(h), r.start);
      if (o != w && e > b) pieces[w * workloads + o].emplace_back(b, e);
    }
  }
  std::vector<UnitWaits> out(workloads);
  for (std::size_t w = 0; w < workloads; ++w) {
    std::vector<std::pair<Tick, Tick>> all;
    out[w].held_by.assign(workloads, 0);
    for (std::size_t o = 0; o < workloads; ++o) {
      auto& v = pieces[w * workloads + o];
      all.insert(all.end(), v.begin(), v.end());
      out[w].held_by[o] = union_length(v);
    }
    out[w].held_by_others = union_length(all);
  }
  return out;
}

}  // namespace

nlohmann::ordered_json placement_json(const Placement& p, const std::vector<int>& task_workload, const Simulation& sim,
                                      const std::vector<double>& solo_ns) {
  struct Span {
    Tick start = ~Tick(0), end = 0;
    std::uint64_t instances = 0;
  };
  std::vector<Span> spans(p.workloads.size());
  const auto& recs = sim.recorder().tasks();
  const ExpandedGraph& x = sim.expanded();
  for (std::size_t i = 0; i < x.instances.size(); ++i) {
    const TaskRecord& r = recs[i];
    if (!r.fired) continue;
    Span& s = spans[static_cast<std::size_t>(task_workload[static_cast<std::size_t>(x.instances[i].task)])];
    s.start = std::min(s.start, r.start);
    s.end = std::max(s.end, r.done ? r.end : r.start);
    ++s.instances;
  }
  const std::vector<UnitWaits> waits = unit_waits(p.workloads.size(), task_workload, sim);
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (std::size_t w = 0; w < spans.size(); ++w) {
    const PlacedWorkload& pw = p.workloads[w];
    const Span& s = spans[w];
    const Tick start = s.instances ? s.start : 0;
    nlohmann::ordered_json cores = nullptr;
    if (pw.core_count > 0) cores = {{"first", pw.first_core}, {"count", pw.core_count}};
    out.push_back({{"name", pw.name},
                   {"workload", pw.file},
                   {"cards", pw.cards},
                   {"cores", cores},
                   {"after", pw.after >= 0 ? p.workloads[static_cast<std::size_t>(pw.after)].name : ""},
                   {"not_before_ns", pw.start_ns},
                   {"start_ns", round6(ticks_to_ns(start))},
                   {"end_ns", round6(ticks_to_ns(s.end))},
                   {"duration_ns", round6(ticks_to_ns(s.end - start))},
                   {"instances_fired", s.instances}});
    nlohmann::ordered_json held_by = nlohmann::ordered_json::object();
    for (std::size_t o = 0; o < spans.size(); ++o)
      if (waits[w].held_by[o] > 0) held_by[p.workloads[o].name] = round6(ticks_to_ns(waits[w].held_by[o]));
    out.back()["held_by_others_ns"] = round6(ticks_to_ns(waits[w].held_by_others));
    out.back()["held_by"] = held_by;
    if (!solo_ns.empty()) {
      const double duration = out.back()["duration_ns"].get<double>(), solo = solo_ns[w];
      out.back()["solo_ns"] = solo;
      out.back()["slowdown"] = solo > 0 ? round6(duration / solo) : 1.0;
    }
  }
  return out;
}

std::string placement_text(const nlohmann::ordered_json& s) {
  if (!s.contains("placement")) return "";
  std::string out;
  for (const auto& w : s["placement"]) {
    std::string cards;
    for (const auto& c : w["cards"]) cards += fmt::format("{}{}", cards.empty() ? "" : ",", c.get<int>());
    if (w["cores"].is_object())
      cards += fmt::format(" cores {}..{}", w["cores"]["first"].get<int>(),
                           w["cores"]["first"].get<int>() + w["cores"]["count"].get<int>() - 1);
    std::string why;
    if (!w["after"].get<std::string>().empty()) why = "after " + w["after"].get<std::string>();
    if (w["not_before_ns"].get<double>() > 0)
      why += fmt::format("{}not before {:.3f} us", why.empty() ? "" : ", ", w["not_before_ns"].get<double>() / 1000);
    std::string alone;  // --solo
    if (w.contains("slowdown")) {
      const double pct = (w["slowdown"].get<double>() - 1) * 100;
      alone = fmt::format("; {} {:.1f} % against alone ({:.3f} us)", pct < 0 ? "gains" : "loses", std::abs(pct),
                          w["solo_ns"].get<double>() / 1000);
    }
    if (w.contains("held_by_others_ns") && w["held_by_others_ns"].get<double>() > 0) {
      std::string by;
      for (const auto& [name, ns] : w["held_by"].items())
        by += fmt::format("{}{} {:.3f}", by.empty() ? "" : ", ", name, ns.get<double>() / 1000);
      alone += fmt::format("; waited {:.3f} us on units others held ({})", w["held_by_others_ns"].get<double>() / 1000, by);
    }
    out += fmt::format("  workload  {:<16} cards {:<8} {:>12.3f} us from {:.3f} to {:.3f} us{}{}\n", w["name"].get<std::string>(),
                       cards, w["duration_ns"].get<double>() / 1000, w["start_ns"].get<double>() / 1000,
                       w["end_ns"].get<double>() / 1000, why.empty() ? "" : " (" + why + ")", alone);
  }
  return out;
}

}  // namespace dfsim
