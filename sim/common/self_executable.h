#pragma once
// The running dfsim binary, so that child runs (regress, accuracy, sweep) use the very same build.
#include <string>

namespace dfsim {

// The path of this executable (/proc/self/exe); SimError if it cannot be found.
std::string self_executable();

}  // namespace dfsim
