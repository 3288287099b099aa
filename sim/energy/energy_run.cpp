// compute_energy: gathers a run's counts from the task records and the models' counters, and
// spreads each component's energy over time and over kernels.
#include <algorithm>

#include "models/chip/card.h"
#include "sim/energy/energy_report.h"
#include "sim/graph/unit_ops.h"
#include "sim/stats/analysis.h"

namespace dfsim {

namespace {

using C = EnergyComponent;
constexpr std::size_t idx(C c) { return static_cast<std::size_t>(c); }

using Weights = std::array<double, kEnergyComponents>;

// The precision a PT task runs at: its operands' (the first read buffer's), as the PT unit times it.
Dtype pt_precision(const KernelGraph& g, const Task& t) {
  return t.reads.empty() ? t.dtype : g.buffers[t.reads[0].buffer].dtype;
}

// What one completed task instance did, in each component's own measure: joules for PT and
// SFP; for LX, DMA, ring and DRAM a weight that says where in time and in which kernel the
// model's total for that component was spent (the totals come from the models' counters).
Weights instance_weights(const KernelGraph& g, const TaskInstance& t, const EnergyConfig& e, EnergyCounts& n) {
  const Task& task = g.tasks[t.task];
  Weights w{};
  if (task.unit == UnitKind::pt) {
    std::uint64_t macs = task.m * task.n * task.k;
    Dtype d = pt_precision(g, task);
    n.pt_macs[d] += macs;
    w[idx(C::pt)] = pt_energy_j(e, d, macs);
  } else if (task.unit == UnitKind::sfp) {
    const std::string& cls = sfp_op_class(task.op);
    bool fp32 = task.dtype == Dtype::fp32;
    (fp32 ? n.sfp_fp32_elements : n.sfp_elements)[cls] += task.elements;
    w[idx(C::sfp)] = sfp_energy_j(e, cls, task.elements, fp32);
  }
  auto in_lx = [&](const Region& r) { return g.buffers[r.buffer].space == Space::lx; };
  std::uint64_t read = 0, written = 0;
  for (const Region& r : reads_of(g, t)) {
    read += r.total_bytes();
    if (in_lx(r)) w[idx(C::lx)] += static_cast<double>(r.total_bytes()) * e.lx_read_pj_per_byte;
  }
  for (const Region& r : writes_of(g, t)) {
    written += r.total_bytes();
    if (in_lx(r)) w[idx(C::lx)] += static_cast<double>(r.total_bytes()) * e.lx_write_pj_per_byte;
  }
  if (task.unit == UnitKind::dma) {
    w[idx(C::dma)] = static_cast<double>(read);
    w[idx(C::ring)] = static_cast<double>(written);  // every destination is reached over the ring
    for (const Region& r : reads_of(g, t))
      if (!in_lx(r)) w[idx(C::dram)] += static_cast<double>(r.total_bytes()) * e.dram_read_pj_per_byte;
    for (const Region& r : writes_of(g, t))
      if (!in_lx(r)) w[idx(C::dram)] += static_cast<double>(r.total_bytes()) * e.dram_write_pj_per_byte;
  } else if (task.unit == UnitKind::ring) {
    w[idx(C::ring)] = static_cast<double>(read);
  }
  return w;
}

void gather_model_counts(Simulation& sim, EnergyCounts& n) {
  for (int k = 0; k < sim.system().cards(); ++k) {
    Card& card = sim.system().card(k);
    for (int c = 0; c < card.cores(); ++c) {
      n.lx_bytes_read += card.core(c).lx().bytes_read;
      n.lx_bytes_written += card.core(c).lx().bytes_written;
      DmaStats d = card.core(c).dma_stats();
      n.dma_bytes += d.hbm_to_lx + d.lx_to_hbm + d.lx_to_lx + d.hbm_to_hbm;
    }
    n.ring_byte_hops += card.ring().byte_hops();
    const MemStats& ms = card.memory().stats();
    n.dram_bytes_read += ms.bytes_read;
    n.dram_bytes_written += ms.bytes_written;
    for (const MemStats& c : card.memory().channel_stats()) n.dram_activates += c.row_misses + c.row_conflicts;
    n.dram_refreshes += refreshes_in(sim.config(), n.duration);
  }
  n.pcie_bytes = sim.system().fabric().bytes_sent();
  n.sfp_elements["add"] += sim.system().collectives().reduced_elements();  // collective reductions
}

// Adds `total` to `out` in the proportions of `shape` (uniformly over the run when the shape is empty).
void add_shaped(std::vector<double>& out, const std::vector<double>& shape, double shape_sum, double total, Tick bucket,
                Tick end) {
  if (total == 0 || out.empty()) return;
  if (shape_sum <= 0) {
    spread_over_buckets(out, bucket, 0, end, total);
    return;
  }
  for (std::size_t b = 0; b < out.size(); ++b) out[b] += total * (shape[b] / shape_sum);
}

}  // namespace

EnergyReport compute_energy(Simulation& sim, const RunResult& res) {
  const KernelGraph& g = sim.graph();
  const ExpandedGraph& x = sim.expanded();
  const EnergyConfig& e = sim.config().energy;
  const Recorder& rec = sim.recorder();
  EnergyReport r;
  EnergyCounts& n = r.counts;
  n.duration = res.end;
  n.active_cores = g.cores * g.cards;
  n.cards = g.cards;

  const Tick bucket = rec.bucket();
  const std::size_t buckets = res.end == 0 ? 0 : static_cast<std::size_t>((res.end + bucket - 1) / bucket);
  std::array<std::vector<double>, kEnergyComponents> shape;
  for (auto& s : shape) s.assign(buckets, 0.0);
  Weights weight_sum{};
  std::vector<Weights> kernel_weight(g.kernels.size(), Weights{});
  for (std::size_t i = 0; i < x.instances.size(); ++i) {
    const TaskRecord& tr = rec.tasks()[i];
    if (!tr.done) continue;  // a run stopped early: only completed instances count
    Weights w = instance_weights(g, x.instances[i], e, n);
    int k = g.tasks[x.instances[i].task].kernel;
    for (std::size_t c = 0; c < kEnergyComponents; ++c) {
      if (w[c] == 0) continue;
      spread_over_buckets(shape[c], bucket, tr.start, tr.end, w[c]);
      weight_sum[c] += w[c];
      if (k >= 0) kernel_weight[k][c] += w[c];
    }
  }
  gather_model_counts(sim, n);

  r.by_component = energy_of(e, n);
  r.dram = dram_energy_of(e, n);
  r.stat = static_energy_of(e, n);
  r.total_j = r.by_component.total();
  double seconds = ticks_to_ns(res.end) * 1e-9;
  r.average_w = seconds > 0 ? r.total_j / seconds : 0.0;
  r.static_w = static_power_w(sim.config(), n.active_cores, n.cards);

  // Power over time: each component's total in the shape of its activity. Off-chip access
  // energy follows the bytes the memory completed per bucket; PCIe and static are even.
  r.profile.bucket = bucket;
  r.profile.end = res.end;
  r.profile.bucket_j.assign(buckets, 0.0);
  for (C c : {C::pt, C::sfp, C::lx, C::dma, C::ring})
    add_shaped(r.profile.bucket_j, shape[idx(c)], weight_sum[idx(c)], r.by_component[c], bucket, res.end);
  std::vector<double> mem_shape(buckets, 0.0);
  double mem_sum = 0;
  static const std::vector<std::uint64_t> none;
  const std::vector<std::uint64_t>* mbp = &none;  // the memory's "off-chip GB/s" bytes per bucket
  for (const Series& s : sim.recorder().series())
    if ((s.group == "memory" || s.group == "card 0 memory") && s.name == "off-chip GB/s") mbp = &s.per_bucket;
  const auto& mb = *mbp;
  for (std::size_t b = 0; b < mb.size() && buckets > 0; ++b) {
    mem_shape[std::min(b, buckets - 1)] += static_cast<double>(mb[b]);
    mem_sum += static_cast<double>(mb[b]);
  }
  add_shaped(r.profile.bucket_j, mem_shape, mem_sum, r.by_component[C::dram], bucket, res.end);
  add_shaped(r.profile.bucket_j, {}, 0, r.by_component[C::pcie] + r.by_component[C::static_power], bucket, res.end);
  r.peak_w = r.profile.peak_w();
  r.budget_w = e.power_budget_w * g.cards;  // the budget of every card the program uses
  r.window = ns_to_ticks(e.power_window_ns);
  r.max_window_w = r.profile.max_window_w(r.window, &r.max_window_start);

  // Kernels: their instances' share of each dynamic component.
  for (std::size_t k = 0; k < g.kernels.size(); ++k) {
    KernelEnergy ke;
    ke.name = g.kernels[k].name;
    for (C c : {C::pt, C::sfp, C::lx, C::dma, C::ring, C::dram}) {
      if (weight_sum[idx(c)] > 0) ke.j[c] = r.by_component[c] * (kernel_weight[k][idx(c)] / weight_sum[idx(c)]);
    }
    r.kernels.push_back(std::move(ke));
  }
  return r;
}

}  // namespace dfsim
