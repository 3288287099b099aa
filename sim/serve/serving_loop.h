#pragma once
// The serving scheduler as a plain discrete-event loop over steps: continuous batching with
// chunked prefill, one prefill at a time interleaved with decode steps, admission by batch
// capacity, KV blocks and the volumetric limit, preemption by recompute when blocks run out.
// The rules follow the vLLM Spyre plugin's public docs (docs/serving.md cites them).
#include <cstdint>
#include <vector>

#include "sim/serve/buckets.h"
#include "sim/serve/requests.h"
#include "sim/serve/step_times.h"

namespace dfsim::serve {

struct SchedulerParams {
  int max_num_seqs = 16;
  int max_num_batched_tokens = 512;
  int max_model_len = 3072;
  int block_size = 64;
  std::int64_t num_blocks = 0;            // KV blocks in the pool
  std::int64_t volumetric_limit = 131072; // batch x max tkv
  int prefill_chunk = 512;                // tokens per prefill step (a multiple of block_size)
  bool interleave = true;                 // no two consecutive prefills while decodes wait
};

struct RequestRecord {
  Request req;
  Ns scheduled = -1, first_token = -1, finish = -1;
  int preemptions = 0;
  double energy_j = 0;      // its share of the steps it ran in (a decode step's energy split evenly over its batch)
};

struct StepRecord {
  Ns start = 0, end = 0;
  StepShape shape;          // the compiled shape it ran at
  int batch = 0;            // real sequences in the step
  int real_tokens = 0;      // real query tokens (decode: batch; prefill: the chunk's prompt tokens)
  int max_tkv = 0;          // decode: the batch's max tkv (left padding + context + 1); prefill: tkv after the chunk
  std::int64_t blocks_used = 0;  // KV blocks held during the step
  int waiting = 0;          // arrived requests not started (or preempted) at the step's start
  int running = 0;          // decoding sequences at the step's start (after preemptions)
  int in_system = 0;        // waiting + prefilling + decoding at the step's start
  std::int64_t request = -1;  // prefill: the request's id
  int chunk = 0, chunks = 0;  // prefill: which chunk of how many
  double energy_j = -1;     // the step's energy (< 0: the step-time source gives none)
};

struct SlotSpan {           // a request holding a batch slot (prefill through finish or preemption)
  int slot = 0;
  std::int64_t request = 0;
  Ns start = 0, end = 0;
  bool preempted = false;
};

struct ServeResult {
  std::vector<RequestRecord> requests;  // in input order
  std::vector<StepRecord> steps;
  std::vector<Ns> itl;                  // every inter-token gap of every request
  std::vector<SlotSpan> slots;
  std::int64_t preemptions = 0;
  bool energy = true;                   // every step's energy is known
};

// Runs `requests` (sorted by arrival) to completion. The caller has checked that every request
// fits (serve_checks.h); a state in which no step can ever run is a SimError.
ServeResult run_serving(const std::vector<Request>& requests, const SchedulerParams& p, const BucketSpec& b,
                        StepTimeProvider& times);

// Prefill layout of `tokens` prompt tokens (docs: right-pad to a block, left-pad to a whole
// number of chunks): the left padding in tokens and the number of chunks.
struct PrefillLayout {
  int left_pad = 0, chunks = 0;
};
PrefillLayout prefill_layout(int tokens, int block_size, int chunk);

}  // namespace dfsim::serve
