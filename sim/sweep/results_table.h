#pragma once
// results.csv and results.jsonl of a sweep: one row per point in point order, the axis values,
// the metrics read from each point's summary, status, message and host seconds (last, since it
// is the one column that depends on where and when a point ran).
#include <map>
#include <ostream>

#include "sim/sweep/point_store.h"
#include "sim/sweep/sweep_plan.h"

namespace dfsim {

struct SweepRow {
  PointResult result;
  Json metrics = Json::array();  // one value per metric (null when absent)
};

// The row of every point: its planning error, else `unrecorded[index]` (a run that ended
// without a record), else its record in the store (metrics read then), else "not_run".
std::vector<SweepRow> collect_rows(const SweepPlan& plan, const std::map<std::size_t, PointResult>& unrecorded);

void write_results_csv(std::ostream& out, const SweepPlan& plan, const std::vector<SweepRow>& rows);
void write_results_jsonl(std::ostream& out, const SweepPlan& plan, const std::vector<SweepRow>& rows);

}  // namespace dfsim
