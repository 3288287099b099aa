// `dfsim calibrate`: not yet implemented (issue 3).
#include "sim/app/cli.h"

namespace dfsim {

int cmd_calibrate(const std::vector<std::string>&) { throw UsageError("calibrate is not implemented yet"); }

}  // namespace dfsim
