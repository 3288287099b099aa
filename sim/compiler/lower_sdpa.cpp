// placeholder
#include <stdexcept>
#include "sim/compiler/lowering.h"
namespace dfsim {
void lower_sdpa(LowerContext&, const Op&, const std::string&) { throw std::logic_error("sdpa: not lowered yet"); }
}  // namespace dfsim
