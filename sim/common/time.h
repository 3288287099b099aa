#pragma once
// Simulated time: integer femtoseconds, and clock domains that convert cycles to it.
// Every conversion between cycles and time goes through ClockDomain.
#include <cmath>
#include <cstdint>

namespace dfsim {

using Tick = std::uint64_t;  // femtoseconds; 2^64 fs is about 5 hours of simulated time

inline constexpr Tick kTicksPerNs = 1'000'000;

inline double ticks_to_ns(Tick t) { return static_cast<double>(t) / kTicksPerNs; }
inline Tick ns_to_ticks(double ns) { return static_cast<Tick>(std::llround(ns * kTicksPerNs)); }

// A clock: its period in ticks, rounded to the femtosecond.
class ClockDomain {
 public:
  ClockDomain() = default;
  explicit ClockDomain(double mhz) : mhz_(mhz), period_(static_cast<Tick>(std::llround(1e9 / mhz))) {}
  double mhz() const { return mhz_; }
  Tick period() const { return period_; }
  Tick cycles(std::uint64_t n) const { return n * period_; }
  // Whole cycles elapsed by time t (rounded up: a partial cycle counts).
  std::uint64_t to_cycles(Tick t) const { return (t + period_ - 1) / period_; }

 private:
  double mhz_ = 1000.0;
  Tick period_ = 1'000'000;
};

}  // namespace dfsim
