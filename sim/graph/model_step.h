#pragma once
// The optional "model" object of an op graph: which step of which model the graph computes
// (written by `dfsim gen`; `dfsim run` reports such graphs per token, per layer and per op family).
#include <cstdint>
#include <string>

namespace dfsim {

struct ModelStep {
  std::string name;                // the model, e.g. llama-3.1-8b
  std::string phase = "decode";    // decode (one new token per sequence) or prefill
  std::int64_t batch = 1;          // sequences
  std::int64_t tokens = 1;         // new tokens per sequence (decode: 1)
  std::int64_t context = 0;        // tokens already in each sequence's KV cache
  std::int64_t layers = 0;         // layers in the graph (0: not stated)
  std::int64_t model_layers = 0;   // layers of the whole model (0: not stated)
  std::uint64_t weight_bytes = 0;  // bytes of the weight tensors the graph declares (0: not stated)
  bool decode() const { return phase == "decode"; }
};

}  // namespace dfsim
