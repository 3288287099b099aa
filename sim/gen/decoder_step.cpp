// One step of a decoder-only LLM (Llama, Granite): token embedding; per layer RMSNorm, Q/K/V
// projections, RoPE, KV-cache write, grouped-query attention over the cache, output
// projection, residual, RMSNorm, SwiGLU MLP, residual; final norm; LM head.
#include "sim/gen/step_builders.h"

namespace dfsim {

namespace {

// One decoder layer on h [B, T, D]; returns the layer's output.
std::string decoder_layer(StepBuilder& b, const std::string& h, std::int64_t i, const std::string& cos,
                          const std::string& sin) {
  const ModelSpec& m = b.m;
  OpGraphWriter& w = b.w;
  const std::string p = layer_prefix(i);
  const std::int64_t B = b.B, hd = m.head_dim, Hkv = b.kv_heads;  // this card's KV heads
  const bool decode = b.s.phase == StepPhase::decode;
  // Cache rows: the context already there (a decode's earlier tokens, or a chunked prefill's
  // earlier chunks) plus this step's tokens, written at `context`.
  const std::int64_t cached = b.s.context, rows = cached + b.T;

  std::string n1 = b.norm(h, p + "attn_norm");
  auto [q, k, v] = b.qkv(n1, p);
  q = w.op("rope", {q, cos, sin}, p + "attn.q_rope", w.shape(q), b.dt);
  k = w.op("rope", {k, cos, sin}, p + "attn.k_rope", w.shape(k), b.dt);
  std::string kc = w.input(p + "attn.k_cache", {B, Hkv, rows, hd}, b.dt);
  std::string vc = w.input(p + "attn.v_cache", {B, Hkv, rows, hd}, b.dt);
  kc = w.op("kv_write", {kc, k}, p + "attn.k_cache_new", w.shape(kc), b.dt, {{"position", cached}});
  vc = w.op("kv_write", {vc, v}, p + "attn.v_cache_new", w.shape(vc), b.dt, {{"position", cached}});
  // A prefill's query i is token cached + i: it sees the cache and this chunk's tokens up to it.
  OJson attrs = {{"causal", !decode}};
  if (!decode && cached > 0) attrs["causal_offset"] = cached;
  if (m.attention_multiplier > 0) attrs["scale"] = m.attention_multiplier;
  std::string a = w.op("sdpa", {q, kc, vc}, p + "attn.sdpa", w.shape(q), b.dt, attrs);
  std::string o = b.row_parallel(b.from_heads(a, p + "attn.merged"), p + "attn.o", m.hidden, m.attention_bias);
  std::string h1 = w.op("add", {h, b.scale(o, m.residual_multiplier, p + "attn.o_scaled")}, p + "attn.residual",
                        w.shape(h), b.dt);
  std::string n2 = b.norm(h1, p + "mlp_norm");
  std::string d = b.mlp(n2, p);
  return w.op("add", {h1, b.scale(d, m.residual_multiplier, p + "mlp.down_scaled")}, p + "mlp.residual", w.shape(h1),
              b.dt);
}

}  // namespace

void write_decoder_step(StepBuilder& b) {
  const ModelSpec& m = b.m;
  OpGraphWriter& w = b.w;
  const std::int64_t B = b.B, T = b.T, D = m.hidden;
  std::string ids = w.input("ids", {B, T}, Dtype::int32);
  if (b.host_io()) ids = w.op("from_host", {ids}, "embed.ids", {B, T}, Dtype::int32);
  // Vocabulary-parallel: each card holds V / tp rows; a token's row is on one card, the others
  // contribute zeros, and the all-reduce gives every card the embeddings.
  std::string table = b.weight("embed.w", {b.vocab, D});
  std::string h = b.all_reduce(w.op("embedding", {table, ids}, "embed.out", {B, T, D}, b.dt), "embed.out_sum");
  h = b.scale(h, m.embedding_multiplier, "embed.scaled");
  // Rotary tables for the positions of this step's tokens (precomputed on the host).
  std::string cos = w.input("rope.cos", {T, m.head_dim}, b.dt);
  std::string sin = w.input("rope.sin", {T, m.head_dim}, b.dt);
  for (std::int64_t i = 0; i < b.s.layers; ++i) h = decoder_layer(b, h, i, cos, sin);
  h = b.norm(h, "final_norm");
  // Serving computes logits for the last token of each sequence only.
  if (T > 1) h = w.op("slice", {h}, "head.last_token", {B, 1, D}, b.dt, {{"dim", 1}, {"start", T - 1}, {"end", T}});
  std::string head = m.tie_embeddings ? table : b.weight("head.w", {b.vocab, D});
  std::string logits = w.op("linear", {h, head}, "head.logits", {B, 1, b.vocab}, b.dt);
  // Each card's slice of the vocabulary, gathered on every card.
  if (b.tp > 1)
    logits = w.op("all_gather", {logits}, "head.logits_gathered", {B, 1, b.vocab * b.tp}, b.dt, {{"dim", -1}});
  logits = b.scale(logits, 1.0 / m.logits_scaling, "head.logits_scaled");
  // The logits go back to the host from the first card (the sampler runs there).
  if (b.host_io()) {
    OJson attrs;
    if (b.tp > 1) attrs = {{"group", {0}}};
    logits = w.op("to_host", {logits}, "head.logits_host", w.shape(logits), b.dt, attrs);
  }
  w.output(logits);
}

}  // namespace dfsim
