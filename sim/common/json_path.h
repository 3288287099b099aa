#pragma once
// Addressing a value inside a JSON document by a user-written path: "offchip.bytes_read",
// "offchip.channels.0.max_queue" (array elements by index) or a JSON pointer "/offchip/channels/0".
#include <string>

#include "sim/common/json_io.h"

namespace dfsim {

// The node at `path` in `doc` (object, array or scalar), or nullptr when the path names nothing.
const Json* find_json_path(const Json& doc, const std::string& path);

}  // namespace dfsim
