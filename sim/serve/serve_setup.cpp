#include "sim/serve/serve_setup.h"

#include <fmt/format.h>

#include "sim/app/cli.h"
#include "sim/common/error.h"

namespace dfsim::serve {

std::int64_t kv_blocks_from_memory(const ModelInfo& m, const ChipConfig& cfg, int tp, int block_size) {
  double usable = static_cast<double>(cfg.memory.capacity_bytes) * kUsableMemoryShare * tp;
  double free = usable - static_cast<double>(m.weight_bytes());
  if (free <= 0)
    throw UsageError(fmt::format("--model {}: weights of {:.2f} GB do not fit {} card(s) of {:.2f} GB usable (raise --tp)",
                                 m.name, m.weight_bytes() / 1e9, tp, usable / tp / 1e9));
  return static_cast<std::int64_t>(free / (static_cast<double>(m.kv_bytes_per_token()) * block_size));
}

void check_scheduler_params(SchedulerParams& p, const BucketSpec& b, const ModelInfo& m) {
  if (p.block_size < 1 || p.block_size > 4096) throw UsageError("--block-size must be in [1, 4096] (the plugin uses 64 or 128)");
  if (p.max_num_seqs < 1 || p.max_num_seqs > 4096) throw UsageError("--max-num-seqs must be in [1, 4096]");
  if (p.max_model_len < 1) throw UsageError("--max-model-len must be >= 1");
  if (p.max_model_len > m.max_position)
    throw UsageError(fmt::format("--max-model-len {} exceeds the model's max_position_embeddings {} ({})", p.max_model_len,
                                 m.max_position, m.file));
  if (p.max_num_batched_tokens < p.block_size)
    throw UsageError(fmt::format("--max-num-batched-tokens {} must hold at least one block (--block-size {})",
                                 p.max_num_batched_tokens, p.block_size));
  if (p.prefill_chunk == 0) p.prefill_chunk = std::min(512, p.max_num_batched_tokens) / p.block_size * p.block_size;
  if (p.prefill_chunk % p.block_size || p.prefill_chunk < p.block_size || p.prefill_chunk > p.max_num_batched_tokens)
    throw UsageError(fmt::format("--prefill-chunk {} must be a multiple of --block-size {} and at most --max-num-batched-tokens {}",
                                 p.prefill_chunk, p.block_size, p.max_num_batched_tokens));
  // The longest request's tkv: left padding (< one chunk, whole blocks) + max_model_len - 1.
  std::int64_t worst_tkv = static_cast<std::int64_t>(p.prefill_chunk - p.block_size) + p.max_model_len;
  if (worst_tkv > p.volumetric_limit)
    throw UsageError(fmt::format("--max-model-len {} plus up to {} tokens of prefill padding exceeds --volumetric-limit {}",
                                 p.max_model_len, p.prefill_chunk - p.block_size, p.volumetric_limit));
  std::int64_t one = (p.max_model_len + p.block_size - 1) / p.block_size;
  if (p.num_blocks < one)
    throw UsageError(fmt::format("--num-blocks {} cannot hold one request of --max-model-len {} ({} blocks of {} tokens)",
                                 p.num_blocks, p.max_model_len, one, p.block_size));
  if (b.batch.empty() || b.batch.back() < p.max_num_seqs)
    throw UsageError(fmt::format("--batch-buckets: the largest bucket must be >= --max-num-seqs {}", p.max_num_seqs));
  if (b.query_quantum < 1) throw UsageError("--query-quantum must be >= 1");
}

void check_requests_fit(const std::vector<Request>& reqs, const SchedulerParams& p, const std::string& origin) {
  for (const auto& r : reqs)
    if (static_cast<std::int64_t>(r.prompt_tokens) + r.output_tokens > p.max_model_len)
      throw InputError(origin, fmt::format("request {}", r.id),
                       fmt::format("prompt_tokens + output_tokens = {} exceeds --max-model-len {}",
                                   r.prompt_tokens + r.output_tokens, p.max_model_len));
}

}  // namespace dfsim::serve
