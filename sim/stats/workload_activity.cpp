#include "sim/stats/workload_activity.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <utility>

namespace dfsim {

namespace {

// A stretch of time one instance of a workload waited while an instance of workload `on` held its unit.
struct Piece {
  Tick begin, end;
  int on;
};

// Where a workload waited, from its pieces: the time line cut at every piece's ends, each cut
// labelled with the workloads holding then, cuts with nobody dropped and touching cuts with the
// same label joined. Linear in the pieces (times their log), not in the number of workloads.
std::vector<WorkloadWait> waits_of(const std::vector<Piece>& pieces) {
  std::vector<std::pair<Tick, int>> edges;  // (time, +(o+1) opens / -(o+1) closes a piece of o)
  edges.reserve(2 * pieces.size());
  for (const Piece& p : pieces) {
    edges.emplace_back(p.begin, p.on + 1);
    edges.emplace_back(p.end, -p.on - 1);
  }
  std::sort(edges.begin(), edges.end());
  std::map<int, int> open;  // the workloads holding now: how many of their pieces are open
  std::vector<WorkloadWait> out;
  std::vector<int> on;
  for (std::size_t i = 0; i < edges.size();) {
    const Tick t = edges[i].first;
    for (; i < edges.size() && edges[i].first == t; ++i) {
      const int o = std::abs(edges[i].second) - 1;
      if (edges[i].second > 0) ++open[o];
      else if (--open[o] == 0) open.erase(o);
    }
    if (i == edges.size()) break;
    if (open.empty()) continue;
    on.clear();
    for (const auto& [o, n] : open) on.push_back(o);
    const Tick next = edges[i].first;
    if (!out.empty() && out.back().end == t && out.back().on == on)
      out.back().end = next;
    else
      out.push_back(WorkloadWait{t, next, on});
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
  // pieces[w]: intervals an instance of w waited while one of another workload held its unit.
  std::vector<std::vector<Piece>> pieces(workloads);
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
      if (o != w && e > b) pieces[w].push_back(Piece{b, e, static_cast<int>(o)});
    }
  }
  for (std::size_t w = 0; w < workloads; ++w) {
    WorkloadActivity& a = out[w];
    a.waits = waits_of(pieces[w]);
    std::vector<Piece>().swap(pieces[w]);
    std::map<int, Tick> by;
    for (const WorkloadWait& wt : a.waits) {
      a.held_by_others += wt.end - wt.begin;
      for (int o : wt.on) by[o] += wt.end - wt.begin;
    }
    a.held_by.assign(by.begin(), by.end());
  }
  return out;
}

}  // namespace dfsim
