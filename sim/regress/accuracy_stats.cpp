#include "sim/regress/accuracy_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dfsim {

namespace {

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    double mean_rank = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k) r[idx[k]] = mean_rank;
    i = j + 1;
  }
  return r;
}

}  // namespace

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  std::size_t n = x.size();
  if (n < 2 || y.size() != n) return std::nan("");
  std::vector<double> rx = ranks(x), ry = ranks(y);
  double mx = std::accumulate(rx.begin(), rx.end(), 0.0) / n, my = std::accumulate(ry.begin(), ry.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  if (sxx == 0 || syy == 0) return std::nan("");
  return sxy / std::sqrt(sxx * syy);
}

ErrorStats error_stats(const std::vector<double>& measured, const std::vector<double>& simulated) {
  ErrorStats s;
  s.count = static_cast<int>(measured.size());
  if (s.count == 0) return s;
  double sq = 0, sum = 0;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    double e = 100.0 * (simulated[i] - measured[i]) / measured[i];
    sq += e * e;
    sum += e;
  }
  s.rms_pct = std::sqrt(sq / s.count);
  s.mean_pct = sum / s.count;
  s.spearman = spearman(measured, simulated);
  return s;
}

}  // namespace dfsim
