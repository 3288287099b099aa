#pragma once
// Judging one finished case of a suite: its expected metrics against its summary.json, and
// the analytical cross-checks it asks for.
#include <string>
#include <vector>

#include "sim/regress/suite.h"

namespace dfsim {

// One line of the regress table.
struct MetricRow {
  std::string metric, expected, got, delta, tolerance;
  bool pass = true;
  std::string json_path;  // the expectation's path in the suite ("" for a check)
  Json expected_value, got_value;  // for --update
};

// What became of one case.
struct CaseResult {
  enum class Status { pass, fail } status = Status::pass;
  std::string error;  // a run that did not finish (one line)
  std::vector<MetricRow> rows;
};

// Compares a case's expectations with the summary.json in `out_dir` and runs its checks;
// `repeat_dir` is the second run of a determinism case ("" otherwise). An expectation the run
// cannot meet whatever it gives (a metric summary.json does not have, a value of another
// kind) is a suite error: InputError at its JSON path.
CaseResult evaluate_case(const Suite& suite, const SuiteCase& c, const std::string& out_dir,
                         const std::string& repeat_dir);

// The analytical cross-checks (docs/regression.md), each a row that passes or fails.
MetricRow check_roofline(const Json& summary);
MetricRow check_offchip_peak(const Json& summary, const std::string& utilization_csv);
MetricRow check_determinism(const std::string& dir_a, const std::string& dir_b);

}  // namespace dfsim
