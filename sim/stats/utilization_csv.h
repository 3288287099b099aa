#pragma once
// utilization.csv: one row per time bucket, one column per unit (busy fraction 0..1).
#include <ostream>

#include "sim/stats/recorder.h"

namespace dfsim {

// Buckets are merged in whole multiples of the recorded width so that at most
// `max_rows` rows cover [0, end).
void write_utilization_csv(std::ostream& out, const Recorder& rec, Tick end, std::size_t max_rows = 1000);

}  // namespace dfsim
