#pragma once
// Checks a serving configuration before any work: the model fits the cards, the KV pool holds
// one longest request, the limits agree; and every request fits max_model_len. Errors name the
// option or the file (exit 2).
#include <string>
#include <vector>

#include "sim/config/chip_config.h"
#include "sim/serve/buckets.h"
#include "sim/serve/model_info.h"
#include "sim/serve/requests.h"
#include "sim/serve/serving_loop.h"

namespace dfsim::serve {

// Share of a card's memory usable by programs: ~112 GB of 128 GB after ECC (DESIGN.md, [arch]).
constexpr double kUsableMemoryShare = 112.0 / 128.0;

// UsageError unless --block-size is in [1, 4096].
void check_block_size(int block_size);

// KV blocks that fit on `tp` cards after the weights; UsageError naming --model/--tp if the
// weights alone do not fit.
std::int64_t kv_blocks_from_memory(const ModelInfo& m, const ChipConfig& cfg, int tp, int block_size);

// The KV pool: `asked` blocks (--num-blocks; 0: all that fit). The weights must fit either way,
// and UsageError says how many blocks fit when more are asked for.
std::int64_t kv_pool_blocks(const ModelInfo& m, const ChipConfig& cfg, int tp, int block_size, std::int64_t asked);

// The config keys that can change a run whose step times come from a table: the KV pool's
// memory, the cards, the name; with the table's energy, what the idle power and the budget
// are made of. InputError at the first --set of any other key (it would be ignored).
const std::vector<std::string>& step_table_config_keys(bool table_has_energy);
void check_step_table_sets(const std::vector<std::string>& sets, bool table_has_energy);

// Fills p.prefill_chunk (min(512, max_num_batched_tokens), whole blocks) when 0 and checks the
// relations between the limits (UsageError naming the option).
void check_scheduler_params(SchedulerParams& p, const BucketSpec& b, const ModelInfo& m);

// Every request fits max_model_len (and so the volumetric limit); `origin` names the file or
// the generator options in the error.
void check_requests_fit(const std::vector<Request>& reqs, const SchedulerParams& p, const std::string& origin);

}  // namespace dfsim::serve
