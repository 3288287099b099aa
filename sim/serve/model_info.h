#pragma once
// What serving needs to know of a model: its KV-cache bytes per token and its weight bytes
// (for the number of KV blocks that fit in the cards' memory), its maximum context, and the
// hyperparameters `dfsim gen` builds its step graphs from. Read from a model file of
// workloads/models/ (docs/workloads.md lists the keys).
#include <cstdint>
#include <string>

#include "sim/gen/model_spec.h"

namespace dfsim::serve {

struct ModelInfo {
  ModelSpec spec;  // the whole model file
  std::string name, file;
  int layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
  std::int64_t hidden = 0, intermediate = 0, vocab = 0;
  std::int64_t max_position = 0;
  bool tie_embeddings = false;
  int dtype_bytes = 2;

  std::int64_t parameters() const { return static_cast<std::int64_t>(spec.parameters()); }
  std::int64_t weight_bytes() const { return parameters() * dtype_bytes; }
  std::int64_t kv_bytes_per_token() const {  // K and V of every layer
    return 2ll * layers * kv_heads * head_dim * dtype_bytes;
  }
};

// MODEL is a file path or a name in workloads/models/ (MODEL.json). InputError naming the file
// and the JSON path on anything missing or out of range.
ModelInfo load_model_info(const std::string& model);

}  // namespace dfsim::serve
