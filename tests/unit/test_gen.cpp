// dfsim gen (issue 10): model files and the op graphs of one forward step.
#include <catch2/catch.hpp>

#include "sim/common/error.h"
#include "sim/compiler/compile.h"
#include "sim/config/chip_config.h"
#include "sim/gen/step_graph.h"
#include "sim/graph/op_graph.h"

using namespace dfsim;
using Catch::Contains;

namespace {

const std::string kModels = DFSIM_SOURCE_DIR "/workloads/models";

ModelSpec model(const std::string& name) { return find_model_spec(name, kModels); }

Json graph(const ModelSpec& m, StepSpec s) { return Json::parse(generate_step_graph(m, s)); }

StepSpec decode(std::int64_t batch, std::int64_t context, std::int64_t layers = 0) {
  StepSpec s;
  s.phase = StepPhase::decode;
  s.batch = batch;
  s.context = context;
  s.layers = layers;
  return s;
}

StepSpec prefill(std::int64_t batch, std::int64_t tokens, std::int64_t layers = 0) {
  StepSpec s;
  s.phase = StepPhase::prefill;
  s.batch = batch;
  s.tokens = tokens;
  s.layers = layers;
  return s;
}

std::uint64_t elements(const Json& shape) {
  std::uint64_t n = 1;
  for (const auto& d : shape) n *= d.get<std::uint64_t>();
  return n;
}

// Bytes of the graph's weight inputs: every input named *.w or *.b (not ids, rope tables, caches).
std::uint64_t weight_bytes(const Json& g) {
  std::uint64_t bytes = 0;
  for (const auto& name : g["inputs"]) {
    std::string n = name.get<std::string>();
    if (n.size() < 2 || (n.substr(n.size() - 2) != ".w" && n.substr(n.size() - 2) != ".b")) continue;
    const Json& t = g["tensors"][n];
    bytes += elements(t["shape"]) * (t["dtype"] == "fp8" ? 1 : 2);
  }
  return bytes;
}

const Json* find_op(const Json& g, const std::string& output) {
  for (const auto& op : g["ops"])
    if (op["outputs"][0] == output) return &op;
  return nullptr;
}

}  // namespace

TEST_CASE("gen: Llama-3.1-8B's decode step reads its 8.03 B parameters as weights", "[gen]") {
  ModelSpec m = model("llama-3.1-8b");
  // Per layer: q 4096x4096 + k, v 1024x4096 + o 4096x4096 = 41 943 040; MLP 3 x 4096 x 14336
  // = 176 160 768; two norms 8192: 218 112 000 x 32 = 6 979 584 000. Embedding and LM head
  // 2 x 128256 x 4096 = 1 050 673 152; final norm 4096. Total 8 030 261 248 (the published 8.03 B).
  CHECK(m.parameters() == 8'030'261'248ull);
  Json g = graph(m, decode(1, 2048));
  CHECK(weight_bytes(g) == 2 * 8'030'261'248ull);  // 16.06 GB in fp16
  StepSpec fp8 = decode(1, 2048);
  fp8.dtype = Dtype::fp8;
  CHECK(weight_bytes(graph(m, fp8)) == 8'030'261'248ull);  // half
  CHECK(g["name"] == "llama-3.1-8b.decode.b1.ctx2048");
  CHECK(g["compile"]["cores"] == 32);
}

TEST_CASE("gen: a decode step writes one token per sequence at the end of a cache of L tokens", "[gen]") {
  Json g = graph(model("llama-3.1-8b"), decode(4, 1024, 1));
  // K cache of layer 0: [B, KV heads, L + 1, head dim] = [4, 8, 1025, 128], written at 1024.
  CHECK(g["tensors"]["l0.attn.k_cache"]["shape"] == Json::array({4, 8, 1025, 128}));
  const Json* w = find_op(g, "l0.attn.k_cache_new");
  REQUIRE(w);
  CHECK((*w)["op"] == "kv_write");
  CHECK((*w)["attrs"]["position"] == 1024);
  const Json* a = find_op(g, "l0.attn.sdpa");
  REQUIRE(a);
  CHECK((*a)["attrs"]["causal"] == false);  // one query against the whole cache
  // Grouped-query attention: 32 query heads over 8 KV heads.
  CHECK(g["tensors"]["l0.attn.q_rope"]["shape"] == Json::array({4, 32, 1, 128}));
  CHECK(g["tensors"]["head.logits"]["shape"] == Json::array({4, 1, 128256}));
  CHECK(g["tensors"]["l0.mlp.gate"]["shape"] == Json::array({4, 1, 14336}));
  CHECK(find_op(g, "l1.attn.sdpa") == nullptr);  // --layers 1
}

TEST_CASE("gen: a prefill writes S cache rows and computes the logits of the last token only", "[gen]") {
  Json g = graph(model("llama-3.1-8b"), prefill(2, 512, 1));
  CHECK(g["tensors"]["l0.attn.k_cache"]["shape"] == Json::array({2, 8, 512, 128}));
  CHECK((*find_op(g, "l0.attn.sdpa"))["attrs"]["causal"] == true);
  const Json* last = find_op(g, "head.last_token");
  REQUIRE(last);
  CHECK((*last)["attrs"]["start"] == 511);
  CHECK(g["tensors"]["head.logits"]["shape"] == Json::array({2, 1, 128256}));
  // A chunked prefill continues after the earlier chunks.
  StepSpec chunk = prefill(1, 512, 1);
  chunk.context = 512;
  Json c = graph(model("llama-3.1-8b"), chunk);
  CHECK(c["tensors"]["l0.attn.k_cache"]["shape"] == Json::array({1, 8, 1024, 128}));
  CHECK((*find_op(c, "l0.attn.k_cache_new"))["attrs"]["position"] == 512);
  // Its query i is token 512 + i: it sees the 512 cached keys and the chunk's keys up to it.
  CHECK((*find_op(c, "l0.attn.sdpa"))["attrs"]["causal"] == true);
  CHECK((*find_op(c, "l0.attn.sdpa"))["attrs"]["causal_offset"] == 512);
  CHECK_FALSE((*find_op(g, "l0.attn.sdpa"))["attrs"].contains("causal_offset"));  // the first chunk
}

TEST_CASE("gen: every layer adds the same ops", "[gen]") {
  ModelSpec m = model("granite-3.3-8b");
  auto ops = [&](int layers) { return graph(m, decode(1, 128, layers))["ops"].size(); };
  std::size_t one = ops(1), two = ops(2), five = ops(5);
  CHECK(two > one);
  CHECK(five - one == 4 * (two - one));
}

TEST_CASE("gen: Granite's tied head and scalings", "[gen]") {
  ModelSpec m = model("granite-3.3-8b");
  // Per layer 41 943 040 + 3 x 4096 x 12800 + 8192 = 199 237 632 x 40 = 7 969 505 280; embedding
  // 49159 x 4096 = 201 355 264 (tied: the LM head reuses it); final norm 4096.
  CHECK(m.parameters() == 8'170'864'640ull);
  Json g = graph(m, decode(1, 64, 1));
  CHECK_FALSE(g["tensors"].contains("head.w"));
  CHECK((*find_op(g, "head.logits"))["inputs"][1] == "embed.w");
  CHECK((*find_op(g, "embed.scaled"))["attrs"]["scalar"] == 12.0);
  CHECK((*find_op(g, "head.logits_scaled"))["attrs"]["scalar"] == 1.0 / 16.0);
  CHECK((*find_op(g, "l0.attn.sdpa"))["attrs"]["scale"] == 0.0078125);
  CHECK((*find_op(g, "l0.mlp.down_scaled"))["attrs"]["scalar"] == 0.22);
}

TEST_CASE("gen: the encoder's forward pass pools the CLS token", "[gen]") {
  ModelSpec m = model("granite-embedding-278m");
  CHECK(m.arch == ModelArch::encoder);
  CHECK(m.parameters() > 277'000'000ull);
  CHECK(m.parameters() < 279'000'000ull);  // the model card's 278 M
  Json g = graph(m, prefill(8, 256));
  CHECK(g["outputs"] == Json::array({"pool.cls"}));
  CHECK(g["tensors"]["pool.cls"]["shape"] == Json::array({8, 1, 768}));
  CHECK((*find_op(g, "l0.attn.sdpa"))["attrs"]["causal"] == false);
  CHECK(find_op(g, "l11.mlp_norm"));
  REQUIRE_THROWS_WITH(graph(m, decode(1, 8)), Contains("is an encoder"));
}

TEST_CASE("gen: the graphs read back and compile on the spyre config", "[gen]") {
  ChipConfig cfg = load_chip_config(DFSIM_SOURCE_DIR "/configs/spyre.json");
  for (const char* name : {"llama-3.1-8b", "granite-3.3-8b"}) {
    ModelSpec m = model(name);
    // (A batch-2 prefill splits rope's q [2, 32, T, 128] along the heads, not the batch.)
    for (StepSpec s : {decode(2, 300, 1), prefill(1, 128, 1), prefill(2, 64, 1)}) {
      INFO(step_graph_name(m, s));
      OpGraph ops = read_op_graph(graph(m, s), "gen.json");
      KernelGraph k = compile_ops(ops, cfg, 32);
      CHECK(k.kernels.size() > 5);
    }
  }
  OpGraph enc = read_op_graph(graph(model("granite-embedding-278m"), prefill(2, 128, 1)), "gen.json");
  CHECK(compile_ops(enc, cfg, 32).kernels.size() > 5);
}

TEST_CASE("gen: steps the model cannot take are rejected with the flag and the limit", "[gen]") {
  ModelSpec m = model("llama-3.1-8b");
  // 131 072 positions: a decode at context 131 072 would be position 131 073.
  REQUIRE_THROWS_WITH(graph(m, decode(1, 131072)), Contains("--context") && Contains("max_position_embeddings"));
  CHECK_NOTHROW(graph(m, decode(1, 131071, 1)));
  REQUIRE_THROWS_WITH(graph(m, decode(1, 8, 33)), Contains("--layers: expected 1 to 32"));
  REQUIRE_THROWS_WITH(graph(m, prefill(1, 0)), Contains("--tokens"));
  REQUIRE_THROWS_WITH(graph(m, decode(0, 8)), Contains("--batch"));
}

TEST_CASE("gen: model files are found by name or path and checked", "[gen]") {
  REQUIRE_THROWS_WITH(model("llama-3.1-8"), Contains("unknown model (did you mean \"llama-3.1-8b\"?)") &&
                                                Contains("granite-embedding-278m"));
  Json j = load_json_file(kModels + "/llama-3.1-8b.json");
  j["num_kv_heads"] = 5;
  REQUIRE_THROWS_WITH(read_model_spec(j, "m.json"), Contains("m.json: /num_kv_heads: expected a divisor of num_heads (32)"));
  j = load_json_file(kModels + "/llama-3.1-8b.json");
  j["head_dim"] = 127;  // rope rotates the halves of a head: refused at the model file, not at run
  REQUIRE_THROWS_WITH(read_model_spec(j, "m.json"), Contains("m.json: /head_dim: a decoder's head_dim must be even"));
  j = load_json_file(kModels + "/llama-3.1-8b.json");
  j["hiden_size"] = 1;
  REQUIRE_THROWS_WITH(read_model_spec(j, "m.json"), Contains("m.json: /hiden_size: unknown key"));
  j = load_json_file(kModels + "/llama-3.1-8b.json");
  j.erase("max_position_embeddings");
  REQUIRE_THROWS_WITH(read_model_spec(j, "m.json"), Contains("m.json: /max_position_embeddings"));
  j = load_json_file(kModels + "/llama-3.1-8b.json");
  j["dtype"] = "fp4";
  REQUIRE_THROWS_WITH(read_model_spec(j, "m.json"), Contains("m.json: /dtype: expected one of fp16, bf16, fp8"));
  j["dtype"] = "fp8";
  CHECK(read_model_spec(j, "m.json").dtype == Dtype::fp8);
}
