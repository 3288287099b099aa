#include "sim/energy/energy_model.h"

#include <algorithm>

namespace dfsim {

namespace {

constexpr double kPico = 1e-12, kNano = 1e-9;

double coef(const std::map<std::string, double>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? 0.0 : it->second;
}

}  // namespace

double ComponentEnergy::total() const {
  double t = 0;
  for (double v : j) t += v;
  return t;
}

EnergyComponent ComponentEnergy::biggest() const {
  std::size_t best = 0;
  for (std::size_t i = 1; i < kEnergyComponents; ++i)
    if (j[i] > j[best]) best = i;
  return static_cast<EnergyComponent>(best);
}

double pt_energy_j(const EnergyConfig& e, Dtype d, std::uint64_t macs) {
  return static_cast<double>(macs) * coef(e.pt_pj_per_mac, std::string(dtype_name(d))) * kPico;
}

double sfp_energy_j(const EnergyConfig& e, const std::string& function_class, std::uint64_t elements, bool fp32) {
  return static_cast<double>(elements) * coef(e.sfp_pj_per_element, function_class) * (fp32 ? e.sfp_fp32_factor : 1.0) *
         kPico;
}

double refreshes_in(const ChipConfig& cfg, Tick duration) {
  if (cfg.memory.lpddr5.trefi <= 0) return 0.0;
  ClockDomain mem(cfg.memory.clock_mhz);
  return static_cast<double>(duration) / static_cast<double>(mem.cycles(cfg.memory.lpddr5.trefi)) *
         cfg.memory.channels;
}

double static_power_w(const ChipConfig& cfg, int active_cores, int cards) {
  const EnergyConfig& e = cfg.energy;
  Tick second = ns_to_ticks(1e9);
  return (e.card_static_w + refreshes_in(cfg, second) * e.dram_refresh_nj * kNano) * cards + e.core_static_w * active_cores;
}

DramEnergy dram_energy_of(const EnergyConfig& e, const EnergyCounts& n) {
  DramEnergy d;
  d.read_j = static_cast<double>(n.dram_bytes_read) * e.dram_read_pj_per_byte * kPico;
  d.write_j = static_cast<double>(n.dram_bytes_written) * e.dram_write_pj_per_byte * kPico;
  d.activate_j = static_cast<double>(n.dram_activates) * e.dram_activate_nj * kNano;
  return d;
}

StaticEnergy static_energy_of(const EnergyConfig& e, const EnergyCounts& n) {
  double seconds = ticks_to_ns(n.duration) * kNano;
  StaticEnergy s;
  s.card_j = e.card_static_w * seconds * n.cards;
  s.cores_j = e.core_static_w * n.active_cores * seconds;
  s.dram_refresh_j = n.dram_refreshes * e.dram_refresh_nj * kNano;
  return s;
}

ComponentEnergy energy_of(const EnergyConfig& e, const EnergyCounts& n) {
  using C = EnergyComponent;
  ComponentEnergy out;
  for (const auto& [d, macs] : n.pt_macs) out[C::pt] += pt_energy_j(e, d, macs);
  for (const auto& [cls, el] : n.sfp_elements) out[C::sfp] += sfp_energy_j(e, cls, el, false);
  for (const auto& [cls, el] : n.sfp_fp32_elements) out[C::sfp] += sfp_energy_j(e, cls, el, true);
  out[C::lx] = (static_cast<double>(n.lx_bytes_read) * e.lx_read_pj_per_byte +
                static_cast<double>(n.lx_bytes_written) * e.lx_write_pj_per_byte) * kPico;
  out[C::dma] = static_cast<double>(n.dma_bytes) * e.dma_pj_per_byte * kPico;
  out[C::ring] = static_cast<double>(n.ring_byte_hops) * e.ring_pj_per_byte_hop * kPico;
  DramEnergy d = dram_energy_of(e, n);
  out[C::dram] = d.read_j + d.write_j + d.activate_j;
  out[C::pcie] = static_cast<double>(n.pcie_bytes) * e.pcie_pj_per_byte * kPico;
  StaticEnergy s = static_energy_of(e, n);
  out[C::static_power] = s.card_j + s.cores_j + s.dram_refresh_j;
  return out;
}

void spread_over_buckets(std::vector<double>& buckets, Tick bucket, Tick start, Tick end, double value) {
  if (buckets.empty() || value == 0) return;
  std::size_t last_b = buckets.size() - 1;
  if (end <= start) {
    buckets[std::min<std::size_t>(start / bucket, last_b)] += value;
    return;
  }
  std::size_t first = std::min<std::size_t>(start / bucket, last_b), last = std::min<std::size_t>((end - 1) / bucket, last_b);
  if (first == last) {
    buckets[first] += value;
    return;
  }
  double per_tick = value / static_cast<double>(end - start);
  for (std::size_t b = first; b <= last; ++b) {
    Tick lo = std::max<Tick>(start, b * bucket), hi = b == last ? end : std::min<Tick>(end, (b + 1) * bucket);
    buckets[b] += per_tick * static_cast<double>(hi - lo);
  }
}

double PowerProfile::width_ns(std::size_t b) const {
  Tick lo = b * bucket, hi = std::min<Tick>((b + 1) * bucket, end);
  return hi > lo ? ticks_to_ns(hi - lo) : 0.0;
}

std::vector<double> PowerProfile::watts() const {
  std::vector<double> w(bucket_j.size(), 0.0);
  for (std::size_t b = 0; b < bucket_j.size(); ++b) {
    double ns = width_ns(b);
    w[b] = ns > 0 ? bucket_j[b] / (ns * 1e-9) : 0.0;
  }
  return w;
}

double PowerProfile::peak_w() const {
  double p = 0;
  for (double w : watts()) p = std::max(p, w);
  return p;
}

double PowerProfile::max_window_w(Tick window, Tick* start) const {
  if (start) *start = 0;
  std::size_t n = bucket_j.size();
  if (n == 0) return 0.0;
  std::size_t k = std::clamp<std::size_t>(static_cast<std::size_t>((window + bucket / 2) / bucket), 1, n);
  double sum_j = 0, sum_ns = 0, best = 0;
  for (std::size_t b = 0; b < n; ++b) {
    sum_j += bucket_j[b];
    sum_ns += width_ns(b);
    if (b >= k) {
      sum_j -= bucket_j[b - k];
      sum_ns -= width_ns(b - k);
    }
    if (b + 1 >= k && sum_ns > 0) {
      double w = sum_j / (sum_ns * 1e-9);
      if (w > best) {
        best = w;
        if (start) *start = (b + 1 - k) * bucket;
      }
    }
  }
  return best;
}

}  // namespace dfsim
