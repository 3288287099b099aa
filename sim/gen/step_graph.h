#pragma once
// `dfsim gen`: the op graph of one forward step of a model (docs/workloads.md).
#include <string>

#include "sim/common/dtype.h"
#include "sim/gen/model_spec.h"

namespace dfsim {

enum class StepPhase { prefill, decode };

// What one step computes: a prefill of `tokens` new tokens per sequence, or a decode step of
// one token per sequence over a KV cache of `context` tokens, for `batch` sequences.
struct StepSpec {
  StepPhase phase = StepPhase::decode;
  std::int64_t batch = 1;
  std::int64_t tokens = 1;      // prefill: prompt tokens per sequence (decode: 1)
  std::int64_t context = 0;     // tokens already in the KV cache per sequence (prefill: earlier chunks)
  std::int64_t layers = 0;      // 0: all of the model's layers, else its first N
  Dtype dtype = Dtype::fp16;    // weights, KV cache and activations
  int cores = 32;               // compile.cores of the graph (the card's 32 by default)
  // Tensor parallelism over `tp` cards (compile.cards), sharded as the Spyre vLLM plugin does:
  // the graph is one card's shard, with the all-reduces and the all-gather between cards.
  int tp = 1;
  // Token ids in from the host, logits out to it, over PCIe: always with tp > 1.
  bool host_io = false;
};

// Tensor names of the generated graphs carry where they belong, so that reports can group
// kernels: `l<i>.attn.*`, `l<i>.mlp.*`, `l<i>.norm*` inside layer i; `embed.*`, `head.*`,
// `final_norm.*` outside the layers (docs/workloads.md).
std::string layer_prefix(std::int64_t layer);

// Throws InputError (file = the CLI option, like "--context", or the model's file) when the
// step does not fit the model; generate_step_graph checks this first.
void check_step(const ModelSpec& model, const StepSpec& step);

// The op graph as JSON text. Throws InputError (file = the model's file, or `what` for CLI
// options) when the step does not fit the model (e.g. context beyond max positions).
std::string generate_step_graph(const ModelSpec& model, const StepSpec& step);

// Helpers the two generators share (step_graph.cpp).
std::string step_graph_name(const ModelSpec& model, const StepSpec& step);

}  // namespace dfsim
