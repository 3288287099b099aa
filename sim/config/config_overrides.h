#pragma once
// `--set key.path=value` overrides applied to a merged config.
#include <string>

#include "sim/common/json_io.h"
#include "sim/config/config_layers.h"

namespace dfsim {

// Applies one override: `key.path` names a parameter ("core.pt.rows") or one map entry
// ("core.pt.simd.fp16"); `value` is parsed as JSON, else taken as a string. A map value merges
// key-wise. The value is checked at once; errors name the file "--set" and the dotted key.
void apply_override(Json& merged, const std::string& arg, Origins& origins);

}  // namespace dfsim
