#include "sim/serve/serve_setup.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/app/cli.h"
#include "sim/common/error.h"

namespace dfsim::serve {

void check_block_size(int block_size) {
  if (block_size < 1 || block_size > 4096) throw UsageError("--block-size must be in [1, 4096] (the plugin uses 64 or 128)");
}

std::int64_t kv_blocks_from_memory(const ModelInfo& m, const ChipConfig& cfg, int tp, int block_size) {
  check_block_size(block_size);
  double usable = static_cast<double>(cfg.memory.capacity_bytes) * kUsableMemoryShare * tp;
  double free = usable - static_cast<double>(m.weight_bytes());
  if (free <= 0)
    throw UsageError(fmt::format("--model {}: weights of {:.2f} GB do not fit {} card(s) of {:.2f} GB usable (raise --tp)",
                                 m.name, m.weight_bytes() / 1e9, tp, usable / tp / 1e9));
  // (Capped where a double still counts blocks exactly: a tiny model on a huge memory.)
  return static_cast<std::int64_t>(std::min(free / (static_cast<double>(m.kv_bytes_per_token()) * block_size), 1e15));
}

std::int64_t kv_pool_blocks(const ModelInfo& m, const ChipConfig& cfg, int tp, int block_size, std::int64_t asked) {
  std::int64_t fit = kv_blocks_from_memory(m, cfg, tp, block_size);
  if (asked > fit)
    throw UsageError(fmt::format("--num-blocks {}: only {} blocks of {} tokens fit in {} card(s) of {:.2f} GB usable "
                                 "(memory.capacity_bytes x 112/128) next to the {:.2f} GB of weights",
                                 asked, fit, block_size, tp,
                                 static_cast<double>(cfg.memory.capacity_bytes) * kUsableMemoryShare / 1e9,
                                 m.weight_bytes() / 1e9));
  return asked > 0 ? asked : fit;
}

const std::vector<std::string>& step_table_config_keys(bool table_has_energy) {
  // cmd_serve reads these of the config when a table gives the step times: the KV pool
  // (kv_blocks_from_memory), the cards for --tp, the name in the outputs, sim.trace (false: no
  // trace.json, as for run; a sweep sets it on every point); with energy, the idle cards' static
  // power (static_power_w: card and core static power, the cores, DRAM refresh) and the budget.
  static const std::vector<std::string> base = {"memory.capacity_bytes", "system.cards", "name", "sim.trace"};
  static const std::vector<std::string> energy = [] {
    std::vector<std::string> k = base;
    k.insert(k.end(), {"card.cores", "card.power_budget_w", "energy.static.card_w", "energy.static.core_w",
                       "energy.dram.refresh_nj", "memory.lpddr5.trefi", "memory.clock_mhz", "memory.channels"});
    return k;
  }();
  return table_has_energy ? energy : base;
}

void check_step_table_sets(const std::vector<std::string>& sets, bool table_has_energy) {
  const auto& keys = step_table_config_keys(table_has_energy);
  for (const auto& s : sets) {
    std::string key = s.substr(0, s.find('='));
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    std::string list;
    for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
    throw InputError("--set", key,
                     fmt::format("cannot change the results: --step-table gives the step times; with a table{} only {} "
                                 "matter",
                                 table_has_energy ? " (with energy)" : " (without energy_mj)", list));
  }
}

void check_scheduler_params(SchedulerParams& p, const BucketSpec& b, const ModelInfo& m) {
  check_block_size(p.block_size);
  if (p.max_num_seqs < 1 || p.max_num_seqs > 4096) throw UsageError("--max-num-seqs must be in [1, 4096]");
  if (p.max_model_len < 1) throw UsageError("--max-model-len must be >= 1");
  if (p.max_model_len > m.max_position)
    throw UsageError(fmt::format("--max-model-len {} exceeds the model's max_position_embeddings {} ({})", p.max_model_len,
                                 m.max_position, m.file));
  if (p.max_num_batched_tokens < p.block_size)
    throw UsageError(fmt::format("--max-num-batched-tokens {} must hold at least one block (--block-size {})",
                                 p.max_num_batched_tokens, p.block_size));
  if (p.prefill_chunk == 0) {  // the default: min(512, max_num_batched_tokens) in whole blocks
    int room = std::min(512, p.max_num_batched_tokens);
    if (room < p.block_size)
      throw UsageError(fmt::format("--block-size {}: the default prefill chunk, min(512, --max-num-batched-tokens {}) = {} "
                                   "tokens, holds no whole block; give --prefill-chunk (a multiple of --block-size, at most "
                                   "--max-num-batched-tokens)",
                                   p.block_size, p.max_num_batched_tokens, room));
    p.prefill_chunk = room / p.block_size * p.block_size;
  }
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
