// `dfsim serve`: simulate continuous-batching LLM serving on the card the way the vLLM Spyre
// plugin schedules it (sim/serve/), with step times from a table or from dfsim itself; writes
// summary.json, requests.jsonl, steps.csv and trace.json; `--rate 1,2,4` sweeps rates.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "sim/app/cli.h"
#include "sim/app/options.h"
#include "sim/app/output_dir.h"
#include "sim/common/decimal.h"
#include "sim/common/error.h"
#include "sim/common/self_executable.h"
#include "sim/runtime/progress.h"
#include "sim/serve/serve_outputs.h"
#include "sim/serve/serve_report.h"
#include "sim/serve/serve_setup.h"
#include "sim/energy/energy_model.h"
#include "sim/serve/simulated_step_times.h"
#include "sim/serve/step_discovery.h"
#include "sim/serve/step_table.h"

namespace dfsim {

namespace {

// What the progress line says while serve simulates the step shapes its runs need.
std::atomic<const serve::SimulatedStepTimes*> g_simulating{nullptr};
const char* simulating_text() {
  static char text[96];
  const serve::SimulatedStepTimes* s = g_simulating.load();
  std::snprintf(text, sizeof text, "simulating step times: %d runs done", s ? s->children_run() : 0);
  return text;
}

}  // namespace

using namespace serve;

namespace {

std::vector<double> parse_rates(const std::string& s) {
  std::vector<double> out;
  if (!s.empty() && s.back() == ',')  // (getline drops an empty last field)
    throw UsageError("--rate: expected requests/s in (0, 1e6] (or a list 1,2,4), got \"" + s + "\"");
  std::stringstream ss(s);
  for (std::string f; std::getline(ss, f, ',');) {
    double r = 0;
    if (!parse_decimal(f, r) || !(r > 0) || r > 1e6)
      throw UsageError("--rate: expected requests/s in (0, 1e6] (or a list 1,2,4), got \"" + s + "\"");
    // (Each rate writes DIR/rate-<r>/: a rate given twice would be run twice into one directory.)
    if (std::find(out.begin(), out.end(), r) != out.end())
      throw UsageError("--rate: " + f + " is " + fmt::format("{:g}", r) + " req/s, given twice in \"" + s + "\"");
    out.push_back(r);
  }
  if (out.empty()) throw UsageError("--rate: expected requests/s > 0");
  return out;
}

std::vector<int> parse_int_list(const std::string& s, const std::string& option) {
  std::vector<int> out;
  if (!s.empty() && s.back() == ',')  // (getline drops an empty last field)
    throw UsageError(option + ": expected ascending integers in [1, 4096], got \"" + s + "\"");
  std::stringstream ss(s);
  for (std::string f; std::getline(ss, f, ',');) {
    char* end = nullptr;
    long v = std::strtol(f.c_str(), &end, 10);
    if (f.empty() || *end || v < 1 || v > 4096 || (!out.empty() && v <= out.back()))
      throw UsageError(option + ": expected ascending integers in [1, 4096], got \"" + s + "\"");
    out.push_back(static_cast<int>(v));
  }
  return out;
}

// The rate sweep's table and its knee: the last rate whose achieved request throughput is still
// at least 90 % of the offered rate (past it, the queue and TTFT grow while throughput flattens).
std::string sweep_table(const std::vector<double>& rates, const std::vector<Json>& sums, std::ostream& csv) {
  std::string o = fmt::format("{:>8} {:>9} {:>10} {:>10} {:>10} {:>9} {:>9} {:>10} {:>6}\n", "rate", "req/s", "out tok/s",
                              "TTFT p50", "TTFT p99", "TPOT p50", "ITL p99", "E2E p50", "util%");
  csv << "rate,requests_per_s,output_tokens_per_s,ttft_p50_ms,ttft_p99_ms,tpot_p50_ms,itl_p99_ms,e2e_p50_ms,e2e_p99_ms,"
         "preemptions,utilization,mean_waiting\n";
  int knee = -1;
  bool saturated = false;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    const Json& s = sums[i];
    double got = s["throughput"]["requests_per_s"].get<double>();
    o += fmt::format("{:>8} {:>9.3f} {:>10.1f} {:>10.1f} {:>10.1f} {:>9.2f} {:>9.2f} {:>10.1f} {:>6.1f}\n", rate_text(rates[i]), got,
                     s["throughput"]["output_tokens_per_s"].get<double>(), s["ttft_ms"]["p50"].get<double>(),
                     s["ttft_ms"]["p99"].get<double>(), s["tpot_ms"]["p50"].get<double>(), s["itl_ms"]["p99"].get<double>(),
                     s["e2e_ms"]["p50"].get<double>(), 100 * s["utilization"].get<double>());
    csv << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", rate_text(rates[i]), got, s["throughput"]["output_tokens_per_s"].get<double>(),
                       s["ttft_ms"]["p50"].get<double>(), s["ttft_ms"]["p99"].get<double>(), s["tpot_ms"]["p50"].get<double>(),
                       s["itl_ms"]["p99"].get<double>(), s["e2e_ms"]["p50"].get<double>(), s["e2e_ms"]["p99"].get<double>(),
                       s["preemptions"].get<std::int64_t>(), s["utilization"].get<double>(), s["queue"]["mean_waiting"].get<double>());
    if (!saturated && got >= 0.9 * rates[i]) knee = static_cast<int>(i);
    else saturated = true;
  }
  if (!saturated) o += fmt::format("knee: not reached up to {} req/s (throughput keeps up with the offered rate)\n", rate_text(rates.back()));
  else if (knee < 0) o += fmt::format("knee: below {} req/s (already saturated at the lowest rate)\n", rate_text(rates.front()));
  else {
    double best = 0;
    for (const auto& s : sums) best = std::max(best, s["throughput"]["requests_per_s"].get<double>());
    o += fmt::format("knee: ~{} req/s (the last rate served at >= 90 % of the offered rate; throughput flattens at {:.3f} req/s)\n",
                     rate_text(rates[knee]), best);
  }
  return o;
}

}  // namespace

int cmd_serve(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string model_arg, config, out, requests_file, rate_arg, prompt_len = "200", output_len = "200", arrival = "poisson",
      scheduler = "spyre", step_table, step_cache = "out/step-cache", export_table, batch_buckets, kv_buckets = "pow2";
  std::vector<std::string> sets;
  int tp = 1, query_quantum = 0, jobs = std::max(1u, std::thread::hardware_concurrency());
  std::int64_t num_requests = 100, num_blocks = 0;
  std::int64_t seed = 0;  // signed, so that -1 is refused instead of wrapping around
  double burstiness = 1;
  SchedulerParams p;
  opts.add_options()
      ("model,m", po::value(&model_arg)->required(), "model: a name in workloads/models/ or a model file")
      ("config,c", po::value(&config), "chip config (default configs/spyre.json)")
      ("set,s", po::value(&sets)->composing(), "override a config value: key.path=value (repeatable)")
      ("tp", po::value(&tp), "tensor-parallel cards (default 1): N cards' memory for KV blocks, steps simulated as dfsim gen --tp N on a config of >= N cards")
      ("requests,r", po::value(&requests_file), "request trace: .jsonl or .csv with arrival_ms, prompt_tokens, output_tokens")
      ("rate", po::value(&rate_arg), "generate requests at R per second; a list (1,2,4,8) sweeps the rates")
      ("num-requests,n", po::value(&num_requests), "requests to generate (default 100)")
      ("prompt-len", po::value(&prompt_len), "prompt tokens: N, uniform:LO,HI, normal:MEAN,SD or hist:FILE (default 200)")
      ("output-len", po::value(&output_len), "output tokens, as --prompt-len (default 200)")
      ("arrival", po::value(&arrival), "arrival process: poisson (default) or gamma")
      ("burstiness", po::value(&burstiness), "gamma shape of the arrival gaps (1 = Poisson, < 1 burstier)")
      ("seed", po::value(&seed), "random seed of the generator (default 0)")
      ("scheduler", po::value(&scheduler), "spyre (default: prefill/decode interleaving) or spyre-no-interleave")
      ("step-table", po::value(&step_table), "step times from this CSV (phase,batch,kv_tokens,query_tokens,step_ms)")
      ("step-cache", po::value(&step_cache), "without --step-table: cache of simulated step times (default out/step-cache)")
      ("jobs,j", po::value(&jobs), "step simulations run at once (default: the machine's cores)")
      ("full-steps", "simulate every layer of each step (default: the first 1 and 2 layers, extrapolated)")
      ("export-step-table", po::value(&export_table), "write the step shapes the run used, with their times, to this CSV")
      ("block-size", po::value(&p.block_size), "KV-cache block, tokens (default 64; the newer plugin uses 128)")
      ("num-blocks", po::value(&num_blocks), "KV blocks (default: what fits in the cards' memory after the weights)")
      ("max-num-seqs", po::value(&p.max_num_seqs), "largest decode batch (default 16)")
      ("max-num-batched-tokens", po::value(&p.max_num_batched_tokens), "token budget of a step (default 512)")
      ("max-model-len", po::value(&p.max_model_len), "longest prompt + output (default 3072)")
      ("volumetric-limit", po::value(&p.volumetric_limit), "batch x max tkv limit (default 131072)")
      ("prefill-chunk", po::value(&p.prefill_chunk), "prefill tokens per step (default min(512, max-num-batched-tokens))")
      ("batch-buckets", po::value(&batch_buckets), "compiled decode batch sizes (default 4,8,... up to max-num-seqs)")
      ("kv-buckets", po::value(&kv_buckets), "compiled KV lengths: pow2 (power-of-two block counts, default) or blocks")
      ("query-quantum", po::value(&query_quantum), "compiled prefill query lengths are multiples of this (default the chunk)")
      ("out,o", po::value(&out), "output directory (default out/serve-<model>-<config>/)")
      ("no-trace", "do not write trace.json (as --set sim.trace=false)")
      ("quiet,q", "print nothing on success");
  po::variables_map vm;
  if (!parse_options("serve", "--model MODEL [--config C] [--tp N] (--requests FILE | --rate R[,R...] [--num-requests K] "
                              "[--prompt-len DIST] [--output-len DIST]) [--step-table FILE.csv] [--out DIR]",
                     "dfsim serve --model llama-3.1-8b --step-table workloads/serving/llama-3.1-8b_spyre_steps.csv "
                     "--rate 0.5,1,2 --num-requests 200",
                     opts, nullptr, args, vm))
    return 0;

  // Everything is checked before the first step.
  bool have_rate = vm.count("rate");
  if (have_rate == vm.count("requests")) throw UsageError("give either --requests FILE or --rate R");
  if (seed < 0) throw UsageError("--seed must be >= 0");
  if (tp < 1 || tp > 64) throw UsageError("--tp must be in [1, 64]");
  if (jobs < 1 || jobs > 1024) throw UsageError("--jobs must be in [1, 1024]");
  if (num_requests < 1 || num_requests > kMaxRequests) throw UsageError("--num-requests must be in [1, 10000000]");
  if (arrival != "poisson" && arrival != "gamma") throw UsageError("--arrival: expected poisson or gamma, got \"" + arrival + "\"");
  // Below 0.001 nearly every gamma gap is under a nanosecond (1e-300: all of them), so every
  // request arrived at once whatever --rate said.
  if (!(burstiness >= 1e-3) || burstiness > 1e6)
    throw UsageError("--burstiness must be in [0.001, 1e6] (below 0.001 nearly every request arrives at once, whatever --rate)");
  // As vllm bench serve: a burstiness makes the gaps gamma-distributed, unless Poisson is asked for.
  if (vm.count("burstiness") && !vm.count("arrival")) arrival = "gamma";
  if (vm.count("burstiness") && arrival == "poisson" && burstiness != 1)
    throw UsageError("--burstiness " + fmt::format("{:g}", burstiness) + " needs --arrival gamma (Poisson gaps have none)");
  if (!have_rate && (vm.count("burstiness") || vm.count("arrival")))
    throw UsageError(std::string(vm.count("arrival") ? "--arrival" : "--burstiness") +
                     " shapes generated requests (--rate); a --requests trace has its own arrival times");
  // Options that only shape what is not used are refused, not ignored.
  if (!have_rate)
    for (const char* o : {"num-requests", "prompt-len", "output-len", "seed"})
      if (vm.count(o))
        throw UsageError(std::string("--") + o + " shapes generated requests (--rate); a --requests trace has its own");
  if (vm.count("step-table"))
    for (const char* o : {"step-cache", "jobs", "full-steps"})
      if (vm.count(o))
        throw UsageError(std::string("--") + o + " is for simulated step times; --step-table gives them");
  if (scheduler != "spyre" && scheduler != "spyre-no-interleave")
    throw UsageError("--scheduler: expected spyre or spyre-no-interleave, got \"" + scheduler + "\"");
  if (kv_buckets != "pow2" && kv_buckets != "blocks") throw UsageError("--kv-buckets: expected pow2 or blocks, got \"" + kv_buckets + "\"");
  if (vm.count("num-blocks") && num_blocks < 1) throw UsageError("--num-blocks must be >= 1");
  if (vm.count("prefill-chunk") && p.prefill_chunk < 1) throw UsageError("--prefill-chunk must be >= 1");
  std::vector<double> rates = have_rate ? parse_rates(rate_arg) : std::vector<double>{0};
  if (config.empty()) config = default_config_path();
  ChipConfig cfg = load_chip_config(config, sets);
  ModelInfo model = load_model_info(model_arg);

  // The KV blocks are the memory of tp cards, and steps run on tp cards: the config has them.
  if (tp > cfg.system.cards)
    throw InputError(cfg.file, "/system/cards",
                     fmt::format("--tp {} runs each step on {} cards, the config has {} (configs/spyre-drawer.json has 8)",
                                 tp, tp, cfg.system.cards));
  p.interleave = scheduler == "spyre";
  if (!vm.count("prefill-chunk")) p.prefill_chunk = 0;  // its default follows the block size (check_scheduler_params)
  // The weights must fit whether or not --num-blocks is given, and so must the blocks asked for.
  p.num_blocks = kv_pool_blocks(model, cfg, tp, p.block_size, vm.count("num-blocks") ? num_blocks : 0);
  BucketSpec b;
  b.block_size = p.block_size;
  b.kv_pow2 = kv_buckets == "pow2";
  b.batch = batch_buckets.empty() ? BucketSpec::default_batches(p.max_num_seqs) : parse_int_list(batch_buckets, "--batch-buckets");
  check_scheduler_params(p, b, model);
  b.query_quantum = vm.count("query-quantum") ? query_quantum : p.prefill_chunk;
  if (b.query_quantum < 1 || b.query_quantum > p.prefill_chunk)
    throw UsageError(fmt::format("--query-quantum must be in [1, {}] (the prefill chunk: no prefill step has more tokens), got {}",
                                 p.prefill_chunk, b.query_quantum));

  GeneratorSpec gen;
  std::vector<Request> trace;
  if (have_rate) {
    gen.arrival = arrival;
    gen.burstiness = burstiness;
    gen.num_requests = num_requests;
    gen.prompt = parse_length_dist(prompt_len, "--prompt-len");
    gen.output = parse_length_dist(output_len, "--output-len");
    gen.seed = static_cast<std::uint64_t>(seed);
  } else {
    trace = read_request_file(requests_file);
    check_requests_fit(trace, p, requests_file);
  }

  std::unique_ptr<StepTimeProvider> source;
  SimulatedStepTimes* simulated = nullptr;
  std::string table_meta_source;
  if (!step_table.empty()) {
    StepTable t = read_step_table(step_table);
    check_step_table_blocks(t, p.block_size);
    auto declared = [&](const char* key, const std::string& want) {
      auto it = t.meta.find(key);
      if (it != t.meta.end() && it->second != want)
        throw InputError(step_table, "", fmt::format("the table is for {} {}, not {} (--{})", key, it->second, want, key));
    };
    declared("model", model.name);
    declared("tp", std::to_string(tp));
    check_step_table_sets(sets, t.has_energy());  // the table fixes the step times: a --set of those would be ignored
    auto src = t.meta.find("source");
    table_meta_source = src == t.meta.end() ? "table " + step_table : src->second;
    source = std::make_unique<TableStepTimes>(std::move(t));
  } else {
    auto sim = std::make_unique<SimulatedStepTimes>(model, cfg, tp, step_cache, self_executable(),
                                                    vm.count("full-steps") ? StepSimMode::full : StepSimMode::layers, jobs);
    simulated = sim.get();
    table_meta_source = fmt::format("simulated by dfsim {} on {} ({})", DFSIM_VERSION, cfg.name, sim->method());
    source = std::move(sim);
  }

  // The outputs are checked before any request is generated or step simulated: a bad path
  // costs no work, and no output may be an input or another output.
  bool sweep = rates.size() > 1, quiet = vm.count("quiet"), trace_json = !vm.count("no-trace") && cfg.sim.trace;
  if (out.empty()) out = "out/serve-" + model.name + "-" + cfg.name;
  std::vector<std::string> rate_dirs;
  if (sweep)
    for (double r : rates) rate_dirs.push_back(rate_dir_name(r));
  ServeOutputPlan plan(out, rate_dirs, trace_json);
  std::vector<NamedPath> inputs = {{"--requests", requests_file}, {"--step-table", step_table}, {"--model", model.file},
                                   {"--config", cfg.file}};
  for (const auto& [option, dist] : {std::pair{"--prompt-len", prompt_len}, std::pair{"--output-len", output_len}})
    if (have_rate && dist.rfind("hist:", 0) == 0) inputs.push_back({option, dist.substr(5)});
  if (simulated) inputs.push_back({"--step-cache", simulated->cache_file()});
  plan.check_apart(inputs, export_table);
  // Created and probed now (a path too long, a file in the way: exit 2), removed on failure.
  std::unique_ptr<OutputDir> top = std::make_unique<OutputDir>(out, top_output_files());
  std::vector<std::unique_ptr<OutputDir>> dirs;
  for (const auto& d : rate_dirs) dirs.push_back(std::make_unique<OutputDir>(out + "/" + d, run_output_files()));
  std::optional<OutputFile> export_file;
  if (!export_table.empty()) export_file.emplace(export_table);

  // The requests of each rate, generated once.
  std::vector<std::vector<Request>> request_sets;
  for (double rate : rates) {
    std::vector<Request> reqs = trace;
    if (have_rate) {
      gen.rate = rate;
      reqs = generate_requests(gen);
      check_requests_fit(reqs, p, "--prompt-len/--output-len");
    }
    request_sets.push_back(std::move(reqs));
  }
  DiscoveryResult found;
  // While step shapes are simulated: discovery, then the runs, which simulate any shape
  // discovery did not find (rare) one at a time.
  std::optional<StepProgress> progress;
  if (simulated) {  // simulate the shapes the runs need first, --jobs at a time
    g_simulating = simulated;
    progress.emplace(!vm.count("quiet") && stderr_is_terminal() ? stderr : nullptr, simulating_text);
    found = discover_steps(*simulated, model, cfg, [&](StepTimeProvider& t) {
      for (const auto& reqs : request_sets) run_serving(reqs, p, b, t);
    });
  }
  MemoStepTimes times(*source);

  // All runs first (in memory), then the outputs: an error mid-run leaves nothing behind.
  std::vector<ServeResult> results;
  std::vector<RunContext> ctxs;
  std::vector<Json> sums;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    results.push_back(run_serving(request_sets[i], p, b, times));
    ctxs.push_back(RunContext{model.name, cfg.name, times.describe(), scheduler, tp, rates[i], p,
                              static_power_w(cfg, cfg.cores) * tp, cfg.energy.power_budget_w * tp});
    sums.push_back(make_serve_summary(results.back(), ctxs.back()));
  }
  if (progress) {
    progress->stop();
    g_simulating = nullptr;
  }
  for (std::size_t i = 0; i < rates.size(); ++i) {
    OutputDir* d = sweep ? dirs[i].get() : top.get();
    d->open("summary.json") << sums[i].dump(2) << "\n";
    {
      auto f = d->open("requests.jsonl");
      write_requests_jsonl(f, results[i]);
    }
    {
      auto f = d->open("steps.csv");
      write_steps_csv(f, results[i]);
    }
    if (trace_json) {
      auto f = d->open("trace.json");
      write_serve_trace(f, results[i], ctxs[i]);
    }
  }
  std::string table;
  if (sweep) {
    auto f = top->open("sweep.csv");
    table = sweep_table(rates, sums, f);
  }
  if (export_file)  // first: when it fails, the run's directories are not committed either
    export_file->write([&](std::ostream& f) {
      write_step_table(f,
                       {{"model", model.name}, {"config", cfg.name}, {"tp", std::to_string(tp)},
                        {"block_size", std::to_string(p.block_size)}, {"source", table_meta_source}},
                       times.used());
    });
  for (auto& d : dirs) d->commit();
  top->commit();
  plan.remove_stale_rate_dirs();  // an earlier sweep's rate-R/ this run did not write (as run: docs/reliability.md)
  if (!quiet) {
    // With --export-step-table /dev/stdout the table is stdout: the report goes to stderr, or
    // the CSV would run on into it (as gen and compile do with -o /dev/stdout).
    std::ostream& report = is_standard_output(export_table) ? std::cerr : std::cout;
    if (!sweep) report << serve_summary_text(sums[0]);
    if (sweep) report << table << "outputs: " << out << "/sweep.csv and " << out << "/rate-*/\n";
    else report << "outputs: " << top->path("summary.json") << ", requests.jsonl, steps.csv" << (trace_json ? ", trace.json" : "") << "\n";
    if (simulated)
      report << fmt::format("step simulations: {} run ({} shapes found in {} scheduler passes), the rest from {}\n",
                            simulated->children_run(), found.shapes, found.passes, simulated->cache_file());
    if (!export_table.empty()) report << "step table: " << export_table << " (" << times.used().size() << " shapes)\n";
  }
  return 0;
}

}  // namespace dfsim
