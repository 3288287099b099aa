// The model report of `dfsim run` (issue 10): kernels grouped by layer and op family, time
// attributed so that shares add up, and the op graph's "model" object.
#include <catch2/catch.hpp>

#include "sim/common/error.h"
#include "sim/graph/op_graph.h"
#include "sim/stats/model_report.h"

using namespace dfsim;
using Catch::Contains;

namespace {

struct Expected {
  const char* kernel;
  int layer;
  OpFamily family;
};

}  // namespace

TEST_CASE("model report: the kernels of a Llama decode layer fall in their layer and family", "[model_report]") {
  // The compiled kernels of `dfsim gen llama-3.1-8b --phase decode --layers 1`, in order.
  const Expected all[] = {
      {"embedding_embed.out", -1, OpFamily::embedding},
      {"rmsnorm_l0.attn_norm", 0, OpFamily::norms},
      {"linear_l0.attn.q", 0, OpFamily::projections},
      {"linear_l0.attn.k", 0, OpFamily::projections},
      {"linear_l0.attn.v", 0, OpFamily::projections},
      {"rope_l0.attn.q_rope", 0, OpFamily::attention},
      {"rope_l0.attn.k_rope", 0, OpFamily::attention},
      {"kv_write_l0.attn.k_cache_new", 0, OpFamily::attention},
      {"kv_write_l0.attn.v_cache_new", 0, OpFamily::attention},
      {"sdpa_l0.attn.sdpa", 0, OpFamily::attention},
      {"linear_epilogue_l0.attn.residual", 0, OpFamily::projections},  // O projection + residual
      {"rmsnorm_l0.mlp_norm", 0, OpFamily::norms},
      {"linear_l0.mlp.gate", 0, OpFamily::mlp},
      {"linear_l0.mlp.up", 0, OpFamily::mlp},
      {"fused_silu_l0.mlp.gated", 0, OpFamily::mlp},
      {"linear_epilogue_l0.mlp.residual", 0, OpFamily::mlp},
      {"rmsnorm_final_norm", -1, OpFamily::norms},
      {"linear_head.logits", -1, OpFamily::head},
  };
  for (const Expected& e : all) {
    INFO(e.kernel);
    KernelPlace p = place_kernel(e.kernel);
    CHECK(p.layer == e.layer);
    CHECK(op_family_name(p.family) == std::string(op_family_name(e.family)));
  }
  // The op is what precedes the tensor, underscores included.
  CHECK(place_kernel("kv_write_l0.attn.k_cache_new").op == "kv_write");
  CHECK(place_kernel("kv_write_l0.attn.k_cache_new").tensor == "l0.attn.k_cache_new");
  CHECK(place_kernel("rmsnorm_final_norm").op == "rmsnorm");
  CHECK(place_kernel("rmsnorm_final_norm").tensor == "final_norm");
}

TEST_CASE("model report: prefill, encoder, clone and unconventional kernel names", "[model_report]") {
  CHECK(place_kernel("linear_l37.mlp.down").layer == 37);
  CHECK(place_kernel("linear_l37.mlp.down").family == OpFamily::mlp);
  CHECK(place_kernel("transpose_l3.attn.qh").family == OpFamily::attention);      // prefill head reshuffle
  CHECK(place_kernel("transpose_l3.attn.merged").family == OpFamily::attention);
  CHECK(place_kernel("mul_l3.attn.o_scaled").family == OpFamily::projections);    // Granite's residual multiplier
  CHECK(place_kernel("clone_l5.attn.q.w").family == OpFamily::projections);       // a weight cloned into LX
  CHECK(place_kernel("clone_l5.attn.q.w").layer == 5);
  CHECK(place_kernel("clone_l5.mlp_norm.w").family == OpFamily::norms);
  CHECK(place_kernel("layernorm_embed.norm").family == OpFamily::norms);          // encoder embeddings' norm
  CHECK(place_kernel("layernorm_embed.norm").layer == -1);
  CHECK(place_kernel("linear_pool.dense").family == OpFamily::head);               // an encoder's pooler
  CHECK(place_kernel("slice_pool.cls").family == OpFamily::head);
  CHECK(place_kernel("linear_epilogue_l0.mlp.act").family == OpFamily::mlp);            // encoder up + GELU
  CHECK(place_kernel("transpose_l0.attn.merged.bthd").family == OpFamily::attention);
  CHECK(place_kernel("fused_mul_l0.attn_norm").family == OpFamily::norms);              // Granite: scale + norm
  CHECK(place_kernel("linear_epilogue_head.logits_scaled").family == OpFamily::head);  // Granite's LM head
  CHECK(place_kernel("slice_head.last_token").family == OpFamily::head);
  // Not the convention: outside the layers, family other, the whole name as op.
  for (const char* name : {"add_y", "softmax_x", "matmul_l.attn", "linear_lx.attn.q", "l0.attn.q", "linear_embed."}) {
    INFO(name);
    KernelPlace p = place_kernel(name);
    CHECK(p.layer == -1);
    CHECK(p.family == OpFamily::other);
    CHECK(p.tensor.empty());
  }
}

TEST_CASE("model report: overlapping kernels share their common time, idle time is apart", "[model_report]") {
  const Tick ns = kTicksPerNs;
  // k0 [0, 100), k1 [50, 150), k2 [200, 300) ns; the step ends at 400 ns.
  //   k0 = 50 alone + 50 shared / 2 = 75; k1 = 50 / 2 + 50 alone = 75; k2 = 100;
  //   idle = [150, 200) + [300, 400) = 150; 75 + 75 + 100 + 150 = 400.
  double idle = -1;
  std::vector<double> t = attribute_time_ns({{0, 100 * ns}, {50 * ns, 150 * ns}, {200 * ns, 300 * ns}}, 400 * ns, &idle);
  REQUIRE(t.size() == 3);
  CHECK(t[0] == 75.0);
  CHECK(t[1] == 75.0);
  CHECK(t[2] == 100.0);
  CHECK(idle == 150.0);
  // Three kernels over one instant, one nested, one empty, one past the end (clipped):
  //   [0, 30) a,b,c: 10 each; [30, 60) a,c: 15 each; c alone [60, 90): 30 -> a 25, b 10, c 55;
  //   the empty span gets 0; d [80, 120) clipped to [80, 90): shares [80, 90) with c: 5 each
  //   -> c 50, d 5; no idle: 25 + 10 + 50 + 0 + 5 + 0 = 90.
  t = attribute_time_ns({{0, 60 * ns}, {0, 30 * ns}, {0, 90 * ns}, {40 * ns, 40 * ns}, {80 * ns, 120 * ns}, {95 * ns, 99 * ns}},
                        90 * ns, &idle);
  CHECK(t == std::vector<double>{25, 10, 50, 0, 5, 0});
  CHECK(idle == 0.0);
}

TEST_CASE("model report: the op graph's model object is read and checked", "[model_report]") {
  auto graph_with = [](const std::string& model) {
    return Json::parse(R"({"format": "dfsim.ops", "version": 1, "name": "g", "model": )" + model +
                       R"(, "tensors": {"a": {"shape": [64], "dtype": "fp16"}, "y": {"shape": [64], "dtype": "fp16"}},
      "inputs": ["a"], "outputs": ["y"], "ops": [{"op": "relu", "inputs": ["a"], "outputs": ["y"]}]})");
  };
  OpGraph g = read_op_graph(graph_with(R"({"name": "m", "phase": "prefill", "batch": 2, "tokens": 128, "layers": 3,
                                           "model_layers": 40, "weight_bytes": 1000})"), "g.json");
  REQUIRE(g.model);
  CHECK(g.model->name == "m");
  CHECK_FALSE(g.model->decode());
  CHECK(g.model->batch == 2);
  CHECK(g.model->tokens == 128);
  CHECK(g.model->context == 0);
  CHECK(g.model->layers == 3);
  CHECK(g.model->model_layers == 40);
  CHECK(g.model->weight_bytes == 1000);
  Json plain = graph_with("{}");
  plain.erase("model");
  CHECK_FALSE(read_op_graph(plain, "g.json").model);
  auto bad = [&](const std::string& model, const std::string& what) {
    INFO(model);
    CHECK_THROWS_WITH(read_op_graph(graph_with(model), "g.json"), Contains(what));
  };
  bad(R"({"name": "m", "phase": "train", "batch": 1})", "g.json: /model/phase: expected \"decode\" or \"prefill\"");
  bad(R"({"name": "m", "phase": "decode", "batch": 0})", "/model/batch");
  bad(R"({"name": "m", "phase": "decode", "batch": 1, "tokens": 4})", "/model/tokens");  // decode: one token
  bad(R"({"name": "m", "phase": "prefill", "batch": 1})", "/model/tokens");              // prefill: required
  bad(R"({"name": "m", "phase": "decode", "batch": 1, "layers": 4, "model_layers": 2})", "/model/model_layers");
  bad(R"({"name": "m", "phase": "decode", "batch": 1, "layer": 2})", "/model/layer");
  bad(R"({"phase": "decode", "batch": 1})", "/model/name");
}
