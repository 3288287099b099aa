// What a model run reports (issue 10): `dfsim run` of a `dfsim gen` graph adds time per token
// (decode) or per step (prefill), op families and layers, and the weight bandwidth; other
// workloads print and write no model section. Two-layer graphs keep the runs short.
#include <catch2/catch.hpp>

#include <cmath>

#include "tests/regression/cli_helpers.h"

using namespace cli_test;
using Catch::Contains;

namespace {

struct ModelRun {
  TempDir dir;
  Result run;
  nlohmann::json summary;
  ModelRun(const std::string& tag, const std::string& gen_args) : dir(tag) {
    fs::create_directories(dir.path);
    std::string g = (dir.path / "g.json").string();
    Result gen = dfsim("gen " + gen_args + " -o " + g);
    INFO(gen.out);
    REQUIRE(gen.code == 0);
    run = dfsim("run -w " + g + " --trace off -o " + (dir.path / "out").string());
    INFO(run.out);
    REQUIRE(run.code == 0);
    summary = read_json(dir.path / "out" / "summary.json");
    REQUIRE(summary.contains("model"));
  }
  const nlohmann::json& model() const { return summary["model"]; }
};

double num(const nlohmann::json& j) { return j.get<double>(); }

}  // namespace

TEST_CASE("model report: a decode step's tokens/s, families and layers add up to the run", "[model_report]") {
  ModelRun r("decode", "llama-3.1-8b --phase decode --batch 4 --context 256 --layers 2");
  const auto& s = r.summary;
  const auto& m = r.model();
  CHECK(m["name"] == "llama-3.1-8b");
  CHECK(m["phase"] == "decode");
  CHECK(m["batch"] == 4);
  CHECK(m["context"] == 256);
  CHECK(m["layers"] == 2);
  CHECK(m["model_layers"] == 32);
  // The step is the run; a decode step gives each of the 4 sequences one token.
  const double ms = num(s["sim_time_ns"]) / 1e6;
  CHECK(num(m["step_ms"]) == ms);
  CHECK(num(m["ms_per_token"]) == ms);
  CHECK(num(m["tokens_per_s"]) == 4 * 1000.0 / ms);
  CHECK_FALSE(m.contains("ttft_ms"));

  // Families: 15 kernels per decode layer (norm, q, k, v, 2 rope, 2 kv_write, sdpa, o+residual,
  // norm, gate, up, silu*up, down+residual) and 3 outside (embedding, final norm, LM head).
  const auto& f = m["families"];
  CHECK(f["attention"]["kernels"] == 2 * 5);
  CHECK(f["projections"]["kernels"] == 2 * 4);
  CHECK(f["mlp"]["kernels"] == 2 * 4);
  CHECK(f["norms"]["kernels"] == 2 * 2 + 1);
  CHECK(f["embedding"]["kernels"] == 1);
  CHECK(f["head"]["kernels"] == 1);
  CHECK(f["other"]["kernels"] == 0);  // every kernel of a generated step has a family
  CHECK_FALSE(f.contains("communication"));  // one card
  CHECK(s["offchip"]["link_bytes"] == 0);       // and nothing over PCIe: no PCIe fields
  CHECK_FALSE(f["mlp"].contains("pcie_bytes"));
  CHECK_FALSE(s["kernels"][0].contains("pcie_bytes"));
  CHECK(s["kernels"].size() == 33u);
  // Shares add up to the step (each is rounded to 6 decimals), times to the run's time.
  double share = num(m["idle"]["share"]), time = num(m["idle"]["time_ns"]);
  std::uint64_t bytes = 0, macs = 0;
  for (const auto& [name, g] : f.items()) {
    INFO(name);
    share += num(g["share"]);
    time += num(g["time_ns"]);
    bytes += g["offchip_bytes"].get<std::uint64_t>();
    macs += g["macs"].get<std::uint64_t>();
    if (name != "other") CHECK(num(g["fraction_of_roofline"]) > 0);  // every family with kernels moves bytes
  }
  CHECK(share == Approx(1.0).margin(6e-6));
  CHECK(time == Approx(num(s["sim_time_ns"])).epsilon(1e-9));
  // Conservation: the families' bytes and MACs are the run's.
  CHECK(bytes == s["offchip"]["graph_bytes"].get<std::uint64_t>());
  CHECK(bytes == s["offchip"]["bytes_read"].get<std::uint64_t>() + s["offchip"]["bytes_written"].get<std::uint64_t>());
  CHECK(macs == s["compute"]["macs"].get<std::uint64_t>());
  // Layers plus what lies outside them are the whole step as well.
  const auto& bl = m["by_layer"];
  REQUIRE(bl["per_layer"].size() == 2u);
  std::uint64_t layer_bytes = bl["outside_layers"]["offchip_bytes"].get<std::uint64_t>();
  double layer_time = num(bl["outside_layers"]["time_ns"]);
  for (const auto& l : bl["per_layer"]) {
    layer_bytes += l["offchip_bytes"].get<std::uint64_t>();
    layer_time += num(l["time_ns"]);
    CHECK(l["kernels"] == 15);
  }
  CHECK(layer_bytes == bytes);
  CHECK(layer_time + num(m["idle"]["time_ns"]) == Approx(num(s["sim_time_ns"])).epsilon(1e-9));
  CHECK(bl["layers"]["count"] == 2);
  CHECK(num(bl["layers"]["min_ns"]) <= num(bl["layers"]["median_ns"]));
  CHECK(num(bl["layers"]["median_ns"]) <= num(bl["layers"]["max_ns"]));
  // Two identical layers take about the same time.
  CHECK(num(bl["layers"]["min_ns"]) == Approx(num(bl["layers"]["max_ns"])).epsilon(0.02));

  // Weights: 2 layers of Llama-3.1-8B (D 4096, KV 1024, F 14336) and the untied embedding
  // and LM head (vocab 128256), in fp16:
  //   per layer 2·4096² (q, o) + 2·1024·4096 (k, v) + 3·14336·4096 (MLP) + 2·4096 (norms)
  //   = 218112000; 2 layers + 2·128256·4096 + 4096 (final norm) = 1486901248 elements.
  const auto& w = m["weights"];
  CHECK(w["bytes"].get<std::uint64_t>() == 2 * 1486901248ull);
  // Read: every weight once, but of the embedding table only the rows of the 4 ids (at most).
  const std::uint64_t table = 2ull * 128256 * 4096;
  CHECK(w["bytes_read"].get<std::uint64_t>() <= w["bytes"].get<std::uint64_t>() - table + 4 * 2 * 4096);
  CHECK(w["bytes_read"].get<std::uint64_t>() >= w["bytes"].get<std::uint64_t>() - table);
  CHECK(num(w["achieved_gbps"]) == Approx(num(w["bytes_read"]) / num(s["sim_time_ns"])).epsilon(1e-6));
  CHECK(num(w["peak_gbps"]) == 204.8);  // configs/spyre.json
  CHECK(num(w["fraction_of_peak"]) == Approx(num(w["achieved_gbps"]) / 204.8).epsilon(1e-5));
  CHECK(num(w["fraction_of_peak"]) <= 1.0);

  // The terminal shows it all in a few lines.
  CHECK_THAT(r.run.out, Contains("  model     llama-3.1-8b decode step, batch 4, context 256, 2 of 32 layers: "));
  CHECK_THAT(r.run.out, Contains(" tokens/s\n"));
  CHECK_THAT(r.run.out, Contains("GB/s of 204.8 peak"));
  for (const char* fam : {"attention", "projections", "mlp", "norms", "embedding", "head"})
    CHECK_THAT(r.run.out, Contains("    " + std::string(fam) + " "));
  CHECK_THAT(r.run.out, !Contains("    other "));  // a family without kernels is not a row
  CHECK_THAT(r.run.out, Contains("  by layer  2 layers, "));

  // The whole model, extrapolated: the run's time plus 32 − 2 = 30 more layers of the second
  // layer's time (the first also fills the pipeline), in ms; one layer after the first gives
  // no range.
  const auto& wm = m["whole_model"];
  const double second = num(bl["per_layer"][1]["time_ns"]);
  CHECK(wm["layers"] == 32);
  CHECK(num(wm["per_layer_ns"]) == second);
  CHECK(num(wm["step_ms"]) == Approx((num(s["sim_time_ns"]) + 30 * second) / 1e6).margin(1e-6));  // step_ms and its range are rounded to 6 decimals
  CHECK(num(wm["low_ms"]) == num(wm["step_ms"]));
  CHECK(num(wm["high_ms"]) == num(wm["step_ms"]));
  CHECK(num(wm["tokens_per_s"]) == Approx(4 * 1000 / num(wm["step_ms"])).epsilon(1e-6));
  CHECK_THAT(r.run.out, Contains("  whole     32 layers, extrapolated: "));
  CHECK_THAT(r.run.out, Contains("(from the second layer alone: 3 or more layers give a range)"));
}

TEST_CASE("model report: three of a model's layers extrapolate to all with a range", "[model_report]") {
  ModelRun r("three", "llama-3.1-8b --phase decode --batch 1 --context 128 --layers 3");
  const auto& m = r.model();
  const auto& pl = m["by_layer"]["per_layer"];
  REQUIRE(pl.size() == 3u);
  const double l1 = num(pl[1]["time_ns"]), l2 = num(pl[2]["time_ns"]), t = num(r.summary["sim_time_ns"]);
  const auto& wm = m["whole_model"];
  // 29 more layers of the mean of layers 1 and 2; the range with the faster and the slower.
  CHECK(num(wm["per_layer_ns"]) == Approx((l1 + l2) / 2).epsilon(1e-9));
  // (step_ms and its range are rounded to 6 decimals)
  CHECK(num(wm["step_ms"]) == Approx((t + 29 * (l1 + l2) / 2) / 1e6).margin(1e-6));
  CHECK(num(wm["low_ms"]) == Approx((t + 29 * std::min(l1, l2)) / 1e6).margin(1e-6));
  CHECK(num(wm["high_ms"]) == Approx((t + 29 * std::max(l1, l2)) / 1e6).margin(1e-6));
  CHECK(num(wm["low_ms"]) <= num(wm["step_ms"]));
  CHECK(num(wm["step_ms"]) <= num(wm["high_ms"]));
  CHECK_THAT(r.run.out, Contains(" by the fastest and slowest layer after the first)"));
}

TEST_CASE("model report: a prefill step reports its time to first token", "[model_report]") {
  ModelRun r("prefill", "granite-3.3-8b --phase prefill --tokens 64 --layers 1");
  const auto& m = r.model();
  CHECK(m["phase"] == "prefill");
  CHECK(m["tokens"] == 64);
  CHECK(num(m["ttft_ms"]) == num(m["step_ms"]));
  CHECK(num(m["step_ms"]) == num(r.summary["sim_time_ns"]) / 1e6);
  CHECK_FALSE(m.contains("tokens_per_s"));
  CHECK(m["by_layer"]["per_layer"].size() == 1u);
  double share = num(m["idle"]["share"]);
  for (const auto& [name, g] : m["families"].items()) share += num(g["share"]);
  CHECK(share == Approx(1.0).margin(6e-6));
  CHECK_THAT(r.run.out, Contains("  model     granite-3.3-8b prefill step, batch 1, 64 tokens, 1 of 40 layers: "));
  CHECK_THAT(r.run.out, Contains("ms per step (time to first token on an idle card)"));
  CHECK_FALSE(m.contains("whole_model"));  // one layer: nothing to tell the others' time from
}

TEST_CASE("model report: a workload that is not a model step has no model section", "[model_report]") {
  TempDir d("plain");
  Result r = dfsim("run -w workloads/add_2048x1024.json --trace off -o " + d.str());
  REQUIRE(r.code == 0);
  CHECK_FALSE(read_json(d.path / "summary.json").contains("model"));
  CHECK_THAT(r.out, !Contains("model ") && !Contains("by family") && !Contains("tokens/s"));
}

TEST_CASE("model report: a bad model object is an input error naming its path", "[model_report]") {
  TempDir d("bad");
  fs::create_directories(d.path);
  nlohmann::json g = read_json("workloads/add_2048x1024.json");
  g["model"] = {{"name", "m"}, {"phase", "decode"}, {"batch", 0}};
  std::string f = (d.path / "g.json").string();
  std::ofstream(f) << g.dump();
  Result r = dfsim("run -w " + f + " -o " + (d.path / "out").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains(f + ": /model/batch: "));
  CHECK(lines(r.out).size() == 1u);
  CHECK_FALSE(fs::exists(d.path / "out"));
}

TEST_CASE("model report: a compiled model step keeps its model object and reports the same", "[model_report]") {
  ModelRun r("compiled", "llama-3.1-8b --phase decode --batch 2 --context 128 --layers 1");
  std::string k = (r.dir.path / "k.json").string();
  REQUIRE(dfsim("compile " + (r.dir.path / "g.json").string() + " -o " + k).code == 0);
  CHECK(read_json(k)["model"]["name"] == "llama-3.1-8b");
  Result run = dfsim("run -w " + k + " --trace off -o " + (r.dir.path / "k").string());
  REQUIRE(run.code == 0);
  CHECK(read_json(r.dir.path / "k" / "summary.json")["model"] == r.model());
}

TEST_CASE("model report: a hand-written graph with a model object and free tensor names", "[model_report]") {
  // Layer indices come from names: a sparse, huge one is one entry, not a billion; a name
  // outside the convention counts as "other", outside the layers.
  TempDir d("hand");
  fs::create_directories(d.path);
  nlohmann::json g = {
      {"format", "dfsim.ops"}, {"version", 1}, {"name", "hand"},
      {"model", {{"name", "toy"}, {"phase", "prefill"}, {"batch", 1}, {"tokens", 64}}},
      {"tensors", {{"a", {{"shape", {64, 1024}}, {"dtype", "fp16"}}},
                   {"l999999999.mlp.act", {{"shape", {64, 1024}}, {"dtype", "fp16"}}},
                   {"y", {{"shape", {64, 1024}}, {"dtype", "fp16"}}}}},
      {"inputs", {"a"}}, {"outputs", {"y"}},
      {"ops", {{{"op", "relu"}, {"inputs", {"a"}}, {"outputs", {"l999999999.mlp.act"}}},
               {{"op", "exp"}, {"inputs", {"l999999999.mlp.act"}}, {"outputs", {"y"}}}}},
      {"compile", {{"cores", 4}, {"fuse", false}}}};
  std::string f = (d.path / "g.json").string();
  std::ofstream(f) << g.dump();
  Result r = dfsim("run -w " + f + " --trace off -o " + (d.path / "out").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto m = read_json(d.path / "out" / "summary.json")["model"];
  REQUIRE(m["by_layer"]["per_layer"].size() == 1u);
  CHECK(m["by_layer"]["per_layer"][0]["layer"] == 999999999);
  CHECK(m["by_layer"]["layers"]["slowest"] == 999999999);
  CHECK(m["families"]["mlp"]["kernels"] == 1);
  CHECK(m["families"]["other"]["kernels"] == 1);
  CHECK(m["by_layer"]["outside_layers"]["kernels"] == 1);
  CHECK(m["weights"]["bytes_read"] == 0);  // no tensor named as a weight
  CHECK(m["weights"]["bytes"] == 0);       // not stated
  CHECK_THAT(r.out, Contains("  model     toy prefill step, batch 1, 64 tokens: "));
}
