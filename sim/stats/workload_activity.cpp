#include "sim/stats/workload_activity.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <utility>

namespace dfsim {

namespace {

// Where `w` waited, from the pieces it waited while workload o held its unit (pieces[o]):
// the time line cut at every piece's ends, each cut labelled with the workloads holding then,
// cuts with nobody dropped and touching cuts with the same label joined.
std::vector<WorkloadWait> waits_of(const std::vector<std::vector<std::pair<Tick, Tick>>>& pieces) {
  std::vector<std::pair<Tick, int>> edges;  // (time, +(o+1) opens / -(o+1) closes a piece of o)
  for (std::size_t o = 0; o < pieces.size(); ++o)
    for (const auto& [b, e] : pieces[o]) {
      edges.emplace_back(b, static_cast<int>(o) + 1);
      edges.emplace_back(e, -static_cast<int>(o) - 1);
    }
  std::sort(edges.begin(), edges.end());
  std::vector<int> open(pieces.size(), 0);
  std::vector<WorkloadWait> out;
  for (std::size_t i = 0; i < edges.size();) {
    const Tick t = edges[i].first;
    for (; i < edges.size() && edges[i].first == t; ++i)
      open[static_cast<std::size_t>(std::abs(edges[i].second) - 1)] += edges[i].second > 0 ? 1 : -1;
    if (i == edges.size()) break;
    std::vector<int> on;
    for (std::size_t o = 0; o < open.size(); ++o)
      if (open[o] > 0) on.push_back(static_cast<int>(o));
    if (on.empty()) continue;
    const Tick next = edges[i].first;
    if (!out.empty() && out.back().end == t && out.back().on == on)
      out.back().end = next;
    else
      out.push_back(WorkloadWait{t, next, std::move(on)});
  }
  return out;
}

}  // namespace

// A wait is counted from when the instance was ready (which may be before its workload's first
// start) to when it started, for the part during which another workload's instance held the
// unit (between that one's start and end): so at most the workload's end time.
std::vector<WorkloadActivity> workload_activity(std::size_t workloads, const std::vector<int>& task_workload,
                                                const Simulation& sim) {
  const auto& recs = sim.recorder().tasks();
  const ExpandedGraph& x = sim.expanded();
  auto workload_of = [&](std::size_t i) { return static_cast<std::size_t>(task_workload[static_cast<std::size_t>(x.instances[i].task)]); };
  auto end_of = [&](const TaskRecord& r) { return r.done ? r.end : r.start; };
  std::vector<WorkloadActivity> out(workloads);
  for (WorkloadActivity& a : out) a.start = ~Tick(0);
  // Each unit's fired instances by start time, and its longest hold.
  std::map<const void*, std::vector<int>> by_unit;
  std::map<const void*, Tick> longest;
  for (std::size_t i = 0; i < x.instances.size(); ++i) {
    const TaskRecord& r = recs[i];
    WorkloadActivity& a = out[workload_of(i)];
    if (!r.fired || !r.done) a.finished = false;
    if (!r.fired) continue;
    a.start = std::min(a.start, r.start);
    a.end = std::max(a.end, end_of(r));
    ++a.instances;
    const void* u = sim.scheduler().unit_of(static_cast<int>(i));
    by_unit[u].push_back(static_cast<int>(i));
    longest[u] = std::max(longest[u], end_of(r) - r.start);
  }
  for (WorkloadActivity& a : out)
    if (a.instances == 0) a.start = 0;
  for (auto& [u, v] : by_unit)
    std::stable_sort(v.begin(), v.end(), [&](int a, int b) { return recs[a].start < recs[b].start; });
  // pieces[w][o]: intervals an instance of w waited while one of o held its unit.
  std::vector<std::vector<std::vector<std::pair<Tick, Tick>>>> pieces(
      workloads, std::vector<std::vector<std::pair<Tick, Tick>>>(workloads));
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
      if (o != w && e > b) pieces[w][o].emplace_back(b, e);
    }
  }
  for (std::size_t w = 0; w < workloads; ++w) {
    WorkloadActivity& a = out[w];
    a.waits = waits_of(pieces[w]);
    a.held_by.assign(workloads, 0);
    for (const WorkloadWait& wt : a.waits) {
      a.held_by_others += wt.end - wt.begin;
      for (int o : wt.on) a.held_by[static_cast<std::size_t>(o)] += wt.end - wt.begin;
    }
  }
  return out;
}

}  // namespace dfsim
