#pragma once
// Error statistics of simulated against measured times: RMS and mean signed error (%) and
// Spearman's rank correlation.
#include <vector>

namespace dfsim {

struct ErrorStats {
  int count = 0;
  double rms_pct = 0, mean_pct = 0;
  double spearman = 0;  // NaN with fewer than 2 rows or no spread
};

// `errors_pct[i]` = 100·(simulated − measured)/measured; Spearman over (measured, simulated).
ErrorStats error_stats(const std::vector<double>& measured, const std::vector<double>& simulated);

// Spearman's rank correlation (ties get their mean rank); NaN when undefined.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace dfsim
