// The energy model on counts (no simulation): coefficients applied exactly, components that
// sum to the total, static-only idle runs, power over buckets, the sliding-window budget check.
#include <catch2/catch.hpp>

#include "sim/config/chip_config.h"
#include "sim/energy/energy_model.h"
#include "sim/energy/energy_report.h"

using namespace dfsim;
using C = EnergyComponent;

namespace {

constexpr Tick kUs = 1'000'000'000;  // ticks per microsecond

// Counts with every component non-zero.
EnergyCounts busy_counts() {
  EnergyCounts n;
  n.pt_macs = {{Dtype::fp16, 1u << 30}, {Dtype::fp8, 1u << 28}};
  n.sfp_elements = {{"add", 1000000}, {"exp", 500000}};
  n.sfp_fp32_elements = {{"reduce", 70000}};
  n.lx_bytes_read = 3u << 20;
  n.lx_bytes_written = 5u << 20;
  n.dma_bytes = 7u << 20;
  n.ring_byte_hops = 11u << 20;
  n.dram_bytes_read = 13u << 20;
  n.dram_bytes_written = 17u << 20;
  n.dram_activates = 12345;
  n.dram_refreshes = 256.5;
  n.pcie_bytes = 1u << 20;
  n.active_cores = 32;
  n.duration = 100 * kUs;
  return n;
}

}  // namespace

TEST_CASE("energy: components sum to the total exactly", "[energy]") {
  EnergyConfig e;
  ComponentEnergy c = energy_of(e, busy_counts());
  double sum = 0;
  for (double v : c.j) {
    CHECK(v > 0);
    sum += v;  // in the summary's key order, as a script reading by_component_j adds them
  }
  CHECK(sum == c.total());
  // The parts of DRAM and static add up to their components.
  DramEnergy d = dram_energy_of(e, busy_counts());
  StaticEnergy s = static_energy_of(e, busy_counts());
  CHECK(d.read_j + d.write_j + d.activate_j == c[C::dram]);
  CHECK(s.card_j + s.cores_j + s.dram_refresh_j == c[C::static_power]);
}

TEST_CASE("energy: each coefficient applies to its count", "[energy]") {
  EnergyConfig e;
  EnergyCounts n;
  n.pt_macs[Dtype::fp16] = 1000;
  n.dram_bytes_read = 100;
  n.dram_activates = 3;
  n.ring_byte_hops = 50;
  n.sfp_fp32_elements["exp"] = 10;
  ComponentEnergy c = energy_of(e, n);
  CHECK(c[C::pt] == Approx(1000 * 0.5e-12));                        // 1000 MACs x 0.5 pJ
  CHECK(c[C::dram] == Approx(100 * 24e-12 + 3 * 1.0e-9));           // 100 B x 24 pJ + 3 ACT x 1 nJ
  CHECK(c[C::ring] == Approx(50 * 1.0e-12));                        // 50 byte-hops x 1 pJ
  CHECK(c[C::sfp] == Approx(10 * 2.0e-12 * 2));                     // 10 fp32 exp x 2 pJ x fp32 factor 2
  CHECK(c[C::static_power] == 0);                                   // no time passed
}

TEST_CASE("energy: fp8 MACs cost less than fp16 MACs by the configured ratio", "[energy]") {
  EnergyConfig e;
  const std::uint64_t macs = 1u << 30;
  double fp16 = pt_energy_j(e, Dtype::fp16, macs), fp8 = pt_energy_j(e, Dtype::fp8, macs);
  CHECK(fp8 < fp16);
  CHECK(fp8 / fp16 == Approx(e.pt_pj_per_mac.at("fp8") / e.pt_pj_per_mac.at("fp16")).epsilon(1e-12));
  e.pt_pj_per_mac["fp8"] = 0.4;  // the ratio follows the config
  CHECK(pt_energy_j(e, Dtype::fp8, macs) / fp16 == Approx(0.8).epsilon(1e-12));
}

TEST_CASE("energy: doubling the off-chip bytes doubles the access energy", "[energy]") {
  EnergyConfig e;
  EnergyCounts one, two;
  one.dram_bytes_read = 1u << 20;
  one.dram_bytes_written = 1u << 19;
  one.dram_activates = 300;
  two.dram_bytes_read = 2 * one.dram_bytes_read;
  two.dram_bytes_written = 2 * one.dram_bytes_written;
  two.dram_activates = 2 * one.dram_activates;
  CHECK(energy_of(e, two)[C::dram] == 2 * energy_of(e, one)[C::dram]);  // scaling by 2 is exact
}

TEST_CASE("energy: a run with no work reports only static energy", "[energy]") {
  ChipConfig cfg;
  EnergyCounts n;
  n.active_cores = 32;
  n.duration = 1000 * kUs;  // 1 ms
  n.dram_refreshes = refreshes_in(cfg, n.duration);
  ComponentEnergy c = energy_of(cfg.energy, n);
  for (std::size_t i = 0; i < kEnergyComponents; ++i) {
    INFO(kEnergyComponentNames[i]);
    if (static_cast<C>(i) == C::static_power) CHECK(c.j[i] > 0);
    else CHECK(c.j[i] == 0);
  }
  CHECK(c.biggest() == C::static_power);
  // The idle floor: 12 W card + 32 x 0.25 W cores + refresh (8 channels x 160 nJ every
  // 3125 cycles of 1.25 ns = 3.906 us: 0.3277 W) = 20.33 W, for 1 ms.
  CHECK(static_power_w(cfg, 32) == Approx(12 + 8 + 8 * 160e-9 / 3.90625e-6));
  CHECK(c.total() == Approx(static_power_w(cfg, 32) * 1e-3));
}

TEST_CASE("energy: spreading over buckets keeps the value and splits it by overlap", "[energy]") {
  std::vector<double> b(4, 0.0);
  spread_over_buckets(b, 10, 5, 25, 8.0);  // [5, 25) over buckets of 10: 5, 10 and 5 ticks
  CHECK(b[0] == Approx(2.0));
  CHECK(b[1] == Approx(4.0));
  CHECK(b[2] == Approx(2.0));
  CHECK(b[3] == 0);
  spread_over_buckets(b, 10, 30, 30, 1.0);  // an instant goes to its bucket
  spread_over_buckets(b, 10, 35, 90, 1.0);  // past the end: clamped to the last bucket
  CHECK(b[3] == Approx(2.0));
}

TEST_CASE("energy: power per bucket, its peak and the sliding-window maximum", "[energy]") {
  PowerProfile p;
  p.bucket = kUs;                        // 1 us buckets
  p.end = 4 * kUs + kUs / 2;             // the last bucket is half as wide
  p.bucket_j = {10e-6, 30e-6, 20e-6, 10e-6, 10e-6};
  auto w = p.watts();
  REQUIRE(w.size() == 5);
  CHECK(w[1] == Approx(30.0));           // 30 uJ in 1 us
  CHECK(w[4] == Approx(20.0));           // 10 uJ in 0.5 us
  CHECK(p.peak_w() == Approx(30.0));
  Tick start = 0;
  CHECK(p.max_window_w(2 * kUs, &start) == Approx(25.0));  // (30 + 20) uJ over 2 us
  CHECK(start == kUs);
  CHECK(p.max_window_w(kUs / 4) == Approx(30.0));          // at least one bucket
  CHECK(p.max_window_w(1000 * kUs) == Approx(80e-6 / 4.5e-6));  // longer than the run: the run's mean
}

TEST_CASE("energy: an idle gap in a workload lowers the average power, not the peak", "[energy]") {
  ChipConfig cfg;
  EnergyCounts work = busy_counts();
  // Two bursts of the same work, back to back or 100 us apart: the gap adds only static energy.
  EnergyCounts gap = work;
  gap.duration = work.duration + 100 * kUs;
  gap.dram_refreshes = refreshes_in(cfg, gap.duration);
  work.dram_refreshes = refreshes_in(cfg, work.duration);
  double avg_work = energy_of(cfg.energy, work).total() / (ticks_to_ns(work.duration) * 1e-9);
  double avg_gap = energy_of(cfg.energy, gap).total() / (ticks_to_ns(gap.duration) * 1e-9);
  CHECK(avg_gap < avg_work);
  CHECK(avg_gap > static_power_w(cfg, work.active_cores));  // never below the idle floor
  // Over time: the same busy buckets with idle (static-only) buckets between them.
  double idle = static_power_w(cfg, 32) * 1e-6, busy = 50e-6;
  PowerProfile a, b;
  a.bucket = b.bucket = kUs;
  a.bucket_j = {busy, busy, busy, busy};
  b.bucket_j = {busy, busy, idle, idle, busy, busy};
  a.end = 4 * kUs;
  b.end = 6 * kUs;
  auto mean = [](const PowerProfile& p) {
    double j = 0;
    for (double v : p.bucket_j) j += v;
    return j / (ticks_to_ns(p.end) * 1e-9);
  };
  CHECK(mean(b) < mean(a));
  CHECK(b.peak_w() == a.peak_w());
}

TEST_CASE("energy: the per-token hook for model runs", "[energy]") {
  nlohmann::ordered_json e = {{"total_j", 2.0}};
  add_energy_per_token(e, 8);
  CHECK(e["j_per_token"].get<double>() == 0.25);  // 2 J / 8 tokens
  CHECK(e["tokens_per_j"].get<double>() == 4.0);
  add_energy_per_token(e, 0);                      // no tokens: no division by zero
  CHECK(e["j_per_token"].get<double>() == 0.0);
  CHECK(e["tokens_per_j"].get<double>() == 0.0);
}

TEST_CASE("energy: the summary line names no biggest part when nothing was spent", "[energy]") {
  // Every energy.* coefficient 0 (a what-if): the line said "most in pt (0%)", a part that
  // spent nothing. With energy it names the largest: 3 of 4 J in static, 75 %.
  nlohmann::ordered_json s;
  s["energy"] = {{"total_j", 0.0}, {"average_w", 0.0}, {"peak_w", 0.0}, {"biggest_component", "pt"},
                 {"by_component_j", {{"pt", 0.0}, {"static", 0.0}}}};
  CHECK(energy_text(s) == "  energy    0 nJ, 0.0 W average, 0.0 W peak\n");
  s["energy"]["total_j"] = 4.0;
  s["energy"]["biggest_component"] = "static";
  s["energy"]["by_component_j"]["static"] = 3.0;
  CHECK_THAT(energy_text(s), Catch::Contains("; most in static (75%)"));
}
