// Graph-level checks of an op graph: one producer per tensor, inputs not produced, every used
// tensor available, outputs produced, a kv_write's cache read by it alone, no cycle; computes
// the topological op order.
#include <fmt/format.h>

#include <queue>

#include "sim/common/error.h"
#include "sim/common/names.h"
#include "sim/graph/op_graph.h"

namespace dfsim {

namespace {

std::string op_label(const OpGraph& g, int i) { return "op " + std::to_string(i) + " (" + g.ops[i].op + ")"; }

}  // namespace

void check_op_graph_dataflow(OpGraph& g, const JsonView& root) {
  std::vector<int> producer(g.tensors.size(), -1);
  std::vector<bool> is_input(g.tensors.size(), false);  // OpGraph::is_input searches the list
  for (int t : g.inputs) is_input[static_cast<std::size_t>(t)] = true;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    for (std::size_t j = 0; j < g.ops[i].outputs.size(); ++j) {
      int t = g.ops[i].outputs[j];
      JsonView at = root.at("ops").at(i).at("outputs").at(j);
      if (is_input[static_cast<std::size_t>(t)]) at.fail("tensor \"" + g.tensors[t].name + "\" is a graph input and cannot be produced by an op");
      if (producer[t] >= 0)
        at.fail("tensor \"" + g.tensors[t].name + "\" is produced twice: also by " + op_label(g, producer[t]));
      producer[t] = static_cast<int>(i);
    }
  }
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    for (std::size_t j = 0; j < g.ops[i].inputs.size(); ++j) {
      int t = g.ops[i].inputs[j];
      if (producer[t] < 0 && !is_input[static_cast<std::size_t>(t)])
        root.at("ops").at(i).at("inputs").at(j).fail(
            "tensor \"" + g.tensors[t].name + "\" is never produced by an op and is not a graph input");
    }
  // A kv_write updates its cache in place: its output is the cache's storage. Any other op
  // reading or updating the cache tensor would see the new rows where the graph says the old
  // ones (a second kv_write: both updates); they read the kv_write's output instead.
  std::vector<int> cache_of(g.tensors.size(), -1);  // the kv_write that updates it
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].op == "kv_write" && !g.ops[i].inputs.empty() && cache_of[static_cast<std::size_t>(g.ops[i].inputs[0])] < 0)
      cache_of[static_cast<std::size_t>(g.ops[i].inputs[0])] = static_cast<int>(i);
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    for (std::size_t j = 0; j < g.ops[i].inputs.size(); ++j) {
      const int t = g.ops[i].inputs[j], w = cache_of[static_cast<std::size_t>(t)];
      if (w >= 0 && w != static_cast<int>(i))
        root.at("ops").at(i).at("inputs").at(j).fail(fmt::format(
            "tensor \"{}\" is the cache {} updates in place: no other op may read or update it (read \"{}\", its output)",
            g.tensors[t].name, op_label(g, w), g.tensors[g.ops[w].outputs.at(0)].name));
    }
  for (std::size_t j = 0; j < g.outputs.size(); ++j)
    if (producer[g.outputs[j]] < 0)
      root.at("outputs").at(j).fail("graph output \"" + g.tensors[g.outputs[j]].name + "\" is never produced by an op");

  // Kahn's algorithm over ops, smallest index first so the order is stable.
  std::vector<int> pending(g.ops.size(), 0);
  std::vector<std::vector<int>> users(g.ops.size());
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    for (int t : g.ops[i].inputs)
      if (producer[t] >= 0) {
        ++pending[i];
        users[producer[t]].push_back(static_cast<int>(i));
      }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    if (pending[i] == 0) ready.push(static_cast<int>(i));
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    g.order.push_back(i);
    for (int u : users[i])
      if (--pending[u] == 0) ready.push(u);
  }
  if (g.order.size() == g.ops.size()) return;
  // Name one cycle: follow unresolved producers back from the first stuck op.
  int start = 0;
  while (pending[start] == 0) ++start;
  std::vector<int> seen(g.ops.size(), -1), path;
  int cur = start;
  while (seen[cur] < 0) {
    seen[cur] = static_cast<int>(path.size());
    path.push_back(cur);
    for (int t : g.ops[cur].inputs)
      if (producer[t] >= 0 && pending[producer[t]] > 0) { cur = producer[t]; break; }
  }
  std::vector<std::string> cycle;
  for (std::size_t i = seen[cur]; i < path.size(); ++i) cycle.push_back(op_label(g, path[i]));
  cycle.push_back(op_label(g, cur));
  root.at("ops").at(cur).fail("ops form a cycle: " + join_for_message(cycle, " needs "));
}

}  // namespace dfsim
