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

// The per-core steps of every offset and target core of `t` relative to `prev` (one core on).
std::vector<std::int64_t> steps(const Task& prev, const Task& t) {
  std::vector<std::int64_t> out;
  auto add = [&](const std::vector<Access>& p, const std::vector<Access>& c) {
    for (std::size_t i = 0; i < p.size(); ++i) {
      out.push_back(c[i].offset.beta - p[i].offset.beta);
      if (p[i].core) out.push_back(c[i].core->beta - p[i].core->beta);
    }
  };
  add(prev.reads, t.reads);
  add(prev.writes, t.writes);
  return out;
}

// The template of instances [from, to): alpha from the steps, beta from the first.
Task fold(const std::vector<Task>& ts, std::size_t from, std::size_t to) {
  Task t = ts[from];
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
  std::stable_sort(tasks.begin(), tasks.end(), [](const Task& x, const Task& y) { return x.first_core < y.first_core; });
  std::vector<std::pair<std::size_t, std::size_t>> runs;
  std::size_t from = 0;
  while (from < tasks.size()) {
    std::size_t to = from + 1;
    std::vector<std::int64_t> step;
    while (to < tasks.size() && tasks[to].first_core == tasks[to - 1].first_core + 1 && same_kind(tasks[from], tasks[to])) {
      auto s = steps(tasks[to - 1], tasks[to]);
      if (to == from + 1) step = s;
      else if (s != step) break;
      ++to;
    }
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
