#pragma once
// The energy and power model: what a run did (EnergyCounts) times the configured
// coefficients (EnergyConfig) gives joules per component; energy per utilization bucket gives
// power over time, its peak and its sliding-window average against the card's budget.
// docs/energy.md describes the model, docs/calibration.md where each coefficient comes from.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/common/dtype.h"
#include "sim/common/time.h"
#include "sim/config/chip_config.h"

namespace dfsim {

// The components energy is split into; summary.json keys, in this order.
enum class EnergyComponent { pt, sfp, lx, dma, ring, dram, pcie, static_power };
inline constexpr std::size_t kEnergyComponents = 8;
inline constexpr const char* kEnergyComponentNames[kEnergyComponents] = {"pt",   "sfp",  "lx",   "dma",
                                                                         "ring", "dram", "pcie", "static"};

// Joules per component; total() adds them in the order above, so the parts sum to it exactly.
struct ComponentEnergy {
  std::array<double, kEnergyComponents> j{};
  double& operator[](EnergyComponent c) { return j[static_cast<std::size_t>(c)]; }
  double operator[](EnergyComponent c) const { return j[static_cast<std::size_t>(c)]; }
  double total() const;
  EnergyComponent biggest() const;  // the first of the largest
};

// What a run did, as the energy model needs it.
struct EnergyCounts {
  std::map<Dtype, std::uint64_t> pt_macs;                  // per PT precision
  std::map<std::string, std::uint64_t> sfp_elements;       // per function class, fp16 (and narrower)
  std::map<std::string, std::uint64_t> sfp_fp32_elements;  // per function class, fp32
  std::uint64_t lx_bytes_read = 0, lx_bytes_written = 0;
  std::uint64_t dma_bytes = 0;                             // bytes the DMA engines transferred
  std::uint64_t ring_byte_hops = 0;                        // bytes x ring links crossed
  std::uint64_t dram_bytes_read = 0, dram_bytes_written = 0;
  std::uint64_t dram_activates = 0;
  double dram_refreshes = 0;                               // all-bank refreshes over the run, all channels
  std::uint64_t pcie_bytes = 0;
  int active_cores = 0;                                    // cores the program uses (all its cards)
  int cards = 1;                                           // cards the program uses
  Tick duration = 0;                                       // the run's simulated time
};

// The DRAM component (dynamic: what the accesses cost) split by what it pays for.
struct DramEnergy {
  double read_j = 0, write_j = 0, activate_j = 0;
};

// The static component: what the card draws whatever runs, for the run's duration. DRAM
// refresh is here because it is paid per unit of time, not per access.
struct StaticEnergy {
  double card_j = 0, cores_j = 0, dram_refresh_j = 0;
};

// Coefficients applied to counts.
ComponentEnergy energy_of(const EnergyConfig& e, const EnergyCounts& n);
DramEnergy dram_energy_of(const EnergyConfig& e, const EnergyCounts& n);
StaticEnergy static_energy_of(const EnergyConfig& e, const EnergyCounts& n);
double pt_energy_j(const EnergyConfig& e, Dtype d, std::uint64_t macs);
double sfp_energy_j(const EnergyConfig& e, const std::string& function_class, std::uint64_t elements, bool fp32);
// All-bank refreshes the off-chip memory performs in `duration` (every channel, one per tREFI).
double refreshes_in(const ChipConfig& cfg, Tick duration);
// The idle floor: static power of the card with `active_cores` cores powered, refresh included.
double static_power_w(const ChipConfig& cfg, int active_cores, int cards = 1);

// Power over time from energy per bucket of width `bucket` up to `end` (the last bucket may be
// partial).
struct PowerProfile {
  std::vector<double> bucket_j;  // energy per bucket
  Tick bucket = 1, end = 0;
  double width_ns(std::size_t b) const;            // the bucket's width within the run
  std::vector<double> watts() const;               // mean power per bucket
  double peak_w() const;                           // highest bucket power
  // Highest mean power over `window` consecutive time (whole buckets, at least one; the whole
  // run when shorter), and the start of that window.
  double max_window_w(Tick window, Tick* start = nullptr) const;
};

// Adds `value` to the buckets that [start, end) overlaps, in proportion to the overlap; an
// instant (start == end) goes to its bucket. Buckets past the vector's end are clamped to it.
void spread_over_buckets(std::vector<double>& buckets, Tick bucket, Tick start, Tick end, double value);

}  // namespace dfsim
