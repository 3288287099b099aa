// dfsim serve's scheduler (sim/serve/), driven directly with step times from a formula, so each
// figure can be checked by hand: exact TTFT and E2E of a request alone, the volumetric and block
// limits in every step, Little's law over a steady run, saturation, determinism; and the
// simulated step-time provider (child dfsim run, cache) with a stand-in step graph.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "sim/common/error.h"
#include "sim/config/chip_config.h"
#include "sim/serve/requests.h"
#include "sim/serve/serve_report.h"
#include "sim/serve/serving_loop.h"
#include "sim/serve/simulated_step_times.h"
#include "sim/serve/step_discovery.h"

using namespace dfsim;
using namespace dfsim::serve;

namespace {

// prefill: 50 ms + 1 us per KV token; decode: 20 ms + 1 ms per sequence of the batch bucket +
// 0.1 us per KV token.
class FormulaTimes : public StepTimeProvider {
 public:
  StepCost cost(const StepShape& s) override {
    ++calls;
    if (s.phase == Phase::prefill) return {50'000'000 + 1'000ll * s.kv_tokens, energy ? 3.0 : -1};
    return {20'000'000 + 1'000'000ll * s.batch + 100ll * s.kv_tokens, energy ? 1.0 + 0.125 * s.batch : -1};
  }
  bool energy = false;  // prefill 3 J; decode 1 J + 0.125 J per sequence of the bucket
  std::string describe() const override { return "formula"; }
  int calls = 0;
};

SchedulerParams params(std::int64_t blocks = 100000) {
  SchedulerParams p;
  p.max_num_seqs = 16;
  p.max_num_batched_tokens = 512;
  p.max_model_len = 3072;
  p.block_size = 64;
  p.num_blocks = blocks;
  p.prefill_chunk = 512;
  return p;
}

BucketSpec buckets(const SchedulerParams& p) {
  BucketSpec b;
  b.batch = BucketSpec::default_batches(p.max_num_seqs);
  b.block_size = p.block_size;
  b.query_quantum = p.prefill_chunk;
  return b;
}

ServeResult run(const std::vector<Request>& reqs, const SchedulerParams& p, bool energy = false) {
  FormulaTimes t;
  t.energy = energy;
  BucketSpec b = buckets(p);
  return run_serving(reqs, p, b, t);
}

std::vector<Request> generated(double rate, std::int64_t n, std::uint64_t seed, const std::string& prompt = "normal:200,100",
                               const std::string& output = "normal:200,100") {
  GeneratorSpec g;
  g.rate = rate;
  g.num_requests = n;
  g.seed = seed;
  g.prompt = parse_length_dist(prompt, "--prompt-len");
  g.output = parse_length_dist(output, "--output-len");
  return generate_requests(g);
}

}  // namespace

TEST_CASE("serve: one request alone: TTFT is its prefill step, E2E adds n - 1 decode steps exactly", "[serve]") {
  // 200 prompt tokens: right-padded to 256 (4 blocks of 64), left-padded to one 512-token chunk
  // (left pad 256). Prefill at kv 512: 50 ms + 512 us = 50.512 ms.
  // Decode k = 1..9 runs at tkv 256 + 200 + k = 457..465 -> 8 blocks = kv 512, batch bucket 4:
  // 20 ms + 4 ms + 51.2 us = 24.0512 ms. E2E = 50.512 + 9 x 24.0512 = 266.9728 ms.
  ServeResult r = run({{7, 1'000'000, 200, 10}}, params());
  REQUIRE(r.requests.size() == 1);
  const auto& q = r.requests[0];
  CHECK(q.scheduled == 1'000'000);
  CHECK(q.first_token - q.req.arrival == 50'512'000);
  CHECK(q.finish - q.req.arrival == 50'512'000 + 9 * 24'051'200);
  REQUIRE(r.steps.size() == 10);
  CHECK(r.steps[0].shape == StepShape{Phase::prefill, 1, 512, 512});
  CHECK(r.steps[0].real_tokens == 200);
  CHECK(r.steps[1].shape == StepShape{Phase::decode, 4, 512, 1});
  CHECK(r.steps[1].max_tkv == 457);
  CHECK(r.steps[9].max_tkv == 465);
  CHECK(r.itl.size() == 9);
  CHECK(r.preemptions == 0);
  // Padding share: real query tokens 200 + 9 x 1 against buckets 512 + 9 x 4.
  SchedulerParams p = params();
  Json s = make_serve_summary(r, RunContext{"m", "c", "formula", "spyre", 1, 0, p});
  CHECK(s["padding_share"].get<double>() == Approx(1 - 209.0 / 548.0).margin(1e-6));
  CHECK(s["ttft_ms"]["p50"].get<double>() == Approx(50.512).margin(1e-9));
  CHECK(s["tpot_ms"]["mean"].get<double>() == Approx(24.0512).margin(1e-9));
}

TEST_CASE("serve: a long prompt is prefilled in chunks, each at its own KV bucket", "[serve]") {
  // 600 tokens: right-padded to 640, left-padded to 1024 = 2 chunks, left pad 384. Chunk 1 holds
  // 512 - 384 = 128 prompt tokens at kv 512 (50.512 ms), chunk 2 the other 472 at kv 1024
  // (51.024 ms): TTFT = 101.536 ms.
  ServeResult r = run({{0, 0, 600, 1}}, params());
  REQUIRE(r.steps.size() == 2);
  CHECK(r.steps[0].real_tokens == 128);
  CHECK(r.steps[1].real_tokens == 472);
  CHECK(r.steps[1].shape == StepShape{Phase::prefill, 1, 1024, 512});
  CHECK(r.requests[0].first_token == 101'536'000);
  CHECK(r.requests[0].finish == 101'536'000);  // one output token: done at the prefill
  CHECK(prefill_layout(600, 64, 512).left_pad == 384);
  // The plugin's own example (scheduler.md, "Summary diagram"): block 4, chunk 8, prompt 10 ->
  // one dummy block of left padding, two chunks, tkv 14 after the last chunk.
  CHECK(prefill_layout(10, 4, 8).left_pad == 4);
  CHECK(prefill_layout(10, 4, 8).chunks == 2);
  SchedulerParams p = params();
  p.block_size = 4;
  p.prefill_chunk = 8;
  ServeResult tiny = run({{0, 0, 10, 1}}, p);
  REQUIRE(tiny.steps.size() == 2);
  CHECK(tiny.steps[0].max_tkv == 8);
  CHECK(tiny.steps[1].max_tkv == 14);
}

TEST_CASE("serve: prefills interleave with decodes, one prefill at a time", "[serve]") {
  // Four requests at t = 0: never two prefill steps in a row while a decode is running, and the
  // decode batch is filled as the prefills complete.
  std::vector<Request> reqs;
  for (int i = 0; i < 4; ++i) reqs.push_back({i, 0, 100, 20});
  ServeResult r = run(reqs, params());
  for (std::size_t i = 1; i < r.steps.size(); ++i)
    if (r.steps[i].shape.phase == Phase::prefill && r.steps[i - 1].shape.phase == Phase::prefill)
      CHECK(r.steps[i].running == 0);
  // P D P D P D P D ...: the fourth prefill is step 7 (index 6), with three sequences decoding.
  CHECK(r.steps[6].shape.phase == Phase::prefill);
  CHECK(r.steps[6].running == 3);
  CHECK(r.steps[7].batch == 4);
  // Without interleaving the four prefills run back to back.
  SchedulerParams p = params();
  p.interleave = false;
  ServeResult r2 = run(reqs, p);
  for (int i = 0; i < 4; ++i) CHECK(r2.steps[i].shape.phase == Phase::prefill);
}

TEST_CASE("serve: the volumetric and KV-block limits hold in every step, preemption recomputes", "[serve]") {
  // A tight pool (80 blocks of 64 = 5120 tokens) and a tight volumetric limit (8192) under load.
  SchedulerParams p = params(80);
  p.volumetric_limit = 8192;
  p.max_model_len = 2048;
  std::vector<Request> reqs = generated(4, 400, 3, "uniform:50,1000", "uniform:50,900");
  ServeResult r = run(reqs, p);
  std::int64_t max_volume = 0;
  for (const auto& s : r.steps) {
    CHECK(s.blocks_used <= p.num_blocks);
    CHECK(s.batch <= p.max_num_seqs);
    if (s.shape.phase == Phase::decode) {
      CHECK(static_cast<std::int64_t>(s.batch) * s.max_tkv <= p.volumetric_limit);
      max_volume = std::max<std::int64_t>(max_volume, static_cast<std::int64_t>(s.batch) * s.max_tkv);
    }
  }
  CHECK(max_volume > p.volumetric_limit / 2);  // the limit is approached, so it is what held
  CHECK(r.preemptions > 0);                    // the pool ran out and blocks were reclaimed
  // Every request completed with exactly its output tokens: first tokens + gaps = all tokens.
  std::int64_t tokens = 0;
  for (const auto& q : r.requests) {
    CHECK(q.finish >= q.first_token);
    CHECK(q.first_token > q.req.arrival);
    tokens += q.req.output_tokens;
  }
  // (a recompute prefill after a preemption emits the next token, counted as a gap)
  CHECK(static_cast<std::int64_t>(r.itl.size() + r.requests.size()) == tokens);
  // Unlimited volume under the same load goes past 8192: the limit changed the schedule.
  SchedulerParams wide = params(80);
  wide.max_model_len = 2048;
  ServeResult w = run(reqs, wide);
  std::int64_t wide_volume = 0;
  for (const auto& s : w.steps) wide_volume = std::max<std::int64_t>(wide_volume, static_cast<std::int64_t>(s.batch) * s.max_tkv);
  CHECK(wide_volume > p.volumetric_limit);
}

TEST_CASE("serve: Little's law over a steady run (mean in system = throughput x mean latency)", "[serve]") {
  // 2000 requests at 1 req/s, below the capacity of this step-time formula (~2 req/s: a full
  // decode batch of 16 takes 20 + 16 + ~0.1 ms, 200 output tokens each, plus a 50 ms prefill).
  std::vector<Request> reqs = generated(1, 2000, 11);
  SchedulerParams p = params();
  ServeResult r = run(reqs, p);
  Json s = make_serve_summary(r, RunContext{"m", "c", "formula", "spyre", 1, 1, p});
  double lambda = s["throughput"]["requests_per_s"].get<double>();
  double w_s = s["e2e_ms"]["mean"].get<double>() / 1000;
  double l = s["queue"]["mean_in_system"].get<double>();  // sampled at step starts, time-weighted
  CHECK(l == Approx(lambda * w_s).epsilon(0.05));
  CHECK(s["queue"]["mean_waiting"].get<double>() < 1);  // steady: no queue builds up
}

TEST_CASE("serve: past saturation the queue and TTFT grow while throughput flattens", "[serve]") {
  SchedulerParams p = params();
  std::vector<double> rates = {1, 4, 8, 16}, tput, ttft, waiting;
  for (double rate : rates) {
    ServeResult r = run(generated(rate, 600, 5), p);
    Json s = make_serve_summary(r, RunContext{"m", "c", "formula", "spyre", 1, rate, p});
    tput.push_back(s["throughput"]["requests_per_s"].get<double>());
    ttft.push_back(s["ttft_ms"]["p50"].get<double>());
    waiting.push_back(s["queue"]["mean_waiting"].get<double>());
  }
  CHECK(tput[0] == Approx(1).epsilon(0.15));          // below saturation: keeps up with the offer
  CHECK(tput[3] < 16 * 0.6);                          // far beyond: cannot keep up
  CHECK(tput[3] == Approx(tput[2]).epsilon(0.10));    // flat
  for (int i = 1; i < 4; ++i) {
    CHECK(ttft[i] > ttft[i - 1]);
    CHECK(waiting[i] > waiting[i - 1]);
  }
}

TEST_CASE("serve: a seeded generator is deterministic, another seed differs", "[serve]") {
  auto a = generated(3, 300, 42, "hist:" DFSIM_SOURCE_DIR "/tests/data/serve/lengths_hist.csv");
  auto b = generated(3, 300, 42, "hist:" DFSIM_SOURCE_DIR "/tests/data/serve/lengths_hist.csv");
  auto c = generated(3, 300, 43, "hist:" DFSIM_SOURCE_DIR "/tests/data/serve/lengths_hist.csv");
  REQUIRE(a.size() == 300);
  bool same = true, differs = false;
  std::set<int> lengths;
  for (std::size_t i = 0; i < a.size(); ++i) {
    same = same && a[i].arrival == b[i].arrival && a[i].prompt_tokens == b[i].prompt_tokens &&
           a[i].output_tokens == b[i].output_tokens;
    differs = differs || a[i].arrival != c[i].arrival;
    lengths.insert(a[i].prompt_tokens);
  }
  CHECK(same);
  CHECK(differs);
  CHECK(lengths == std::set<int>{64, 200, 900});  // only the histogram's values
  // Gamma arrivals with shape 1 have the Poisson mean gap: 300 gaps at 3 req/s ~ 100 s.
  GeneratorSpec g;
  g.rate = 3;
  g.num_requests = 3001;
  g.arrival = "gamma";
  g.burstiness = 0.5;
  g.prompt = g.output = parse_length_dist("10", "x");
  auto gam = generate_requests(g);
  CHECK(gam.back().arrival / 1e9 == Approx(1000).epsilon(0.1));
}

namespace {

// A stand-in for `dfsim gen`: an elementwise add whose size grows with the shape and the layers.
Json add_graph(const ModelInfo&, const StepShape& s, int, int layers) {
  int rows = 64 * s.batch * (s.phase == Phase::prefill ? 4 : 1) * std::max(1, layers);
  Json t = {{"shape", {rows, 1024}}, {"dtype", "fp16"}};
  return Json{{"format", "dfsim.ops"}, {"version", 1}, {"name", "step"},
              {"tensors", {{"a", t}, {"b", t}, {"y", t}}}, {"inputs", {"a", "b"}}, {"outputs", {"y"}},
              {"ops", {{{"op", "add"}, {"inputs", {"a", "b"}}, {"outputs", {"y"}}}}}};
}

struct CacheLine {
  std::int64_t ns;
  double energy_j;
};

// step-cache.jsonl by (shape text, layers).
std::map<std::pair<std::string, int>, CacheLine> read_cache(const std::string& file) {
  std::map<std::pair<std::string, int>, CacheLine> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    Json j = Json::parse(line);
    StepShape k{j["phase"] == "prefill" ? Phase::prefill : Phase::decode, j["batch"].get<int>(), j["kv_tokens"].get<int>(),
                j["query_tokens"].get<int>()};
    out[{k.text(), j["layers"].get<int>()}] = {j["step_ns"].get<std::int64_t>(), j["energy_j"].get<double>()};
  }
  return out;
}

// A fresh step-cache directory (removed again at the end, pass or fail) with the default card
// and Llama-3.1-8B.
struct CacheDir {
  std::filesystem::path dir;
  ChipConfig cfg = load_chip_config(DFSIM_SOURCE_DIR "/configs/spyre.json");
  ModelInfo m = load_model_info(DFSIM_SOURCE_DIR "/workloads/models/llama-3.1-8b.json");
  explicit CacheDir(const std::string& name)
      : dir(std::filesystem::temp_directory_path() / ("dfsim_serve_" + name + "_" + std::to_string(getpid()))) {
    std::filesystem::remove_all(dir);
  }
  ~CacheDir() { std::filesystem::remove_all(dir); }
};

}  // namespace

TEST_CASE("serve: the simulated provider runs each shape's 1- and 2-layer graphs once, extrapolates and caches them", "[serve]") {
  CacheDir c("cache");
  const ChipConfig& cfg = c.cfg;
  const ModelInfo& m = c.m;
  const std::string dir = c.dir;
  std::vector<Request> reqs;
  for (int i = 0; i < 6; ++i) reqs.push_back({i, i * 1'000'000ll, 100, 3});
  SchedulerParams p = params();
  BucketSpec b = buckets(p);
  SimulatedStepTimes cold(m, cfg, 1, dir, DFSIM_BINARY, StepSimMode::layers, 2, add_graph);
  ServeResult r1 = run_serving(reqs, p, b, cold);
  std::set<StepShape> shapes;
  for (const auto& s : r1.steps) shapes.insert(s.shape);
  CHECK(shapes.size() >= 2);                                          // a prefill shape and a decode shape
  CHECK(cold.children_run() == 2 * static_cast<int>(shapes.size()));  // layers 1 and 2 of each
  // Llama has 32 layers: T = T1 + 31 (T2 - T1), for time and energy, from the cached runs.
  auto cache = read_cache(cold.cache_file());
  REQUIRE(cache.size() == 2 * shapes.size());
  for (const auto& k : shapes) {
    CacheLine a = cache.at({k.text(), 1}), c = cache.at({k.text(), 2});
    CHECK(c.ns > a.ns);  // the 2-layer graph adds twice the rows
    StepCost got = cold.cost(k);
    CHECK(got.ns == a.ns + 31 * (c.ns - a.ns));
    CHECK(got.energy_j == Approx(a.energy_j + 31 * (c.energy_j - a.energy_j)).epsilon(1e-12));
    CHECK(got.energy_j > 0);
  }
  CHECK(r1.energy);  // every step came with its energy
  SimulatedStepTimes warm(m, cfg, 1, dir, DFSIM_BINARY, StepSimMode::layers, 1, add_graph);
  ServeResult r2 = run_serving(reqs, p, b, warm);
  CHECK(warm.children_run() == 0);  // every shape from the cache
  REQUIRE(r1.steps.size() == r2.steps.size());
  for (std::size_t i = 0; i < r1.steps.size(); ++i) CHECK(r1.steps[i].end == r2.steps[i].end);
  // A different config is a different key: simulated again; so is another layer count.
  ChipConfig half = load_chip_config(DFSIM_SOURCE_DIR "/configs/spyre.json", {"memory.data_rate_mtps=3200"});
  SimulatedStepTimes other(m, half, 1, dir, DFSIM_BINARY, StepSimMode::layers, 1, add_graph);
  CHECK(other.key_of({Phase::decode, 4, 512, 1}, 1) != warm.key_of({Phase::decode, 4, 512, 1}, 1));
  CHECK(warm.key_of({Phase::decode, 4, 512, 1}, 1) != warm.key_of({Phase::decode, 4, 512, 1}, 0));
  // All layers at once: one run per shape, with 0 (all) layers.
  SimulatedStepTimes full(m, cfg, 1, dir, DFSIM_BINARY, StepSimMode::full, 2, add_graph);
  CHECK_FALSE(full.cached({Phase::decode, 4, 512, 1}));
  full.prefetch({{Phase::decode, 4, 512, 1}, {Phase::decode, 8, 512, 1}});
  CHECK(full.children_run() == 2);
  CHECK(full.cached({Phase::decode, 8, 512, 1}));
}

TEST_CASE("serve: discovery passes find every shape a run needs, so the run itself simulates nothing", "[serve]") {
  CacheDir c("discover"), c2("discover_seq");
  const ChipConfig& cfg = c.cfg;
  const ModelInfo& m = c.m;
  const std::string dir = c.dir, dir2 = c2.dir;
  std::vector<Request> reqs = generated(20, 24, 3, "uniform:50,700", "uniform:2,40");
  SchedulerParams p = params();
  BucketSpec b = buckets(p);
  SimulatedStepTimes sim(m, cfg, 1, dir, DFSIM_BINARY, StepSimMode::layers, 2, add_graph);
  DiscoveryResult d = discover_steps(sim, m, cfg, [&](StepTimeProvider& t) { run_serving(reqs, p, b, t); });
  CHECK(d.passes >= 2);  // the last pass met only simulated shapes
  int before = sim.children_run();
  CHECK(before == 2 * d.shapes);
  ServeResult r = run_serving(reqs, p, b, sim);
  CHECK(sim.children_run() == before);  // nothing left to simulate
  // The same answers as a run that simulates each shape when it meets it.
  SimulatedStepTimes seq(m, cfg, 1, dir2, DFSIM_BINARY, StepSimMode::layers, 1, add_graph);
  ServeResult r2 = run_serving(reqs, p, b, seq);
  REQUIRE(r.steps.size() == r2.steps.size());
  for (std::size_t i = 0; i < r.steps.size(); ++i) CHECK(r.steps[i].end == r2.steps[i].end);
  // The roofline estimate that steers the first pass: a decode step of Llama-3.1-8B streams its
  // 16.06 GB of weights at 8 x 6400 MT/s x 4 B = 204.8 GB/s: about 78 ms.
  CHECK(estimate_step_ns(m, cfg, {Phase::decode, 1, 64, 1}) == Approx(78.4e6).epsilon(0.01));
}

TEST_CASE("serve: energy per request is its share of its steps, idle cards draw their static power", "[serve]") {
  // One request: prefill 3 J, then 9 decode steps at batch bucket 4: 1 + 4 x 0.125 = 1.5 J each.
  ServeResult r = run({{7, 1'000'000, 200, 10}}, params(), true);
  REQUIRE(r.energy);
  CHECK(r.requests[0].energy_j == Approx(3 + 9 * 1.5).epsilon(1e-12));
  // Two requests 10 s apart: each alone, so the card idles between them at idle_w = 20 W.
  ServeResult two = run({{0, 0, 200, 10}, {1, 10'000'000'000, 200, 10}}, params(), true);
  RunContext ctx{"m", "c", "formula", "spyre", 1, 0, params(), 20.0, 75.0};
  Json s = make_serve_summary(two, ctx);
  const Json& e = s["energy"];
  // Steps: 2 x 16.5 J. Idle: the 10 s from arrival 0 to arrival 2, less request 0's busy time
  // (50.512 ms + 9 x 24.0512 ms = 266.9728 ms): 9.7330272 s x 20 W = 194.660544 J.
  CHECK(e["steps_j"].get<double>() == Approx(33.0).epsilon(1e-9));
  CHECK(e["idle_j"].get<double>() == Approx(194.660544).epsilon(1e-9));
  CHECK(e["total_j"].get<double>() == Approx(33.0 + 194.660544).epsilon(1e-9));
  double dur = s["duration_s"].get<double>();
  CHECK(e["average_w"].get<double>() == Approx((33.0 + 194.660544) / dur).epsilon(1e-5));
  CHECK(e["j_per_request"]["mean"].get<double>() == Approx(16.5).epsilon(1e-9));
  // The peak step power: a decode step, 1.5 J in 24.0512 ms (a prefill: 3 J in 50.512 ms).
  CHECK(e["peak_step_w"].get<double>() == Approx(1.5 / 0.0240512).epsilon(1e-6));
  // Conservation with a busy batch: the requests' shares sum to the steps' energy.
  ServeResult busy = run(generated(8, 40, 5), params(), true);
  double sum = 0, steps = 0;
  for (const auto& q : busy.requests) sum += q.energy_j;
  for (const auto& st : busy.steps) steps += st.energy_j;
  CHECK(sum == Approx(steps).epsilon(1e-9));
  // A source without energy: no energy section.
  CHECK_FALSE(make_serve_summary(run({{7, 0, 200, 10}}, params()), ctx).contains("energy"));
}

TEST_CASE("serve: simulated step times build dfsim gen's step graph of each shape", "[serve]") {
  ModelInfo m = load_model_info(DFSIM_SOURCE_DIR "/workloads/models/llama-3.1-8b.json");
  // Decode, batch 4, a bucket of 512 KV tokens (the new token included): context 511.
  Json d = make_step_graph(m, {Phase::decode, 4, 512, 1}, 1, 0);
  CHECK(d["tensors"]["l0.attn.k_cache"]["shape"] == Json::array({4, 8, 512, 128}));
  CHECK(d["tensors"]["head.logits"]["shape"] == Json::array({4, 1, 128256}));
  // The second 512-token chunk of a prompt: attends over 1024 tokens, writes rows 512..1023.
  Json p = make_step_graph(m, {Phase::prefill, 1, 1024, 512}, 1, 0);
  CHECK(p["tensors"]["l31.attn.k_cache"]["shape"] == Json::array({1, 8, 1024, 128}));
  CHECK(p["tensors"]["l0.attn.q_rope"]["shape"] == Json::array({1, 32, 512, 128}));
  // TP 4: one card's shard (8 of 32 heads, 2 of 8 KV heads, a quarter of the vocabulary) on 4 cards.
  Json t = make_step_graph(m, {Phase::decode, 4, 512, 1}, 4, 0);
  CHECK(t["compile"]["cards"] == 4);
  CHECK(t["tensors"]["l0.attn.k_cache"]["shape"] == Json::array({4, 2, 512, 128}));
  CHECK(t["tensors"]["l0.attn.q_rope"]["shape"] == Json::array({4, 8, 1, 128}));
  CHECK(t["tensors"]["head.logits"]["shape"] == Json::array({4, 1, 128256 / 4}));
  CHECK(t["tensors"]["head.logits_gathered"]["shape"] == Json::array({4, 1, 128256}));
  CHECK(t["tensors"].contains("l31.mlp.down_sum"));  // the row-parallel down projection's all-reduce
}

TEST_CASE("serve: a padded step shape past the model's positions still builds its graph", "[serve]") {
  // --max-model-len 16 on a model of max_position_embeddings 16 is valid (a prompt of 8 and 4
  // outputs), but the prefill step is padded to the 512-token chunk, its KV to a bucket of 512:
  // gen refused "--tokens: 512 positions exceed the 16 of ..." and serve exited 2 naming an
  // option it has not. The padding is no position of the model.
  ModelInfo m = load_model_info(DFSIM_SOURCE_DIR "/workloads/models/llama-3.1-8b.json");
  m.spec.max_positions = m.max_position = 16;
  Json p = make_step_graph(m, {Phase::prefill, 1, 512, 512}, 1, 1);
  CHECK(p["tensors"]["l0.attn.q_rope"]["shape"] == Json::array({1, 32, 512, 128}));
  Json d = make_step_graph(m, {Phase::decode, 4, 1024, 1}, 1, 1);
  CHECK(d["tensors"]["l0.attn.k_cache"]["shape"] == Json::array({4, 8, 1024, 128}));
}

TEST_CASE("serve: the model file gives Llama-3.1-8B's weight and KV bytes", "[serve]") {
  ModelInfo m = load_model_info(DFSIM_SOURCE_DIR "/workloads/models/llama-3.1-8b.json");
  CHECK(m.parameters() == 8'030'261'248);            // the published 8.03 B
  CHECK(m.kv_bytes_per_token() == 2 * 32 * 8 * 128 * 2);  // K and V, 32 layers, 8 KV heads of 128, fp16
}

TEST_CASE("serve: a CSV request trace takes decimal numbers only and each column once", "[serve]") {
  const std::string path = std::filesystem::temp_directory_path() / ("dfsim_requests_" + std::to_string(getpid()) + ".csv");
  auto read = [&](const std::string& text) {
    std::ofstream(path) << text;
    return dfsim::serve::read_request_file(path);
  };
  const std::string head = "arrival_ms,prompt_tokens,output_tokens\n";
  auto r = read(head + "1.5,8,10\n2e0,10,3\n");  // an exponent in a time column; token counts are plain digits
  REQUIRE(r.size() == 2);
  CHECK(r[0].arrival == 1500000);  // 1.5 ms in ns
  CHECK(r[1].arrival == 2000000);
  CHECK(r[1].prompt_tokens == 10);
  // As in a .jsonl trace: 1e1 and 10.0 are not integers (CSV took them, JSONL refused them)
  CHECK_THROWS_WITH(read(head + "1,1e1,3\n"), Catch::Contains("expected an integer"));
  CHECK_THROWS_WITH(read(head + "1,10.0,3\n"), Catch::Contains("expected an integer"));
  CHECK_THROWS_WITH(read(head + "0x10,8,10\n"), Catch::Contains("line 2/arrival_ms: expected a number, got \"0x10\""));
  CHECK_THROWS_WITH(read(head + "1,0x1p3,10\n"), Catch::Contains("line 2/prompt_tokens: expected an integer"));
  CHECK_THROWS_WITH(read(head + "inf,8,10\n"), Catch::Contains("line 2/arrival_ms: expected a number, got \"inf\""));
  CHECK_THROWS_WITH(read("arrival_ms,prompt_tokens,output_tokens,arrival_ms\n1,8,10,2\n"),
                    Catch::Contains("line 1: header: column \"arrival_ms\" given twice"));
  std::filesystem::remove(path);
}
