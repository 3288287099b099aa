#pragma once
// Where the time went: per-kernel breakdown and the critical path of a finished run.
#include <map>
#include <string>
#include <vector>

#include "sim/common/time.h"
#include "sim/graph/kernel_graph.h"
#include "sim/stats/recorder.h"

namespace dfsim {

// One kernel: its span and how its task instances spent their time.
struct KernelBreakdown {
  std::string name;
  Tick start = 0, end = 0;
  std::size_t instances = 0;
  std::map<std::string, Tick> busy_by_unit;  // summed task durations per unit kind
  Tick waiting_for_lx = 0;                   // ready, but the LX space was not free
  Tick waiting_for_unit = 0;                 // ready, but the unit was busy with other tasks
  std::uint64_t offchip_bytes = 0;           // bytes its DMA tasks moved to or from HBM
  std::uint64_t macs = 0;
  std::map<Dtype, std::uint64_t> macs_by_precision;  // the same MACs by the precision the PT runs them in
  // Its PCIe traffic (collectives, host transfers; filled from the fabric's tally, not here):
  std::uint64_t link_bytes = 0;                // off-chip bytes the PCIe ports' DMAs moved for it
  std::uint64_t pcie_bytes = 0;                // bytes its transfers put on the fabric, each once
  std::vector<std::uint64_t> pcie_link_bytes;  // the same per fabric link (PcieFabric::links()); empty: none
};

// The chain of task instances that decided the end time, walked back from the last one:
// through the dependency that arrived last, or through the task that held the unit.
struct CriticalPath {
  Tick length = 0;
  std::vector<int> instances;                // first to last
  std::map<std::string, Tick> busy_by_unit;  // time on the path spent in each unit kind
  Tick waiting = 0;                          // time on the path with no task of it running
};

std::vector<KernelBreakdown> kernel_breakdown(const KernelGraph& g, const ExpandedGraph& x, const Recorder& rec);
CriticalPath critical_path(const KernelGraph& g, const ExpandedGraph& x, const Recorder& rec);

// How unevenly some units (a card's DRAM channels) share their work over time: over the
// recorder's utilization buckets that [from, to) overlaps, each weighted by the overlap, the
// busiest unit's busy time summed, over the units' mean busy time summed. 1: the work of every
// moment spread evenly over the units; their number: all of it on one unit at a time; 0: idle.
// Totals over a run can be even while the units take turns (every core reading the same
// channel at once): this sees that, at the resolution of a bucket.
double busy_imbalance(const Recorder& rec, const std::vector<int>& tracks, Tick from, Tick to);

// Bytes an instance moves to or from HBM (DMA tasks), and MACs it performs (PT tasks).
std::uint64_t offchip_bytes_of(const KernelGraph& g, const TaskInstance& t);
std::uint64_t macs_of(const KernelGraph& g, const TaskInstance& t);
// Adds an instance's MACs under the precision its PT runs them in (pt_operand_dtype).
void add_macs_by_precision(const KernelGraph& g, const TaskInstance& t, std::map<Dtype, std::uint64_t>& out);

}  // namespace dfsim
