#pragma once
// A seeded random source with its own distributions (uniform, exponential, normal, gamma), so
// that generated request streams are byte-identical on every standard library.
#include <cmath>
#include <cstdint>

#include "sim/common/mix64.h"

namespace dfsim::serve {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}

  // splitmix64: a full-period 64-bit generator.
  std::uint64_t next() { return mix64(s_ += 0x9E3779B97F4A7C15ull); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Exponential with the given mean.
  double exponential(double mean) { return -std::log1p(-uniform()) * mean; }
  // Normal (Box-Muller, one value per call).
  double normal(double mean, double sd) {
    double u1 = 1.0 - uniform(), u2 = uniform();
    return mean + sd * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
  // Gamma with shape k and scale theta (Marsaglia-Tsang; k < 1 boosted by U^(1/k)).
  double gamma(double k, double theta) {
    if (k < 1) return gamma(k + 1, theta) * std::pow(1.0 - uniform(), 1.0 / k);
    double d = k - 1.0 / 3, c = 1 / std::sqrt(9 * d);
    for (;;) {
      double x = normal(0, 1), v = 1 + c * x;
      if (v <= 0) continue;
      v = v * v * v;
      double u = 1.0 - uniform();
      if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v * theta;
    }
  }

 private:
  std::uint64_t s_;
};

}  // namespace dfsim::serve
