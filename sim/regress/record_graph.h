#pragma once
// The op graph (dfsim.ops) of one measured kernel of the device records: the per-row builder
// of `dfsim accuracy`. One builder per record family, in a table keyed by the record op;
// docs/accuracy.md lists them.
#include <string>

#include "sim/common/json_io.h"
#include "sim/regress/device_records.h"

namespace dfsim {

// The op graph of a record, or null with `reason` set when the op is unknown to the builder.
// A record whose graph the compiler refuses (a forced split it cannot make) still gets its
// graph: the run then fails and the row is reported as skipped with the compiler's reason.
Json record_graph(const DeviceRecords& file, const DeviceRecord& r, std::string* reason);

// The category torch-spyre reports the op under: pointwise, broadcast, reduction, transport,
// softmax, matmul, bmm (or other).
std::string record_category(const std::string& op);

// "2048x1024", "2048x2048x1024" (R x C x N), "8x1024x2048x1024" for batched ops (B x R x C x N).
std::string record_shape(const DeviceRecords& file, const DeviceRecord& r);

// A record's configuration: each from its CSV column when filled, else from the harness
// parameter in `params` (SENCORES, BENCH_ROWS, BENCH_COLS, BENCH_N, BENCH_B, BENCH_TILES,
// LX_PLANNING), else the harness's default (32 cores, 512 x 16384, N = C, B = 8, untiled, LX
// planning on).
struct RecordConfig {
  long long cores = 32, R = 512, C = 16384, N = 16384, B = 8, tiles = 0;
  bool lx_planning = true;
};
RecordConfig record_config(const DeviceRecords& file, const DeviceRecord& r);

}  // namespace dfsim
