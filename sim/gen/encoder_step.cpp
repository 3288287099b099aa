// One forward pass of a bidirectional encoder (BERT / XLM-RoBERTa family, as served for
// embeddings and reranking): word + position (+ token type) embeddings and LayerNorm; per
// layer attention and a GELU MLP, each followed by residual add and LayerNorm (post-norm);
// the pooled output (CLS token or mean), optionally through a dense + tanh pooler.
#include "sim/gen/step_builders.h"

namespace dfsim {

namespace {

std::string encoder_layer(StepBuilder& b, const std::string& h, std::int64_t i) {
  const ModelSpec& m = b.m;
  OpGraphWriter& w = b.w;
  const std::string p = layer_prefix(i);
  auto [q, k, v] = b.qkv(h, p);
  std::string a = w.op("sdpa", {q, k, v}, p + "attn.sdpa", w.shape(q), b.dt, {{"causal", false}});
  std::string o = b.linear(b.from_heads(a, p + "attn.merged"), p + "attn.o", m.hidden, m.attention_bias);
  std::string h1 = b.norm(w.op("add", {h, o}, p + "attn.residual", w.shape(h), b.dt), p + "attn_norm");
  std::string d = b.mlp(h1, p);
  return b.norm(w.op("add", {h1, d}, p + "mlp.residual", w.shape(h1), b.dt), p + "mlp_norm");
}

}  // namespace

void write_encoder_step(StepBuilder& b) {
  const ModelSpec& m = b.m;
  OpGraphWriter& w = b.w;
  const std::int64_t B = b.B, S = b.T, D = m.hidden;
  std::string ids = w.input("ids", {B, S}, Dtype::int32);
  std::string h = w.op("embedding", {b.weight("embed.w", {m.vocab, D}), ids}, "embed.words", {B, S, D}, b.dt);
  std::string pos_ids = w.input("position_ids", {S}, Dtype::int32);
  std::string pos = w.op("embedding", {b.weight("embed.pos.w", {m.max_positions, D}), pos_ids}, "embed.positions",
                         {S, D}, b.dt);
  h = w.op("add", {h, pos}, "embed.sum", {B, S, D}, b.dt);
  if (m.type_vocab > 0) {
    std::string type_ids = w.input("type_ids", {B, S}, Dtype::int32);
    std::string t = w.op("embedding", {b.weight("embed.type.w", {m.type_vocab, D}), type_ids}, "embed.types",
                         {B, S, D}, b.dt);
    h = w.op("add", {h, t}, "embed.sum_types", {B, S, D}, b.dt);
  }
  h = b.norm(h, "embed.norm");
  for (std::int64_t i = 0; i < b.s.layers; ++i) h = encoder_layer(b, h, i);
  if (m.pooling == "cls") h = w.op("slice", {h}, "pool.cls", {B, 1, D}, b.dt, {{"dim", 1}, {"start", 0}, {"end", 1}});
  else if (m.pooling == "mean") h = w.op("mean", {h}, "pool.mean", {B, D}, b.dt, {{"dim", 1}});
  if (m.pooling != "none" && m.pooler)
    h = w.op("tanh", {b.linear(h, "pool.dense", D, true)}, "pool.out", w.shape(h), b.dt);
  w.output(h);
}

}  // namespace dfsim
