// SPMD folding of per-core task instances (see spmd_merge.h).
#include "sim/compiler/spmd_merge.h"

#include <algorithm>

namespace dfsim {

namespace {

bool same_shape(const Access& a, const Access& b) {
  return a.buffer == b.buffer && a.bytes == b.bytes && a.rows == b.rows && a.stride == b.stride &&
         a.streaming == b.streaming && a.core.has_value() == b.core.has_value();
}

bool same_kind(const Task& a, const Task& b) {
  if (a.unit != b.unit || a.op != b.op || a.dtype != b.dtype || a.corelet != b.corelet || a.m != b.m || a.n != b.n ||
      a.k != b.k || a.elements != b.elements || a.reads.size() != b.reads.size() || a.writes.size() != b.writes.size())
    return false;
  for (std::size_t i = 0; i < a.reads.size(); ++i)
    if (!same_shape(a.reads[i], b.reads[i])) return false;
  for (std::size_t i = 0; i < a.writes.size(); ++i)
    if (!same_shape(a.writes[i], b.writes[i])) return false;
  return true;
}

// Whether `t` steps from `prev` (one core on) as `b` steps from `a`: every offset and target
// core of its accesses moves by the same amount. No list is built: a fold compares millions.
bool same_steps(const Task& a, const Task& b, const Task& prev, const Task& t) {
  auto same = [](const std::vector<Access>& a0, const std::vector<Access>& a1, const std::vector<Access>& p,
                 const std::vector<Access>& c) {
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (c[i].offset.beta - p[i].offset.beta != a1[i].offset.beta - a0[i].offset.beta) return false;
      if (p[i].core && c[i].core->beta - p[i].core->beta != a1[i].core->beta - a0[i].core->beta) return false;
    }
    return true;
  };
  return same(a.reads, b.reads, prev.reads, t.reads) && same(a.writes, b.writes, prev.writes, t.writes);
}

// The template of instances [from, to): alpha from the steps, beta from the first (moved out
// of `ts`, which is not read again).
Task fold(std::vector<Task>& ts, std::size_t from, std::size_t to) {
  Task t = std::move(ts[from]);
  // A template lives as long as the graph: no spare capacity (a million templates in a prefill).
  t.reads.shrink_to_fit();
  t.writes.shrink_to_fit();
  t.core_count = static_cast<int>(to - from);
  if (to - from < 2) return t;
  const Task& next = ts[from + 1];
  auto set = [&](std::vector<Access>& acc, const std::vector<Access>& n) {
    for (std::size_t i = 0; i < acc.size(); ++i) {
      std::int64_t step = n[i].offset.beta - acc[i].offset.beta;
      acc[i].offset = Affine{step, acc[i].offset.beta - step * t.first_core};
      if (acc[i].core) {
        std::int64_t cs = n[i].core->beta - acc[i].core->beta;
        acc[i].core = Affine{cs, acc[i].core->beta - cs * t.first_core};
      }
    }
  };
  set(t.reads, next.reads);
  set(t.writes, next.writes);
  return t;
}

}  // namespace

std::vector<Task> fold_core_tasks(std::vector<Task> tasks, const std::string& name) {
  auto by_core = [](const Task& x, const Task& y) { return x.first_core < y.first_core; };
  // Lowerings add a step's tasks core by core: sorting (which moves whole tasks) is rarely needed.
  if (!std::is_sorted(tasks.begin(), tasks.end(), by_core)) std::stable_sort(tasks.begin(), tasks.end(), by_core);
  std::vector<std::pair<std::size_t, std::size_t>> runs;
  std::size_t from = 0;
  while (from < tasks.size()) {
    std::size_t to = from + 1;
    while (to < tasks.size() && tasks[to].first_core == tasks[to - 1].first_core + 1 && same_kind(tasks[from], tasks[to]) &&
           (to == from + 1 || same_steps(tasks[from], tasks[from + 1], tasks[to - 1], tasks[to])))
      ++to;
    runs.emplace_back(from, to);
    from = to;
  }
  std::vector<Task> out;
  for (auto [f, t] : runs) {
    Task tpl = fold(tasks, f, t);
    tpl.name = runs.size() == 1 ? name : name + "/c" + std::to_string(tpl.first_core);
    out.push_back(std::move(tpl));
  }
  return out;
}

void CoreTasks::flush(GraphBuilder& b) {
  for (Task& t : fold_core_tasks(std::move(tasks_), name_)) b.add_task(std::move(t));
  tasks_.clear();
}

}  // namespace dfsim
