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

// KV blocks that fit on `tp` cards after the weights; UsageError naming --model/--tp if the
// weights alone do not fit.
std::int64_t kv_blocks_from_memory(const ModelInfo& m, const ChipConfig& cfg, int tp, int block_size);

// Fills p.prefill_chunk (min(512, max_num_batched_tokens), whole blocks) when 0 and checks the
// relations between the limits (UsageError naming the option).
void check_scheduler_params(SchedulerParams& p, const BucketSpec& b, const ModelInfo& m);

// Every request fits max_model_len (and so the volumetric limit); `origin` names the file or
// the generator options in the error.
void check_requests_fit(const std::vector<Request>& reqs, const SchedulerParams& p, const std::string& origin);

}  // namespace dfsim::serve
