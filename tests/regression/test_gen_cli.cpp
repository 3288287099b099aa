// dfsim gen from the command line (issue 10): the graphs it writes run, move what the model
// needs, respect the roofline, and scale with layers, context and batch.
#include <catch2/catch.hpp>

#include <tuple>

#include "cli_helpers.h"

using namespace cli_test;
using nlohmann::json;
using Catch::Contains;

namespace {

// Generates a step graph and runs it without a trace; returns summary.json.
json gen_run(const TempDir& d, const std::string& tag, const std::string& gen_args, const std::string& run_args = "") {
  std::string g = (d.path / (tag + ".json")).string();
  Result r = dfsim("gen " + gen_args + " -o " + g);
  INFO(r.out);
  REQUIRE(r.code == 0);
  REQUIRE(dfsim("run -q -w " + g + " --trace off " + run_args + " -o " + (d.path / tag).string()).code == 0);
  return read_json(d.path / tag / "summary.json");
}

double ns(const json& s) { return s["sim_time_ns"].get<double>(); }
double read_bytes(const json& s) { return s["offchip"]["bytes_read"].get<double>(); }

}  // namespace

TEST_CASE("gen cli: --help has an example, bad flags exit 2 with one line", "[gen][cli]") {
  Result h = dfsim("gen --help");
  CHECK(h.code == 0);
  CHECK_THAT(h.out, Contains("dfsim gen llama-3.1-8b --phase decode"));
  TempDir d("gen_bad");
  std::string o = " -o " + (d.path / "g.json").string();
  struct Bad {
    std::string args, says;
  };
  for (const Bad& b : std::vector<Bad>{
           {"llama-3.1-8b --phase decode --batch 1" + o, "--phase decode needs --context L"},
           {"llama-3.1-8b --phase prefill" + o, "--phase prefill needs --tokens S"},
           {"llama-3.1-8b --phase both --tokens 4" + o, "--phase: expected prefill or decode, got \"both\""},
           {"llama-3.1-8b --phase decode --context 8 --dtype int3" + o, "--dtype: expected fp16 or fp8"},
           {"llama-3.1-8b --phase decode --context 8 --layers 40" + o, "--layers: expected 1 to 32"},
           {"llama-3.1-8b --phase decode --context 200000" + o, "max_position_embeddings"},
           {"lama --phase decode --context 8" + o, "unknown model (did you mean \"llama-3.1-8b\"?)"},
           {"granite-embedding-278m --phase decode --context 8" + o,
            "--phase: granite-embedding-278m is an encoder: it has prefill (one forward pass) steps only"},  // not --context
           {"granite-embedding-278m --phase prefill --tokens 8 --context 8" + o, "--context: granite-embedding-278m is an encoder: it has no KV cache"},
           {"llama-3.1-8b --phase decode --context 8", "-o FILE is required"},
       }) {
    INFO(b.args);
    Result r = dfsim("gen " + b.args, "2>&1 >/dev/null");
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Contains(b.says));
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  }
  CHECK_FALSE(fs::exists(d.path / "g.json"));
  // An unwritable output is an error, not a success line.
  Result w = dfsim("gen llama-3.1-8b --phase decode --context 8 -o /proc/nope/g.json", "2>&1 >/dev/null");
  CHECK(w.code == 2);
  CHECK_THAT(w.out, Contains("/proc/nope"));
}

TEST_CASE("gen cli: --list names the shipped models, a user's model file works by path", "[gen][cli]") {
  Result l = dfsim("gen --list");
  CHECK(l.code == 0);
  CHECK_THAT(l.out, Contains("llama-3.1-8b") && Contains("granite-3.3-8b") && Contains("granite-embedding-278m"));
  CHECK_THAT(l.out, Contains("8.03 B parameters"));
  // --list takes nothing else: a model, -o or --batch 0 were ignored (exit 0, nothing written).
  Result both = dfsim("gen --list --batch 0");
  CHECK(both.code == 2);
  CHECK_THAT(both.out, Contains("--list takes no other option or model, got --batch"));
  CHECK(dfsim("gen --list llama-3.1-8b").code == 2);
  TempDir d("gen_file");
  fs::create_directories(d.path);
  std::ofstream(d.path / "tiny.json") << R"({"format": "dfsim.model", "version": 1, "name": "tiny",
    "source": "a test model", "hidden_size": 256, "num_layers": 3, "num_heads": 4, "num_kv_heads": 2,
    "intermediate_size": 512, "vocab_size": 1000, "max_position_embeddings": 512})";
  json s = gen_run(d, "t", (d.path / "tiny.json").string() + " --phase decode --batch 2 --context 100 --cores 4");
  CHECK(s["cores_used"].get<int>() == 4);
  std::ofstream(d.path / "bad.json") << R"({"format": "dfsim.model", "version": 1, "name": "bad", "source": "x",
    "hidden_size": 256, "num_layers": 2, "num_heads": 3, "intermediate_size": 512, "vocab_size": 1000,
    "max_position_embeddings": 512})";
  Result bad = dfsim("gen " + (d.path / "bad.json").string() + " --phase decode --context 8 -o " +
                         (d.path / "b.json").string(),
                     "2>&1 >/dev/null");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Contains("bad.json: /num_heads: hidden_size 256 is not a multiple of it; give head_dim"));
  // A key of the other architecture would change nothing: refused (a decoder's pooling was ignored).
  for (const auto& [key, arch, says] :
       {std::tuple<std::string, std::string, std::string>{"\"pooling\": \"cls\"", "decoder", "/pooling: applies to encoders only, and this model is a decoder"},
        {"\"tie_word_embeddings\": true", "encoder", "/tie_word_embeddings: applies to decoders only, and this model is an encoder"}}) {
    INFO(key);
    std::ofstream(d.path / "arch.json") << R"({"format": "dfsim.model", "version": 1, "name": "a", "source": "x",
      "architecture": ")" + arch + R"(", "hidden_size": 256, "num_layers": 2, "num_heads": 4, "intermediate_size": 512,
      "vocab_size": 1000, "max_position_embeddings": 512, )" + key + "}";
    Result r = dfsim("gen " + (d.path / "arch.json").string() + " --phase prefill --tokens 8 -o " + (d.path / "a.json").string(),
                     "2>&1 >/dev/null");
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Contains("arch.json: " + says));
  }
}

TEST_CASE("gen cli: a decode layer reads its weights and cache, and is never faster than the roofline", "[gen][cli]") {
  TempDir d("gen_decode");
  // Two layers of Llama-3.1-8B, batch 1, context 2048.
  json s = gen_run(d, "dec", "llama-3.1-8b --phase decode --batch 1 --context 2048 --layers 2");
  // Weights read: per layer 218 112 000 parameters (x 2 B), the LM head 128256 x 4096 and the
  // norms; the embedding table is gathered (one row). KV cache: 2 layers x 2 (K, V) x 8 heads
  // x 2048 rows x 128 x 2 B = 16 MiB read by attention.
  const double layer_w = 2.0 * 218'112'000, head_w = 2.0 * 128256 * 4096, kv = 2.0 * 2 * 8 * 2048 * 128 * 2;
  CHECK(read_bytes(s) >= 2 * layer_w + head_w + kv);
  CHECK(read_bytes(s) <= 1.02 * (2 * layer_w + head_w + kv) + (1 << 20));  // and little more
  // Never faster than its bytes at the nominal 204.8 GB/s.
  CHECK(ns(s) >= read_bytes(s) / 204.8);
}

TEST_CASE("gen cli: fp8 weights and cache halve the bytes a decode step reads", "[gen][cli]") {
  TempDir d("gen_fp8");
  json h = gen_run(d, "h", "granite-3.3-8b --phase decode --batch 1 --context 1024 --layers 1");
  json e = gen_run(d, "e", "granite-3.3-8b --phase decode --batch 1 --context 1024 --layers 1 --dtype fp8");
  CHECK(read_bytes(e) == Approx(read_bytes(h) / 2).epsilon(0.01));
  CHECK(ns(e) < ns(h));
}

TEST_CASE("gen cli: layers add up", "[gen][cli]") {
  // The marginal time of a layer is the same for every layer: T(4) - T(1) = 3 (T(2) - T(1)) within 5 %.
  TempDir d("gen_layers");
  const std::string base = "llama-3.1-8b --phase decode --batch 1 --context 512 --layers ";
  double t1 = ns(gen_run(d, "l1", base + "1")), t2 = ns(gen_run(d, "l2", base + "2")), t4 = ns(gen_run(d, "l4", base + "4"));
  CHECK(t2 > t1);
  CHECK(t4 - t1 == Approx(3 * (t2 - t1)).epsilon(0.05));
}

TEST_CASE("gen cli: decode time grows with context and with batch", "[gen][cli]") {
  TempDir d("gen_mono");
  double prev = 0;
  for (int ctx : {256, 2048, 8192, 32768}) {
    double t = ns(gen_run(d, "c" + std::to_string(ctx), "granite-3.3-8b --phase decode --batch 1 --layers 1 --context " +
                                                           std::to_string(ctx)));
    INFO("context " << ctx);
    CHECK(t > prev);
    prev = t;
  }
  prev = 0;
  for (int b : {1, 4, 16}) {
    double t = ns(gen_run(d, "b" + std::to_string(b), "granite-3.3-8b --phase decode --context 2048 --layers 1 --batch " +
                                                         std::to_string(b)));
    INFO("batch " << b);
    CHECK(t > prev);
    prev = t;
  }
}

TEST_CASE("gen cli: a 2048-token prefill layer is compute-bound and never faster than its MACs at peak", "[gen][cli]") {
  TempDir d("gen_prefill");
  // One and two layers: the difference is one layer, without the LM head (1 GB read for the
  // last token only, which dominates a one-layer graph).
  json s1 = gen_run(d, "p1", "llama-3.1-8b --phase prefill --tokens 2048 --layers 1");
  json s2 = gen_run(d, "p2", "llama-3.1-8b --phase prefill --tokens 2048 --layers 2");
  auto roof = [](const json& s, const char* k) { return s["roofline"][k].get<double>(); };
  const double macs = s2["compute"]["macs"].get<double>() - s1["compute"]["macs"].get<double>();
  // A layer's projections alone: 2048 tokens x 218 103 808 weights (not the norms) = 4.47e11.
  CHECK(macs >= 2048.0 * 218'103'808);
  // The layer's compute at peak outweighs its off-chip bytes at peak bandwidth.
  CHECK(roof(s2, "compute_bound_ns") - roof(s1, "compute_bound_ns") >
        roof(s2, "memory_bound_ns") - roof(s1, "memory_bound_ns"));
  CHECK(ns(s2) >= s2["compute"]["macs"].get<double>() / 49152.0);  // 32 cores x 1536 MAC/ns
  CHECK(ns(s2) - ns(s1) >= macs / 49152.0);
}

TEST_CASE("gen cli: the encoder's forward pass runs", "[gen][cli]") {
  TempDir d("gen_enc");
  json s = gen_run(d, "e", "granite-embedding-278m --phase prefill --batch 4 --tokens 128 --layers 2");
  CHECK(ns(s) > 0);
  CHECK(s["tasks"]["instances"].get<double>() > 100);
}

TEST_CASE("gen cli: a whole Llama-3.1-8B decode step reads its weights once, no faster than the bandwidth", "[gen][cli][model]") {
  TempDir d("gen_llama");
  json s = gen_run(d, "llama", "llama-3.1-8b --phase decode --batch 1 --context 2048");
  // Weights 2 x 8 030 261 248 B, less the embedding table (one row gathered: 128256 x 4096 x
  // 2 B), plus the KV cache: 32 layers x K and V x 8 heads x 2048 rows x 128 x 2 B = 256 MiB.
  const double weights = 2.0 * 8'030'261'248, table = 2.0 * 128256 * 4096, kv = 32.0 * 2 * 8 * 2048 * 128 * 2;
  CHECK(read_bytes(s) >= weights - table + kv);
  CHECK(read_bytes(s) <= 1.01 * (weights - table + kv));
  CHECK(ns(s) >= read_bytes(s) / 204.8);
  CHECK(s["roofline"]["bound_by"] == "memory");
}

TEST_CASE("gen cli: dfsim serve simulates each step shape with gen's graphs, once", "[gen][cli][serve]") {
  TempDir d("gen_serve");
  fs::create_directories(d.path);
  std::ofstream(d.path / "tiny.json") << R"({"format": "dfsim.model", "version": 1, "name": "tiny",
    "source": "a test model", "hidden_size": 256, "num_layers": 3, "num_heads": 4, "num_kv_heads": 2,
    "intermediate_size": 512, "vocab_size": 1000, "max_position_embeddings": 4096})";
  const std::string cmd = "serve --model " + (d.path / "tiny.json").string() +
                          " --rate 2 -n 8 --prompt-len normal:100,20 --output-len normal:20,5 --step-cache " +
                          (d.path / "cache").string() + " -o ";
  Result first = dfsim(cmd + (d.path / "a").string());
  REQUIRE(first.code == 0);
  // 3 shapes (one prefill, two decode KV buckets), each simulated with 1 and 2 of the 3 layers.
  CHECK_THAT(first.out, Contains("step simulations: 6 run (3 shapes found in"));
  CHECK_THAT(first.out, Contains("Step times: simulated by dfsim (1 and 2 layers, extrapolated"));
  Result again = dfsim(cmd + (d.path / "b").string());
  REQUIRE(again.code == 0);
  CHECK_THAT(again.out, Contains("step simulations: 0 run (0 shapes found in 1 scheduler passes)"));  // all from the cache
  CHECK(slurp(d.path / "a" / "steps.csv") == slurp(d.path / "b" / "steps.csv"));
  CHECK(slurp(d.path / "a" / "summary.json") == slurp(d.path / "b" / "summary.json"));
  // Every layer simulated: one run per shape; the extrapolation is within 1 % of it.
  Result full = dfsim(cmd + (d.path / "c").string() + " --full-steps --jobs 1");
  REQUIRE(full.code == 0);
  CHECK_THAT(full.out, Contains("step simulations: 3 run (3 shapes found in"));
  json ja = json::parse(slurp(d.path / "a" / "summary.json")), jc = json::parse(slurp(d.path / "c" / "summary.json"));
  CHECK(ja["tpot_ms"]["mean"].get<double>() == Approx(jc["tpot_ms"]["mean"].get<double>()).epsilon(0.01));
  CHECK(ja["energy"]["steps_j"].get<double>() == Approx(jc["energy"]["steps_j"].get<double>()).epsilon(0.01));
}

TEST_CASE("gen cli: a model step reports its energy per token", "[gen][cli][energy]") {
  TempDir d("gen_energy");
  json dec = gen_run(d, "d", "llama-3.1-8b --phase decode --batch 4 --context 512 --layers 1");
  const json& e = dec["energy"];
  // Decode: 4 sequences, one token each.
  CHECK(e["j_per_token"].get<double>() == Approx(e["total_j"].get<double>() / 4));
  CHECK(e["tokens_per_j"].get<double>() == Approx(4 / e["total_j"].get<double>()));
  // Prefill: the prompt tokens of every sequence (2 x 64).
  json pre = gen_run(d, "p", "llama-3.1-8b --phase prefill --batch 2 --tokens 64 --layers 1");
  CHECK(pre["energy"]["j_per_token"].get<double>() == Approx(pre["energy"]["total_j"].get<double>() / 128));
  // A kernel workload has no tokens.
  TempDir k("gen_energy_kernel");
  REQUIRE(dfsim("run -q -w workloads/add_2048x1024.json --trace off -o " + k.str()).code == 0);
  CHECK_FALSE(read_json(k.path / "summary.json")["energy"].contains("j_per_token"));
}
