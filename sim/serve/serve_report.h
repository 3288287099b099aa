#pragma once
// A serving run's outputs (docs/serving.md): summary.json and the terminal summary in the shape
// of `vllm bench serve`, requests.jsonl, steps.csv (the step log) and trace.json (Perfetto).
#include <ostream>
#include <string>

#include "sim/common/json_io.h"
#include "sim/serve/serving_loop.h"

namespace dfsim::serve {

struct RunContext {       // what the run was, echoed into summary.json
  std::string model, config, step_times, scheduler;
  int tp = 1;
  double offered_rate = 0;  // requests/s of a generator (0: a trace file)
  SchedulerParams params;
  double idle_w = 0;        // what the cards draw between steps (their static power)
  double budget_w = 75;     // the cards' power budget (card.power_budget_w x tp)
};

// Mean, median (p50), p99 and max with numpy's linear interpolation; zeros when empty.
Json latency_stats_ms(std::vector<double> values_ms);

Json make_serve_summary(const ServeResult& r, const RunContext& ctx);
std::string serve_summary_text(const Json& summary);

void write_requests_jsonl(std::ostream& out, const ServeResult& r);
void write_steps_csv(std::ostream& out, const ServeResult& r);
void write_serve_trace(std::ostream& out, const ServeResult& r, const RunContext& ctx);

}  // namespace dfsim::serve
