// The pieces every generated step graph shares: names, checks of the step against the model,
// attention's head reshuffles, projections with optional bias, and the dispatch by architecture.
#include "sim/gen/step_graph.h"

#include <fmt/format.h>

#include "sim/common/error.h"
#include "sim/gen/step_builders.h"

namespace dfsim {

std::string layer_prefix(std::int64_t layer) { return fmt::format("l{}.", layer); }

// (fmt rather than "literal" + std::string: GCC 12 warns falsely (-Wrestrict) on the latter.)
std::string step_graph_name(const ModelSpec& m, const StepSpec& s) {
  std::string n = fmt::format("{}.{}.b{}", m.name, s.phase == StepPhase::decode ? "decode" : "prefill", s.batch);
  if (s.phase == StepPhase::prefill) n += fmt::format(".s{}", s.tokens);
  if (s.phase == StepPhase::decode || s.context > 0) n += fmt::format(".ctx{}", s.context);
  if (s.layers > 0 && s.layers < m.layers) n += fmt::format(".l{}", s.layers);
  if (s.dtype != Dtype::fp16) n += fmt::format(".{}", dtype_name(s.dtype));
  if (s.tp > 1) n += fmt::format(".tp{}", s.tp);
  return n;
}

StepBuilder::StepBuilder(const ModelSpec& m, const StepSpec& s, OpGraphWriter& w)
    : m(m),
      s(s),
      w(w),
      dt(s.dtype),
      B(s.batch),
      T(s.phase == StepPhase::decode ? 1 : s.tokens),
      tp(s.tp),
      heads(m.heads / s.tp),
      kv_heads(m.kv_heads >= s.tp ? m.kv_heads / s.tp : 1),
      intermediate(m.intermediate / s.tp),
      vocab((m.vocab + s.tp - 1) / s.tp) {}

std::string StepBuilder::all_reduce(const std::string& x, const std::string& out) {
  if (tp == 1) return x;
  return w.op("all_reduce", {x}, out, w.shape(x), dt);
}

std::string StepBuilder::row_parallel(const std::string& x, const std::string& name, std::int64_t out_features, bool bias) {
  if (tp == 1) return linear(x, name, out_features, bias);
  std::string y = all_reduce(linear(x, name, out_features, false), name + "_sum");
  if (bias) y = w.op("add", {y, weight(name + ".b", {out_features})}, name + "_biased", w.shape(y), dt);
  return y;
}

std::string StepBuilder::weight(const std::string& name, const Shape& shape) {
  w.input(name, shape, dt);
  weight_bytes += OpTensor{name, shape, dt}.bytes();
  return name;
}

std::string StepBuilder::linear(const std::string& x, const std::string& name, std::int64_t out_features, bool bias) {
  Shape xs = w.shape(x);
  std::int64_t in_features = xs.back();
  std::vector<std::string> ins = {x, weight(name + ".w", {out_features, in_features})};
  if (bias) ins.push_back(weight(name + ".b", {out_features}));
  Shape ys = xs;
  ys.back() = out_features;
  return w.op("linear", ins, name, ys, dt);
}

std::string StepBuilder::scale(const std::string& x, double factor, const std::string& out) {
  if (factor == 1.0) return x;
  return w.op("mul", {x}, out, w.shape(x), dt, {{"scalar", factor}});
}

std::string StepBuilder::norm(const std::string& x, const std::string& name) {
  std::int64_t D = w.shape(x).back();
  std::vector<std::string> ins = {x, weight(name + ".w", {D})};
  if (m.norm == "layernorm") ins.push_back(weight(name + ".b", {D}));
  return w.op(m.norm, ins, name, w.shape(x), dt, {{"eps", m.norm_eps}});
}

// [B, T, H*hd] -> [B, H, T, hd]. One token: the same bytes in the same order (a reshape).
std::string StepBuilder::to_heads(const std::string& x, std::int64_t H, const std::string& name) {
  std::int64_t hd = m.head_dim;
  if (T == 1) return w.op("reshape", {x}, name, {B, H, 1, hd}, dt);
  std::string r = w.op("reshape", {x}, name + ".bthd", {B, T, H, hd}, dt);
  return w.op("transpose", {r}, name, {B, H, T, hd}, dt, {{"dims", {0, 2, 1, 3}}});
}

// [B, H, T, hd] -> [B, T, H*hd].
std::string StepBuilder::from_heads(const std::string& x, const std::string& name) {
  Shape xs = w.shape(x);
  std::int64_t H = xs[1], hd = xs[3];
  if (T == 1) return w.op("reshape", {x}, name, {B, 1, H * hd}, dt);
  std::string t = w.op("transpose", {x}, name + ".bthd", {B, T, H, hd}, dt, {{"dims", {0, 2, 1, 3}}});
  return w.op("reshape", {t}, name, {B, T, H * hd}, dt);
}

StepBuilder::Heads StepBuilder::qkv(const std::string& x, const std::string& p) {
  const std::int64_t hd = m.head_dim;
  // Column-parallel: each card projects to its own heads.
  return {to_heads(linear(x, p + "attn.q", heads * hd, m.attention_bias), heads, p + "attn.qh"),
          to_heads(linear(x, p + "attn.k", kv_heads * hd, m.attention_bias), kv_heads, p + "attn.kh"),
          to_heads(linear(x, p + "attn.v", kv_heads * hd, m.attention_bias), kv_heads, p + "attn.vh")};
}

std::string StepBuilder::mlp(const std::string& x, const std::string& p) {
  const std::int64_t D = m.hidden, F = intermediate;  // gate and up column-parallel
  std::string act;
  if (m.gated_mlp) {
    std::string gate = linear(x, p + "mlp.gate", F, m.mlp_bias);
    std::string up = linear(x, p + "mlp.up", F, m.mlp_bias);
    std::string g = w.op(m.activation, {gate}, p + "mlp.act", w.shape(gate), dt);
    act = w.op("mul", {g, up}, p + "mlp.gated", w.shape(up), dt);
  } else {
    std::string up = linear(x, p + "mlp.up", F, m.mlp_bias);
    act = w.op(m.activation, {up}, p + "mlp.act", w.shape(up), dt);
  }
  return row_parallel(act, p + "mlp.down", D, m.mlp_bias);
}

void check_step(const ModelSpec& m, const StepSpec& s) {
  if (s.batch < 1) throw InputError("--batch", "", "expected an integer >= 1");
  if (s.layers < 0 || s.layers > m.layers)
    throw InputError("--layers", "", fmt::format("expected 1 to {} (the layers of {}), got {}", m.layers, m.name, s.layers));
  std::int64_t positions = s.context + (s.phase == StepPhase::decode ? 1 : s.tokens);
  if (s.phase == StepPhase::prefill && s.tokens < 1) throw InputError("--tokens", "", "expected an integer >= 1");
  if (s.context < 0) throw InputError("--context", "", "expected an integer >= 0");
  if (m.arch == ModelArch::encoder && s.phase == StepPhase::decode)  // (before --context, which a decode step needs)
    throw InputError("--phase", "", m.name + " is an encoder: it has prefill (one forward pass) steps only");
  if (m.arch == ModelArch::encoder && s.context > 0)
    throw InputError("--context", "", m.name + " is an encoder: it has no KV cache to continue from");
  if (m.max_positions > 0 && positions > m.max_positions)
    throw InputError(s.phase == StepPhase::decode ? "--context" : "--tokens", "",
                     fmt::format("{} positions exceed the {} of {} ({}: max_position_embeddings)", positions,
                                 m.max_positions, m.name, m.file));
  if (s.tp < 1 || s.tp > 64) throw InputError("--tp", "", fmt::format("expected 1 to 64 cards, got {}", s.tp));
  if (s.tp > 1) {
    if (m.arch == ModelArch::encoder)
      throw InputError("--tp", "", m.name + " is an encoder: tensor parallelism is generated for decoders only");
    auto divides = [&](std::int64_t n, const char* what) {
      if (n % s.tp != 0)
        throw InputError("--tp", "", fmt::format("{} has {} {}, not divisible by {} cards", m.name, n, what, s.tp));
    };
    divides(m.heads, "attention heads");
    if (m.kv_heads >= s.tp) divides(m.kv_heads, "KV heads");
    else if (s.tp % m.kv_heads != 0)
      throw InputError("--tp", "", fmt::format("{} has {} KV heads: {} cards cannot share them out evenly", m.name,
                                               m.kv_heads, s.tp));
    divides(m.intermediate, "MLP columns (intermediate_size)");
  }
}

std::string generate_step_graph(const ModelSpec& m, const StepSpec& s) {
  check_step(m, s);
  std::int64_t layers = s.layers > 0 ? s.layers : m.layers;
  std::string desc = fmt::format(
      "{} {} step: batch {}, {}, {} of {} layers, {}; generated by dfsim gen from {}", m.name,
      s.phase == StepPhase::decode ? "decode" : "prefill", s.batch,
      s.phase == StepPhase::decode ? fmt::format("context {}", s.context)
                                   : fmt::format("{} tokens", s.tokens) + (s.context ? fmt::format(" after {}", s.context) : ""),
      layers, m.layers, dtype_name(s.dtype), m.file.empty() ? m.name : m.file);
  if (s.tp > 1) desc += fmt::format("; tensor parallel over {} cards, this is one card's shard", s.tp);
  OpGraphWriter w(step_graph_name(m, s), desc);
  StepSpec full = s;
  full.layers = layers;
  StepBuilder b(m, full, w);
  if (m.arch == ModelArch::decoder) write_decoder_step(b);
  else write_encoder_step(b);
  w.set_model({{"name", m.name}, {"phase", s.phase == StepPhase::decode ? "decode" : "prefill"}, {"batch", s.batch},
               {"tokens", b.T}, {"context", s.context}, {"layers", layers}, {"model_layers", m.layers},
               {"weight_bytes", b.weight_bytes}});
  w.set_compile("cores", s.cores);
  if (s.tp > 1) w.set_compile("cards", s.tp);
  return w.dump();
}

}  // namespace dfsim
