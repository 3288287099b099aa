#include "sim/stats/analysis.h"

#include <algorithm>

namespace dfsim {

double busy_imbalance(const Recorder& rec, const std::vector<int>& tracks, Tick from, Tick to) {
  const Tick w = rec.bucket();
  if (tracks.empty() || to <= from || w == 0) return 0.0;
  double most = 0, mean = 0;
  for (std::size_t b = from / w; b * w < to; ++b) {
    const Tick lo = std::max(from, b * w), hi = std::min(to, (b + 1) * w);
    const double weight = static_cast<double>(hi - lo) / static_cast<double>(w);
    Tick top = 0, sum = 0;
    for (int t : tracks) {
      const std::vector<Tick>& busy = rec.tracks()[static_cast<std::size_t>(t)].bucket_busy;
      const Tick v = b < busy.size() ? busy[b] : 0;
      top = std::max(top, v);
      sum += v;
    }
    most += weight * static_cast<double>(top);
    mean += weight * static_cast<double>(sum) / static_cast<double>(tracks.size());
  }
  return mean > 0 ? most / mean : 0.0;
}

std::uint64_t offchip_bytes_of(const KernelGraph& g, const TaskInstance& t) {
  const Task& task = g.tasks[t.task];
  if (task.unit != UnitKind::dma) return 0;
  std::uint64_t b = 0;
  for (const Region& r : reads_of(g, t))
    if (g.buffers[r.buffer].space == Space::hbm) b += r.total_bytes();
  for (const Region& r : writes_of(g, t))
    if (g.buffers[r.buffer].space == Space::hbm) b += r.total_bytes();
  return b;
}

std::uint64_t macs_of(const KernelGraph& g, const TaskInstance& t) {
  const Task& task = g.tasks[t.task];
  return task.unit == UnitKind::pt ? task.m * task.n * task.k : 0;
}

void add_macs_by_precision(const KernelGraph& g, const TaskInstance& t, std::map<Dtype, std::uint64_t>& out) {
  const Task& task = g.tasks[t.task];
  if (task.unit == UnitKind::pt) out[pt_operand_dtype(g, task)] += task.m * task.n * task.k;
}

std::vector<KernelBreakdown> kernel_breakdown(const KernelGraph& g, const ExpandedGraph& x, const Recorder& rec) {
  std::vector<KernelBreakdown> out(g.kernels.size());
  std::vector<bool> seen(g.kernels.size(), false);
  for (std::size_t k = 0; k < g.kernels.size(); ++k) out[k].name = g.kernels[k].name;
  for (std::size_t i = 0; i < x.instances.size(); ++i) {
    const TaskInstance& t = x.instances[i];
    const Task& task = g.tasks[t.task];
    if (task.kernel < 0) continue;
    const TaskRecord& r = rec.tasks()[i];
    if (!r.done) continue;  // a run stopped early: only completed instances count
    KernelBreakdown& kb = out[task.kernel];
    if (!seen[task.kernel]) {
      kb.start = r.start;
      kb.end = r.end;
      seen[task.kernel] = true;
    }
    kb.start = std::min(kb.start, r.start);
    kb.end = std::max(kb.end, r.end);
    ++kb.instances;
    kb.busy_by_unit[unit_name(task.unit)] += r.end - r.start;
    kb.waiting_for_lx += r.lx_wait;
    if (r.start >= r.ready + r.lx_wait) kb.waiting_for_unit += r.start - r.ready - r.lx_wait;  // unfired: start 0
    kb.offchip_bytes += offchip_bytes_of(g, t);
    kb.macs += macs_of(g, t);
    add_macs_by_precision(g, t, kb.macs_by_precision);
  }
  return out;
}

CriticalPath critical_path(const KernelGraph& g, const ExpandedGraph& x, const Recorder& rec) {
  CriticalPath cp;
  const auto& tasks = rec.tasks();
  if (tasks.empty()) return cp;
  // Instances of each unit (by track), ordered by end time.
  std::map<int, std::vector<int>> by_track;
  int last = 0;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    by_track[tasks[i].track].push_back(static_cast<int>(i));
    if (tasks[i].end > tasks[last].end) last = static_cast<int>(i);
  }
  for (auto& [track, v] : by_track)
    std::sort(v.begin(), v.end(), [&](int a, int b) { return tasks[a].end < tasks[b].end || (tasks[a].end == tasks[b].end && a < b); });

  cp.length = tasks[last].end;
  Tick covered = 0;
  std::vector<char> visited(tasks.size(), 0);
  for (int cur = last; cur >= 0 && !visited[cur];) {
    visited[cur] = 1;
    const TaskRecord& r = tasks[cur];
    cp.instances.push_back(cur);
    cp.busy_by_unit[unit_name(g.tasks[x.instances[cur].task].unit)] += r.end - r.start;
    covered += r.end - r.start;
    int prev = -1;
    if (r.start > r.ready) {
      // It waited for its unit (or LX): follow the task that last ran on the unit before it.
      const auto& v = by_track[r.track];
      auto it = std::upper_bound(v.begin(), v.end(), r.start, [&](Tick t, int i) { return t < tasks[i].end; });
      while (it != v.begin()) {
        --it;
        if (*it != cur && !visited[*it]) {
          prev = *it;
          break;
        }
      }
    }
    if (prev < 0) {
      Tick best = 0;
      for (int d : x.deps[static_cast<std::size_t>(cur)])
        if (prev < 0 || tasks[d].end > best) {
          best = tasks[d].end;
          prev = d;
        }
    }
    if (prev >= 0 && tasks[prev].end > r.start) prev = -1;  // guard against loops
    cur = prev;
  }
  std::reverse(cp.instances.begin(), cp.instances.end());
  cp.waiting = cp.length > covered ? cp.length - covered : 0;
  return cp;
}

}  // namespace dfsim
