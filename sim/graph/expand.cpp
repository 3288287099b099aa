// Expansion: SPMD templates to instances, regions, writer checks, dependencies, cycle check.
#include "sim/graph/expand.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/common/error.h"
#include "sim/common/names.h"
#include "sim/config/chip_config.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/graph/region_index.h"

namespace dfsim {

namespace {

void instantiate(const KernelGraph& g, ExpandedGraph& eg) {
  eg.instances.reserve(g.instance_count());
  eg.first_instance.reserve(g.tasks.size());
  for (std::size_t t = 0; t < g.tasks.size(); ++t) {
    const Task& task = g.tasks[t];
    eg.first_instance.push_back(static_cast<int>(eg.instances.size()));
    for (int card : g.cards_of(task))
      for (int c = task.first_core; c < task.first_core + task.core_count; ++c) {
        TaskInstance inst;
        inst.task = static_cast<int>(t);
        inst.core = c;
        inst.card = card;
        eg.instances.push_back(std::move(inst));
      }
  }
}

// Entries the writer index may look at in all (RegionIndex::visited): compiled graphs need 2 to
// 32 per written region (the most: batched tensors in the stick layout); writers of one buffer
// whose strided spans interleave without sharing a byte cost a look per pair (64 000 one-core
// tasks each writing two bytes 64 KiB apart: 2·10^9, minutes; 10^8 looks take about 2 s), so
// past this the graph is refused rather than left to run.
std::uint64_t writer_index_budget(const RegionIndex& idx) { return 256 * static_cast<std::uint64_t>(idx.size()) + 100'000'000; }

// Throws when the index has looked at more entries than writer_index_budget, naming the access
// whose query crossed it.
void check_writer_index_budget(const KernelGraph& g, const RegionIndex& idx, int task, const char* access,
                               std::size_t slot, const Region& r) {
  if (idx.visited() <= writer_index_budget(idx)) return;
  throw InputError(g.file, g.task_path(task) + "/" + access + "/" + std::to_string(slot),
                   fmt::format("the writes of buffer \"{}\" interleave too finely: checking which writers each access "
                               "meets took over {} comparisons for {} written regions (strided writes whose spans "
                               "overlap without sharing bytes are compared pair by pair); expected each buffer's "
                               "writers in few interleaved patterns, as a compiled graph writes them",
                               g.buffers[r.buffer].name, writer_index_budget(idx), idx.size()));
}

// Writers: no preloaded buffer written, no byte written twice. Returns the writer index.
RegionIndex index_writers(const KernelGraph& g, const ExpandedGraph& eg) {
  RegionIndex idx(g, eg.instances);
  std::size_t written = 0;
  for (const TaskInstance& inst : eg.instances) written += g.tasks[static_cast<std::size_t>(inst.task)].writes.size();
  idx.reserve(written);
  for (std::size_t i = 0; i < eg.instances.size(); ++i) {
    const TaskInstance& inst = eg.instances[i];
    const InstanceRegions writes = writes_of(g, inst);
    for (std::size_t w = 0; w < writes.size(); ++w) {
      const Region r = writes[w];
      const Buffer& b = g.buffers[r.buffer];
      if (b.preloaded && b.space == Space::lx)
        throw InputError(g.file, g.task_path(inst.task) + "/writes/" + std::to_string(w),
                         "writes buffer \"" + b.name + "\", which is preloaded (its data exists before the run)");
      idx.add(r, static_cast<int>(i), static_cast<int>(w));
    }
  }
  idx.build();
  for (std::size_t i = 0; i < eg.instances.size(); ++i) {
    const TaskInstance& inst = eg.instances[i];
    const InstanceRegions writes = writes_of(g, inst);
    for (std::size_t w = 0; w < writes.size(); ++w) {
      const Region r = writes[w];
      idx.for_each_overlap(r, [&](const RegionIndex::Entry& e) {
        if (e.inst == static_cast<int>(i) && e.slot == static_cast<int>(w)) return;
        std::string where = "buffer \"" + g.buffers[r.buffer].name + "\"" +
                            (r.core >= 0 ? " of core " + std::to_string(r.core) : "") +
                            (g.cards > 1 ? " of card " + std::to_string(r.card) : "");
        // Name the earlier writer first; the path points at the later one.
        int first = std::min(e.inst, static_cast<int>(i)), second = std::max(e.inst, static_cast<int>(i));
        int slot = second == static_cast<int>(i) ? static_cast<int>(w) : e.slot;
        throw InputError(g.file, g.task_path(eg.instances[second].task) + "/writes/" + std::to_string(slot),
                         where + " written twice: by " + instance_label(g, eg.instances[first]) +
                             " and " + instance_label(g, eg.instances[second]) + " (every byte has one writer)");
      });
      check_writer_index_budget(g, idx, inst.task, "writes", w, r);
    }
  }
  return idx;
}

// Reports one cycle among instances left over by a topological sort.
[[noreturn]] void report_cycle(const KernelGraph& g, const ExpandedGraph& eg, const std::vector<int>& indeg) {
  int start = -1;
  for (std::size_t i = 0; i < indeg.size(); ++i)
    if (indeg[i] > 0) { start = static_cast<int>(i); break; }
  // Walk backwards along deps that are still unresolved until a node repeats.
  std::vector<int> seen(eg.instances.size(), -1), path;
  int cur = start;
  while (seen[cur] < 0) {
    seen[cur] = static_cast<int>(path.size());
    path.push_back(cur);
    for (int d : eg.deps[static_cast<std::size_t>(cur)])
      if (indeg[d] > 0) { cur = d; break; }
  }
  std::vector<std::string> cycle;
  for (std::size_t i = seen[cur]; i < path.size(); ++i) cycle.push_back(instance_label(g, eg.instances[path[i]]));
  cycle.push_back(instance_label(g, eg.instances[cur]));
  throw InputError(g.file, g.task_path(eg.instances[cur].task), "dependency cycle: " + join_for_message(cycle, " waits for "));
}

void check_acyclic(const KernelGraph& g, const ExpandedGraph& eg) {
  std::vector<int> indeg(eg.instances.size());
  std::vector<int> ready;
  for (std::size_t i = 0; i < eg.instances.size(); ++i) {
    indeg[i] = static_cast<int>(eg.deps[i].size());
    if (indeg[i] == 0) ready.push_back(static_cast<int>(i));
  }
  std::size_t done = 0;
  while (!ready.empty()) {
    int i = ready.back();
    ready.pop_back();
    ++done;
    for (int c : eg.consumers[static_cast<std::size_t>(i)])
      if (--indeg[c] == 0) ready.push_back(c);
  }
  if (done != eg.instances.size()) report_cycle(g, eg, indeg);
}

}  // namespace

std::string instance_label(const KernelGraph& g, const TaskInstance& inst) {
  return "task " + g.tasks.at(inst.task).name + (g.cards > 1 ? " card " + std::to_string(inst.card) : "") +
         " core " + std::to_string(inst.core);
}

ExpandedGraph expand_graph(const KernelGraph& g, const ChipConfig& config) {
  check_kernel_graph_fits(g, config);
  ExpandedGraph eg;
  instantiate(g, eg);
  RegionIndex writers = index_writers(g, eg);
  const std::size_t n = eg.instances.size();
  eg.deps.reserve(n, n);
  std::vector<int> deps;  // of one instance, reused
  for (std::size_t i = 0; i < n; ++i) {
    deps.clear();
    const InstanceRegions reads = reads_of(g, eg.instances[i]);
    for (std::size_t k = 0; k < reads.size(); ++k) {
      writers.for_each_overlap(reads[k], [&](const RegionIndex::Entry& e) { deps.push_back(e.inst); });
      check_writer_index_budget(g, writers, eg.instances[i].task, "reads", k, reads[k]);
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    for (int d : deps) eg.deps.push(d);
    eg.deps.end_list();
  }
  eg.deps.shrink_to_fit();
  // Filled in ascending i, so each consumer list is sorted and unique.
  eg.consumers = eg.deps.inverse(n);
  check_acyclic(g, eg);
  return eg;
}

}  // namespace dfsim
