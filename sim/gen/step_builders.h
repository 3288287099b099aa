#pragma once
// Internal to sim/gen: the building blocks of a step graph and the two generators.
#include <string>

#include "sim/gen/graph_writer.h"
#include "sim/gen/model_spec.h"
#include "sim/gen/step_graph.h"

namespace dfsim {

// Writes the tensors and ops of one step through an OpGraphWriter, in the step's dtype.
struct StepBuilder {
  StepBuilder(const ModelSpec& m, const StepSpec& s, OpGraphWriter& w);
  const ModelSpec& m;
  const StepSpec& s;  // layers resolved (>= 1)
  OpGraphWriter& w;
  Dtype dt;
  std::int64_t B, T;  // sequences, new tokens per sequence
  std::uint64_t weight_bytes = 0;  // of the weights declared so far
  // One card's share under tensor parallelism (all of it with tp 1): query heads, KV heads
  // (replicated when fewer than the cards), MLP columns, vocabulary rows.
  int tp;
  std::int64_t heads, kv_heads, intermediate, vocab;

  std::string weight(const std::string& name, const Shape& shape);
  // x [..., K] @ weight [N, K]^T (+ bias [N]), the weight named `name`.w.
  std::string linear(const std::string& x, const std::string& name, std::int64_t out_features, bool bias);
  std::string scale(const std::string& x, double factor, const std::string& out);  // x unchanged if factor == 1
  std::string norm(const std::string& x, const std::string& name);                 // the model's norm, weights included
  std::string to_heads(const std::string& x, std::int64_t heads, const std::string& name);
  std::string from_heads(const std::string& x, const std::string& name);
  // The Q, K and V projections of x [B, T, D] in heads: [B, H, T, hd] and [B, Hkv, T, hd] x 2.
  struct Heads {
    std::string q, k, v;
  };
  Heads qkv(const std::string& x, const std::string& prefix);
  std::string mlp(const std::string& x, const std::string& prefix);  // gated (SwiGLU) or plain
  // A row-parallel projection (o_proj, down_proj): each card's partial sum, then an all-reduce
  // (the bias added once after it). A plain linear with tp 1.
  std::string row_parallel(const std::string& x, const std::string& name, std::int64_t out_features, bool bias);
  // x summed over the cards (an all_reduce named `out`); x itself with tp 1.
  std::string all_reduce(const std::string& x, const std::string& out);
  bool host_io() const { return tp > 1 || s.host_io; }
};

void write_decoder_step(StepBuilder& b);
void write_encoder_step(StepBuilder& b);

}  // namespace dfsim
