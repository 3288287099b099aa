#pragma once
// The shapes the serving plugin pre-compiles (it compiles with dynamic=False), and the rounding
// of a step to the smallest of them that holds it: sequence counts from a list (powers of two
// from 4 up to max_num_seqs), KV lengths in power-of-two block counts, prefill query lengths in
// multiples of a quantum (the prefill chunk). docs/serving.md cites the plugin's docs.
#include <string>
#include <vector>

namespace dfsim::serve {

enum class Phase { prefill, decode };
const char* phase_name(Phase p);

// One compiled step shape: the key of a step time.
struct StepShape {
  Phase phase = Phase::decode;
  int batch = 1;          // sequences (prefill: 1, one prefill at a time)
  int kv_tokens = 0;      // KV length the step attends over, in tokens (a whole number of blocks)
  int query_tokens = 1;   // tokens each sequence computes (decode: 1; prefill: the padded chunk)
  bool operator<(const StepShape& o) const;
  bool operator==(const StepShape& o) const;
  std::string text() const;  // "decode batch=8 kv_tokens=1024 query_tokens=1"
};

struct BucketSpec {
  std::vector<int> batch;     // ascending decode batch sizes
  int block_size = 64;
  bool kv_pow2 = true;        // KV length in power-of-two block counts (else any block count)
  int query_quantum = 512;    // prefill query lengths in multiples of this

  // Powers of two from 4 up to max_num_seqs, plus max_num_seqs itself.
  static std::vector<int> default_batches(int max_num_seqs);
  int batch_bucket(int seqs) const;            // smallest listed size >= seqs
  int kv_bucket(int tokens) const;             // tokens rounded up to the KV buckets
  int query_bucket(int tokens) const;          // tokens rounded up to the quantum
};

}  // namespace dfsim::serve
