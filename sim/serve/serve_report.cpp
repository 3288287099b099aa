#include "sim/serve/serve_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dfsim::serve {

namespace {

double ms(Ns t) { return static_cast<double>(t) / 1e6; }
double round6(double x) { return std::round(x * 1e6) / 1e6; }

// The "energy" section: the steps' energy plus the idle cards' static power between steps.
Json energy_section(const ServeResult& r, const RunContext& ctx, double dur_ns, double busy_ns, std::int64_t out_tokens) {
  double steps_j = 0, peak_w = 0;
  for (const auto& s : r.steps) {
    steps_j += s.energy_j;
    peak_w = std::max(peak_w, s.energy_j / (static_cast<double>(s.end - s.start) / 1e9));
  }
  double idle_j = std::max(0.0, dur_ns - busy_ns) / 1e9 * ctx.idle_w, total = steps_j + idle_j;
  std::vector<double> per_request;
  for (const auto& q : r.requests) per_request.push_back(q.energy_j);
  Json jr = latency_stats_ms(per_request);  // the same statistics, in J
  Json e;
  e["total_j"] = round6(total);
  e["steps_j"] = round6(steps_j);
  e["idle_j"] = round6(idle_j);
  e["average_w"] = round6(total / (dur_ns / 1e9));
  e["peak_step_w"] = round6(peak_w);
  e["budget_w"] = ctx.budget_w;
  e["j_per_request"] = jr;
  e["j_per_output_token"] = round6(out_tokens ? total / static_cast<double>(out_tokens) : 0);
  e["output_tokens_per_j"] = round6(total > 0 ? static_cast<double>(out_tokens) / total : 0);
  return e;
}

}  // namespace

Json latency_stats_ms(std::vector<double> v) {
  if (v.empty()) return {{"mean", 0.0}, {"p50", 0.0}, {"p99", 0.0}, {"max", 0.0}};
  std::sort(v.begin(), v.end());
  auto pct = [&](double q) {
    double pos = q / 100.0 * static_cast<double>(v.size() - 1);
    std::size_t lo = static_cast<std::size_t>(std::floor(pos));
    std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  return {{"mean", round6(mean)}, {"p50", round6(pct(50))}, {"p99", round6(pct(99))}, {"max", round6(v.back())}};
}

Json make_serve_summary(const ServeResult& r, const RunContext& ctx) {
  std::vector<double> ttft, tpot, e2e, itl;
  std::int64_t in_tokens = 0, out_tokens = 0;
  Ns t0 = r.requests.empty() ? 0 : r.requests.front().req.arrival, t1 = t0;
  for (const auto& q : r.requests) {
    t0 = std::min(t0, q.req.arrival);
    t1 = std::max(t1, q.finish);
    ttft.push_back(ms(q.first_token - q.req.arrival));
    e2e.push_back(ms(q.finish - q.req.arrival));
    if (q.req.output_tokens > 1) tpot.push_back(ms(q.finish - q.first_token) / (q.req.output_tokens - 1));
    in_tokens += q.req.prompt_tokens;
    out_tokens += q.req.output_tokens;
  }
  for (Ns g : r.itl) itl.push_back(ms(g));
  double dur_ns = static_cast<double>(std::max<Ns>(1, t1 - t0));
  double dur_s = dur_ns / 1e9;
  // Time-weighted over the steps (an idle card holds no blocks and has nobody waiting).
  double busy = 0, blocks_x_t = 0, waiting_x_t = 0, system_x_t = 0, real = 0, padded = 0, decode_batch = 0;
  std::int64_t peak_blocks = 0, prefills = 0, decodes = 0;
  int max_waiting = 0;
  for (const auto& s : r.steps) {
    double d = static_cast<double>(s.end - s.start);
    busy += d;
    blocks_x_t += d * static_cast<double>(s.blocks_used);
    waiting_x_t += d * s.waiting;
    system_x_t += d * s.in_system;
    peak_blocks = std::max(peak_blocks, s.blocks_used);
    max_waiting = std::max(max_waiting, s.waiting);
    real += s.real_tokens;
    padded += static_cast<double>(s.shape.batch) * s.shape.query_tokens;
    if (s.shape.phase == Phase::prefill) ++prefills;
    else {
      ++decodes;
      decode_batch += s.batch;
    }
  }
  const SchedulerParams& p = ctx.params;
  double nblocks = static_cast<double>(std::max<std::int64_t>(1, p.num_blocks));
  Json s;
  s["format"] = "dfsim.serve.summary";
  s["version"] = 1;
  s["model"] = ctx.model;
  s["config"] = ctx.config;
  s["tp"] = ctx.tp;
  s["step_times"] = ctx.step_times;
  s["scheduler"] = {{"name", ctx.scheduler},
                    {"max_num_seqs", p.max_num_seqs},
                    {"max_num_batched_tokens", p.max_num_batched_tokens},
                    {"max_model_len", p.max_model_len},
                    {"block_size", p.block_size},
                    {"num_blocks", p.num_blocks},
                    {"volumetric_limit", p.volumetric_limit},
                    {"prefill_chunk", p.prefill_chunk},
                    {"interleave", p.interleave}};
  if (ctx.offered_rate > 0) s["offered_rate"] = ctx.offered_rate;
  s["completed"] = r.requests.size();
  s["input_tokens"] = in_tokens;
  s["output_tokens"] = out_tokens;
  s["duration_s"] = round6(dur_s);
  s["throughput"] = {{"requests_per_s", round6(static_cast<double>(r.requests.size()) / dur_s)},
                     {"input_tokens_per_s", round6(static_cast<double>(in_tokens) / dur_s)},
                     {"output_tokens_per_s", round6(static_cast<double>(out_tokens) / dur_s)},
                     {"total_tokens_per_s", round6(static_cast<double>(in_tokens + out_tokens) / dur_s)}};
  s["ttft_ms"] = latency_stats_ms(ttft);
  s["tpot_ms"] = latency_stats_ms(tpot);
  s["itl_ms"] = latency_stats_ms(itl);
  s["e2e_ms"] = latency_stats_ms(e2e);
  s["utilization"] = round6(busy / dur_ns);
  s["kv_blocks"] = {{"total", p.num_blocks},
                    {"block_size", p.block_size},
                    {"peak_used", peak_blocks},
                    {"peak_occupancy", round6(static_cast<double>(peak_blocks) / nblocks)},
                    {"mean_occupancy", round6(blocks_x_t / dur_ns / nblocks)}};
  s["preemptions"] = r.preemptions;
  s["padding_share"] = round6(padded > 0 ? 1 - real / padded : 0);
  s["steps"] = {{"prefill", prefills},
                {"decode", decodes},
                {"mean_decode_batch", round6(decodes ? decode_batch / static_cast<double>(decodes) : 0)}};
  s["queue"] = {{"mean_waiting", round6(waiting_x_t / dur_ns)},
                {"max_waiting", max_waiting},
                {"mean_in_system", round6(system_x_t / dur_ns)}};
  if (r.energy && !r.steps.empty()) s["energy"] = energy_section(r, ctx, dur_ns, busy, out_tokens);
  return s;
}

std::string serve_summary_text(const Json& s) {
  std::string o;
  auto line = [&](const std::string& k, const std::string& v) { o += fmt::format("{:<40}{}\n", k, v); };
  auto rule = [&](const std::string& t) {
    std::size_t pad = 50 - std::min<std::size_t>(48, t.size());
    o += std::string(pad / 2, '-') + t + std::string(pad - pad / 2, '-') + "\n";
  };
  auto f2 = [](double x) { return fmt::format("{:.2f}", x); };
  o += "============ Serving Benchmark Result ============\n";
  line("Successful requests:", std::to_string(s["completed"].get<std::int64_t>()));
  line("Benchmark duration (s):", f2(s["duration_s"].get<double>()));
  line("Total input tokens:", std::to_string(s["input_tokens"].get<std::int64_t>()));
  line("Total generated tokens:", std::to_string(s["output_tokens"].get<std::int64_t>()));
  const Json& t = s["throughput"];
  line("Request throughput (req/s):", f2(t["requests_per_s"].get<double>()));
  line("Output token throughput (tok/s):", f2(t["output_tokens_per_s"].get<double>()));
  line("Total Token throughput (tok/s):", f2(t["total_tokens_per_s"].get<double>()));
  auto block = [&](const char* title, const char* key, const char* abbr) {
    rule(title);
    const Json& m = s[key];
    line(fmt::format("Mean {} (ms):", abbr), f2(m["mean"].get<double>()));
    line(fmt::format("Median {} (ms):", abbr), f2(m["p50"].get<double>()));
    line(fmt::format("P99 {} (ms):", abbr), f2(m["p99"].get<double>()));
  };
  block("Time to First Token", "ttft_ms", "TTFT");
  block("Time per Output Token (excl. 1st token)", "tpot_ms", "TPOT");
  block("Inter-token Latency", "itl_ms", "ITL");
  block("End-to-end Latency", "e2e_ms", "E2EL");
  rule("Card (dfsim serve)");
  line("Card utilization (%):", f2(100 * s["utilization"].get<double>()));
  const Json& kv = s["kv_blocks"];
  line("KV blocks peak / total:", fmt::format("{} / {} ({:.1f} %)", kv["peak_used"].get<std::int64_t>(),
                                              kv["total"].get<std::int64_t>(), 100 * kv["peak_occupancy"].get<double>()));
  line("Mean KV-block occupancy (%):", f2(100 * kv["mean_occupancy"].get<double>()));
  line("Preemptions:", std::to_string(s["preemptions"].get<std::int64_t>()));
  line("Padding share of query tokens (%):", f2(100 * s["padding_share"].get<double>()));
  const Json& st = s["steps"];
  line("Steps prefill / decode:", fmt::format("{} / {} (mean decode batch {:.2f})", st["prefill"].get<std::int64_t>(),
                                              st["decode"].get<std::int64_t>(), st["mean_decode_batch"].get<double>()));
  line("Mean / max waiting requests:", fmt::format("{:.2f} / {}", s["queue"]["mean_waiting"].get<double>(),
                                                   s["queue"]["max_waiting"].get<int>()));
  if (s.contains("energy")) {
    const Json& e = s["energy"];
    line("Energy (J), average power (W):", fmt::format("{:.2f} J, {:.1f} W (peak step {:.1f} W of {:g})", e["total_j"].get<double>(),
                                                        e["average_w"].get<double>(), e["peak_step_w"].get<double>(),
                                                        e["budget_w"].get<double>()));
    line("Energy per request (J), per token:", fmt::format("{:.3f} mean, {:.3f} p99; {:.4f} J/token",
                                                           e["j_per_request"]["mean"].get<double>(),
                                                           e["j_per_request"]["p99"].get<double>(),
                                                           e["j_per_output_token"].get<double>()));
  } else {
    line("Energy:", "not known (the step times come without energy)");
  }
  o += "Step times: " + s["step_times"].get<std::string>() + "\n";
  o += "==================================================\n";
  return o;
}

void write_requests_jsonl(std::ostream& out, const ServeResult& r) {
  for (const auto& q : r.requests)
    out << fmt::format(
        "{{\"id\": {}, \"arrival_ms\": {:.6f}, \"scheduled_ms\": {:.6f}, \"first_token_ms\": {:.6f}, \"finish_ms\": {:.6f}, "
        "\"prompt_tokens\": {}, \"output_tokens\": {}, \"preemptions\": {}{}}}\n",
        q.req.id, ms(q.req.arrival), ms(q.scheduled), ms(q.first_token), ms(q.finish), q.req.prompt_tokens,
        q.req.output_tokens, q.preemptions, r.energy ? fmt::format(", \"energy_j\": {:.6f}", q.energy_j) : "");
}

void write_steps_csv(std::ostream& out, const ServeResult& r) {
  out << "start_ms,end_ms,phase,batch,batch_bucket,kv_tokens,query_tokens,real_tokens,max_tkv,blocks_used,waiting,"
         "running,in_system,request,chunk,chunks,energy_mj\n";
  for (const auto& s : r.steps)
    out << fmt::format("{:.6f},{:.6f},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", ms(s.start), ms(s.end),
                       phase_name(s.shape.phase), s.batch, s.shape.batch, s.shape.kv_tokens, s.shape.query_tokens,
                       s.real_tokens, s.max_tkv, s.blocks_used, s.waiting, s.running, s.in_system,
                       s.request >= 0 ? std::to_string(s.request) : "", s.chunk ? std::to_string(s.chunk) : "",
                       s.chunks ? std::to_string(s.chunks) : "",
                       s.energy_j >= 0 ? fmt::format("{:.6f}", s.energy_j * 1e3) : "");
}

void write_serve_trace(std::ostream& out, const ServeResult& r, const RunContext& ctx) {
  auto us = [](Ns t) { return fmt::format("{:.3f}", static_cast<double>(t) / 1e3); };
  out << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  out << fmt::format(R"({{"ph": "M", "pid": 1, "name": "process_name", "args": {{"name": {}}}}})",
                     Json("dfsim serve: " + ctx.model + " on " + ctx.config).dump());
  out << ",\n" << R"({"ph": "M", "pid": 1, "tid": 0, "name": "thread_name", "args": {"name": "steps"}})";
  for (int i = 0; i < ctx.params.max_num_seqs; ++i)
    out << ",\n"
        << fmt::format(R"({{"ph": "M", "pid": 1, "tid": {}, "name": "thread_name", "args": {{"name": "slot {}"}}}})",
                       i + 1, i);
  for (const auto& s : r.steps) {
    std::string name = s.shape.phase == Phase::prefill
                           ? fmt::format("prefill req {} chunk {}/{}", s.request, s.chunk, s.chunks)
                           : fmt::format("decode x{}", s.batch);
    out << ",\n"
        << fmt::format(R"({{"ph": "X", "pid": 1, "tid": 0, "name": "{}", "ts": {}, "dur": {}, "args": {{"bucket": "{}", "blocks_used": {}}}}})",
                       name, us(s.start), us(s.end - s.start), s.shape.text(), s.blocks_used);
    out << ",\n"
        << fmt::format(R"({{"ph": "C", "pid": 1, "name": "KV blocks used", "ts": {}, "args": {{"blocks": {}}}}})",
                       us(s.start), s.blocks_used);
    out << ",\n"
        << fmt::format(R"({{"ph": "C", "pid": 1, "name": "requests", "ts": {}, "args": {{"waiting": {}, "decoding": {}}}}})",
                       us(s.start), s.waiting, s.running);
    if (r.energy) {  // the step's average power, then the idle floor until the next step
      auto power = [&](Ns t, double w) {
        out << ",\n" << fmt::format(R"j({{"ph": "C", "pid": 1, "name": "power (W)", "ts": {}, "args": {{"W": {:.3f}}}}})j", us(t), w);
      };
      power(s.start, s.energy_j / (static_cast<double>(s.end - s.start) / 1e9));
      bool gap = &s == &r.steps.back() || (&s + 1)->start > s.end;
      if (gap) power(s.end, ctx.idle_w);
    }
  }
  for (const auto& sp : r.slots)
    out << ",\n"
        << fmt::format(R"({{"ph": "X", "pid": 1, "tid": {}, "name": "req {}{}", "ts": {}, "dur": {}}})", sp.slot + 1,
                       sp.request, sp.preempted ? " (preempted)" : "", us(sp.start), us(sp.end - sp.start));
  out << "\n]}\n";
}

}  // namespace dfsim::serve
