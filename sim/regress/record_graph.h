#pragma once
// The op graph (dfsim.ops) of one measured kernel of the device records: the per-row builder
// of `dfsim accuracy`. One branch per record family; docs/accuracy.md has the table.
#include <string>

#include "sim/common/json_io.h"
#include "sim/regress/device_records.h"

namespace dfsim {

// What the compiler of this build understands, so that a record is written the way it runs.
struct CompilerSupport {
  bool fuse_option = false;  // the op graph's compile.fuse exists (else: one kernel per op)
};
// Probes this build's op graph reader (no simulation).
CompilerSupport probe_compiler_support();

// The op graph of a record, or null with `reason` set when the op is unknown to the builder.
// Families the compiler cannot lower yet still get their graph: the run then fails and the
// row is reported as skipped with the compiler's reason.
Json record_graph(const DeviceRecords& file, const DeviceRecord& r, const CompilerSupport& support,
                  std::string* reason);

// The category torch-spyre reports the op under: pointwise, broadcast, reduction, transport,
// softmax, matmul, bmm (or other).
std::string record_category(const std::string& op);

// "2048x1024", "2048x2048x1024" (R x C x N), "8x1024x2048x1024" for batched ops (B x R x C x N).
std::string record_shape(const DeviceRecords& file, const DeviceRecord& r);

}  // namespace dfsim
