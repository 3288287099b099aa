#include "sim/serve/buckets.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <tuple>

namespace dfsim::serve {

const char* phase_name(Phase p) { return p == Phase::prefill ? "prefill" : "decode"; }

bool StepShape::operator<(const StepShape& o) const {
  return std::tie(phase, batch, kv_tokens, query_tokens) < std::tie(o.phase, o.batch, o.kv_tokens, o.query_tokens);
}
bool StepShape::operator==(const StepShape& o) const {
  return std::tie(phase, batch, kv_tokens, query_tokens) == std::tie(o.phase, o.batch, o.kv_tokens, o.query_tokens);
}
std::string StepShape::text() const {
  return fmt::format("{} batch={} kv_tokens={} query_tokens={}", phase_name(phase), batch, kv_tokens, query_tokens);
}

std::vector<int> BucketSpec::default_batches(int max_num_seqs) {
  std::vector<int> out;
  for (int b = 4; b < max_num_seqs; b *= 2) out.push_back(b);
  out.push_back(max_num_seqs);
  return out;
}

int BucketSpec::batch_bucket(int seqs) const {
  auto it = std::lower_bound(batch.begin(), batch.end(), seqs);
  if (it == batch.end()) throw std::logic_error(fmt::format("decode batch {} exceeds the largest bucket", seqs));
  return *it;
}

int BucketSpec::kv_bucket(int tokens) const {
  long long blocks = (tokens + block_size - 1) / block_size;
  if (blocks < 1) blocks = 1;
  if (kv_pow2) {
    long long p = 1;
    while (p < blocks) p *= 2;
    blocks = p;
  }
  return static_cast<int>(blocks * block_size);
}

int BucketSpec::query_bucket(int tokens) const {
  return std::max(1, (tokens + query_quantum - 1) / query_quantum) * query_quantum;
}

}  // namespace dfsim::serve
