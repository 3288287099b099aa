// Scheduler::check_takeovers: refuses, before the run, a kernel graph whose LX takeovers
// (Buffer::after) can never be served, instead of letting it deadlock at run time.
//
// A waits-for graph over two kinds of node: "instance i completes" and "LX buffer b gets its
// space". i waits for its dependencies and for the space of every LX buffer it writes; b waits
// for the buffer before it in its core's program order (under program-order allocation) and,
// when it takes over buffer a, for every instance that reads or writes a (a is freed only when
// they are all done). Every edge is a condition that must hold first, so a cycle is a run that
// can never finish. Edges that are an "any of" (a buffer gets space once *some* writer asks for
// it) are left out, and a preloaded buffer has its space from the start: the check only ever
// refuses a graph that would surely deadlock.
#include <algorithm>
#include <string>
#include <vector>

#include "sim/common/error.h"
#include "sim/runtime/scheduler.h"

namespace dfsim {

void Scheduler::check_takeovers() const {
  if (after_.empty()) return;
  const std::size_t n = x_.instances.size(), nb = lxbufs_.size();
  // The instances that use each taken-over buffer (reads or writes), as compressed rows.
  std::vector<char> taken(nb, 0);
  for (int a : after_)
    if (a >= 0) taken[static_cast<std::size_t>(a)] = 1;
  std::vector<std::uint32_t> start(nb + 1, 0);
  auto for_each_use = [&](auto&& f) {
    for (std::size_t i = 0; i < n; ++i) {
      for (int b : reads_lx_[i])
        if (taken[static_cast<std::size_t>(b)]) f(b, static_cast<int>(i));
      for (int b : writes_lx_[i])  // (a buffer both read and written counts twice: harmless)
        if (taken[static_cast<std::size_t>(b)]) f(b, static_cast<int>(i));
    }
  };
  for_each_use([&](int b, int) { ++start[static_cast<std::size_t>(b) + 1]; });
  for (std::size_t b = 0; b < nb; ++b) start[b + 1] += start[b];
  std::vector<int> users(start[nb]);
  std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
  for_each_use([&](int b, int i) { users[fill[static_cast<std::size_t>(b)]++] = i; });
  // Each buffer's predecessor in its core's program order.
  std::vector<int> prev(nb, -1);
  if (in_order_)
    for (const auto& order : alloc_order_)
      for (std::size_t j = 1; j < order.size(); ++j) prev[static_cast<std::size_t>(order[j])] = order[j - 1];

  // Node v < n: instance v; v >= n: buffer v - n. Edge k of a node, in a fixed order.
  auto edges = [&](std::size_t v) -> std::size_t {
    if (v < n) return x_.deps[v].size() + writes_lx_[v].size();
    const std::size_t b = v - n;
    if (g_.buffers[static_cast<std::size_t>(lxbufs_[b].buffer)].preloaded) return 0;  // reserved at the start
    const int a = after_[b];
    return (prev[b] >= 0 ? 1 : 0) + (a >= 0 ? start[static_cast<std::size_t>(a) + 1] - start[static_cast<std::size_t>(a)] : 0);
  };
  auto edge = [&](std::size_t v, std::size_t k) -> std::size_t {
    if (v < n) {
      const IdLists::Span d = x_.deps[v];
      if (k < d.size()) return static_cast<std::size_t>(d[k]);
      return n + static_cast<std::size_t>(writes_lx_[v][k - d.size()]);
    }
    const std::size_t b = v - n;
    if (prev[b] >= 0) {
      if (k == 0) return n + static_cast<std::size_t>(prev[b]);
      --k;
    }
    return static_cast<std::size_t>(users[start[static_cast<std::size_t>(after_[b])] + k]);
  };

  // Depth-first search without recursion (millions of instances); 0 new, 1 on the path, 2 done.
  std::vector<char> state(n + nb, 0);
  std::vector<std::pair<std::size_t, std::size_t>> path;  // node, next edge
  for (std::size_t root = 0; root < n + nb; ++root) {
    if (state[root]) continue;
    state[root] = 1;
    path.emplace_back(root, 0);
    while (!path.empty()) {
      auto& [v, k] = path.back();
      if (k == edges(v)) {
        state[v] = 2;
        path.pop_back();
        continue;
      }
      const std::size_t w = edge(v, k++);
      if (state[w] == 0) {
        state[w] = 1;
        path.emplace_back(w, 0);
        continue;
      }
      if (state[w] == 2) continue;
      // A cycle: path from w to v, then back to w. Name a takeover on it: a buffer followed
      // on the cycle by an instance that uses the buffer it takes over.
      auto from = std::find_if(path.begin(), path.end(), [&](const auto& p) { return p.first == w; });
      std::vector<std::size_t> cycle;
      for (auto it = from; it != path.end(); ++it) cycle.push_back(it->first);
      for (std::size_t c = 0; c < cycle.size(); ++c) {
        const std::size_t node = cycle[c], next = cycle[(c + 1) % cycle.size()];
        if (node < n || next >= n || after_[node - n] < 0) continue;
        const LxBuf& b = lxbufs_[node - n];
        const LxBuf& a = lxbufs_[static_cast<std::size_t>(after_[node - n])];
        const TaskInstance& user = x_.instances[next];
        throw InputError(g_.file, "/buffers/" + std::to_string(b.buffer) + "/after",
                         "buffer \"" + g_.buffers[b.buffer].name + "\" takes over \"" + g_.buffers[a.buffer].name +
                             "\" on core " + std::to_string(b.core) + ", but task \"" + g_.tasks[user.task].name +
                             "\" (" + g_.task_path(user.task) + ") uses \"" + g_.buffers[a.buffer].name +
                             "\" and cannot finish before \"" + g_.buffers[b.buffer].name +
                             "\" has its space: the run could never end (the tasks that free a taken-over buffer "
                             "must come before the tasks that write the buffer taking it over)");
      }
      // (Unreachable: a cycle needs a takeover edge, the only edges from a later to an earlier
      // point of program order.)
      throw InputError(g_.file, "/buffers", "the LX takeovers of this graph wait for each other: the run could never end");
    }
  }
}

}  // namespace dfsim
