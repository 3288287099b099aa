// Names of spaces and units, and lookups on the in-memory kernel graph.
#include "sim/graph/kernel_graph.h"

#include <algorithm>

namespace dfsim {

const char* space_name(Space s) { return s == Space::hbm ? "hbm" : "lx"; }

const char* unit_name(UnitKind u) {
  switch (u) {
    case UnitKind::pt: return "pt";
    case UnitKind::sfp: return "sfp";
    case UnitKind::dma: return "dma";
    case UnitKind::ring: return "ring";
    case UnitKind::link: return "link";
  }
  return "?";
}

std::optional<Space> space_from_name(const std::string& s) {
  if (s == "hbm") return Space::hbm;
  if (s == "lx") return Space::lx;
  return std::nullopt;
}

std::optional<UnitKind> unit_from_name(const std::string& s) {
  for (UnitKind u : {UnitKind::pt, UnitKind::sfp, UnitKind::dma, UnitKind::ring, UnitKind::link})
    if (s == unit_name(u)) return u;
  return std::nullopt;
}

int KernelGraph::find_buffer(const std::string& n) const {
  for (std::size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].name == n) return static_cast<int>(i);
  return -1;
}

int KernelGraph::find_task(const std::string& n) const {
  for (std::size_t i = 0; i < tasks.size(); ++i)
    if (tasks[i].name == n) return static_cast<int>(i);
  return -1;
}

std::string KernelGraph::task_path(int task) const {
  int k = tasks.at(task).kernel;
  if (k < 0 || k >= static_cast<int>(kernels.size())) return "/tasks/" + std::to_string(task);
  const auto& list = kernels[k].tasks;
  auto pos = std::find(list.begin(), list.end(), task) - list.begin();
  return "/kernels/" + std::to_string(k) + "/tasks/" + std::to_string(pos);
}

std::size_t KernelGraph::instance_count() const {
  std::size_t n = 0;
  for (const auto& t : tasks) n += instances_of(t);
  return n;
}

std::size_t KernelGraph::instances_of(const Task& t) const {
  return static_cast<std::size_t>(t.core_count) * (t.cards.empty() ? static_cast<std::size_t>(cards) : t.cards.size());
}

std::vector<int> KernelGraph::cards_of(const Task& t) const {
  if (!t.cards.empty()) return t.cards;
  std::vector<int> all(static_cast<std::size_t>(cards));
  for (int c = 0; c < cards; ++c) all[static_cast<std::size_t>(c)] = c;
  return all;
}

Region instance_region(const KernelGraph& g, const Access& a, int core, int card) {
  Region r;
  r.buffer = a.buffer;
  r.card = card;
  r.core = g.buffers.at(a.buffer).space == Space::hbm ? -1 : static_cast<int>(a.core ? a.core->at(core) : core);
  r.offset = static_cast<std::uint64_t>(a.offset.at(core));
  r.bytes = a.bytes;
  r.rows = a.rows;
  r.stride = a.stride;
  r.streaming = a.streaming;
  return r;
}

InstanceRegions reads_of(const KernelGraph& g, const TaskInstance& ti) {
  return InstanceRegions(g, g.tasks[static_cast<std::size_t>(ti.task)].reads, ti.core, ti.card);
}

InstanceRegions writes_of(const KernelGraph& g, const TaskInstance& ti) {
  return InstanceRegions(g, g.tasks[static_cast<std::size_t>(ti.task)].writes, ti.core, ti.card);
}

Dtype pt_operand_dtype(const KernelGraph& g, const Task& t) {
  if (!t.reads.empty() && t.reads[0].buffer >= 0 && t.reads[0].buffer < static_cast<int>(g.buffers.size()))
    return g.buffers[static_cast<std::size_t>(t.reads[0].buffer)].dtype;
  return t.dtype;
}

}  // namespace dfsim
