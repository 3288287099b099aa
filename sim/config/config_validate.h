#pragma once
// Checking a merged config: every key registered, every value of the right type and range,
// and the relations between parameters. Errors name the file that set the offending value.
#include <string>

#include "sim/common/json_io.h"
#include "sim/config/chip_config.h"
#include "sim/config/config_layers.h"

namespace dfsim {

// Every leaf of `merged` must be a registered parameter (or map entry) with a valid value.
// `fallback_file` is named for values without a recorded origin.
void validate_config_tree(const Json& merged, const Origins& origins, const std::string& fallback_file);

// Relations between parameters (usable LX <= LX, ring stops per channel, ...).
void check_config_relations(const ChipConfig& c, const Origins& origins, const std::string& fallback_file);

// "did you mean" text for an unknown key `key` at dotted group `group` ("" = top level), or "".
std::string unknown_key_hint(const std::string& group, const std::string& key);

}  // namespace dfsim
