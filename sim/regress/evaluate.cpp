#include "sim/regress/evaluate.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "sim/common/error.h"
#include "sim/common/json_path.h"
#include "sim/common/text_file.h"

namespace dfsim {

namespace {

MetricRow check_row(const std::string& name, bool pass, std::string expected, std::string got) {
  MetricRow r;
  r.metric = "check " + name;
  r.expected = std::move(expected);
  r.got = std::move(got);
  r.tolerance = "bound";
  r.pass = pass;
  return r;
}

double num(const Json& s, const std::string& path) {
  const Json* v = find_metric(s, path);
  return v && v->is_number() ? v->get<double>() : 0.0;
}

}  // namespace

// No run is faster than its roofline: max(graph bytes / peak off-chip bandwidth, MACs / peak
// MAC rate, the busiest PCIe link's bytes at its nominal rate). The memory bound is recomputed
// here from the bytes; the compute and PCIe bounds are the summary's, which knows each matmul's
// precision and each link's rate.
MetricRow check_roofline(const Json& s) {
  double peak_gbps = num(s, "offchip.peak_gbps");
  double mem_ns = peak_gbps > 0 ? num(s, "offchip.graph_bytes") / peak_gbps : 0.0;
  bool ideal = s.contains("offchip") && s["offchip"].value("ideal", false);
  if (ideal) mem_ns = 0;  // ideal memory takes no time
  double bound = std::max({mem_ns, num(s, "roofline.compute_bound_ns"), num(s, "roofline.pcie_bound_ns")});
  double t = num(s, "sim_time_ns");
  return check_row("roofline", t >= bound * (1 - 1e-9), fmt::format(">= {:.1f} ns", bound), fmt::format("{:.1f} ns", t));
}

// Off-chip bandwidth never exceeds the nominal peak: overall, and in every utilization bucket
// every memory channel is busy at most 100 % of the time.
MetricRow check_offchip_peak(const Json& s, const std::string& csv) {
  double achieved = num(s, "offchip.achieved_gbps"), peak = num(s, "offchip.peak_gbps");
  bool ideal = s.contains("offchip") && s["offchip"].value("ideal", false);
  double worst = 0;
  std::ifstream f(csv);
  std::string header, line;
  std::getline(f, header);
  std::vector<bool> is_channel;
  {
    std::stringstream hs(header);
    std::string col;
    // "memory/ch 3", or "card 1 memory/ch 3" on a system of several cards (those were not read,
    // so the bucket bound passed on every multi-card run whatever its channels did).
    while (std::getline(hs, col, ','))
      is_channel.push_back(col.rfind("memory/ch", 0) == 0 || (col.rfind("card ", 0) == 0 && col.find(" memory/ch") != std::string::npos));
  }
  while (std::getline(f, line)) {
    std::stringstream ls(line);
    std::string cell;
    for (std::size_t i = 0; std::getline(ls, cell, ','); ++i)
      if (i < is_channel.size() && is_channel[i]) worst = std::max(worst, std::stod(cell));
  }
  bool pass = ideal || (achieved <= peak * (1 + 1e-9) && worst <= 1.0 + 1e-9);
  // Ideal memory has no bandwidth to exceed: said so, rather than a pass beside a figure above the bound.
  MetricRow r = check_row("offchip_peak", pass, ideal ? "none (memory.ideal)" : fmt::format("<= {:.1f} GB/s", peak),
                          fmt::format("{:.1f} GB/s", achieved));
  r.delta = fmt::format("bucket {:.0f}%", 100 * worst);  // the busiest channel's busiest bucket
  return r;
}

// Two runs of the same inputs give byte-identical summary.json outside "host" (wall-clock
// figures) and byte-identical trace.json.
MetricRow check_determinism(const std::string& a, const std::string& b) {
  auto strip = [](const std::string& dir) {
    Json j = load_json_file(dir + "/summary.json");
    j.erase("host");
    return j.dump();
  };
  bool summary_same = strip(a) == strip(b);
  bool trace_same = read_text_file(a + "/trace.json") == read_text_file(b + "/trace.json");
  std::string got = summary_same && trace_same ? "identical"
                    : !summary_same           ? "summary.json differs"
                                              : "trace.json differs";
  return check_row("determinism", summary_same && trace_same, "identical", got);
}

CaseResult evaluate_case(const Suite& suite, const SuiteCase& c, const std::string& out_dir,
                         const std::string& repeat_dir) {
  CaseResult res;
  Json s = load_json_file(out_dir + "/summary.json");
  for (const Expectation& e : c.expect) {
    const Json* got = nullptr;
    if (e.kernel.empty()) {
      got = find_metric(s, e.metric);
    } else if (const Json* k = find_kernel(s, e.kernel)) {
      got = find_metric(*k, e.metric);
    }
    if (!got) {
      const Json* in = e.kernel.empty() ? &s : find_kernel(s, e.kernel);
      if (!in) throw InputError(suite.file, e.json_path, "no kernel \"" + e.kernel + "\" in the run's summary.json");
      const Json* group = find_json_path(*in, e.metric);  // an object or a list: name one of its values
      std::string hint;
      if (group && group->is_object() && !group->empty())
        hint = fmt::format(": \"{}\" is an object there, expected a value such as \"{}.{}\"", e.metric, e.metric,
                           group->begin().key());
      else if (group)
        hint = fmt::format(": \"{}\" is {} there, expected a number, string or boolean", e.metric,
                           group->is_array() ? "a list" : "an empty object");
      throw InputError(suite.file, e.json_path, "no metric \"" + e.metric + "\" in the run's summary.json" + hint);
    }
    auto kind = [](const Json& j) { return j.is_number() ? "a number" : j.is_string() ? "a string" : j.is_boolean() ? "a boolean" : "other"; };
    if (std::string(kind(e.expected)) != kind(*got))  // "x" against a count can never pass: the suite is wrong
      throw InputError(suite.file, e.json_path + "/value",
                       fmt::format("expected {}: the run's {} is {} ({}), got {}", kind(*got), e.metric, kind(*got),
                                   metric_text(*got), metric_text(e.expected)));
    MetricRow r;
    r.metric = e.label();
    r.expected = metric_text(e.expected);
    r.got = metric_text(*got);
    r.delta = delta_text(e.expected, *got);
    r.tolerance = e.tolerance.text();
    r.pass = e.tolerance.accepts(e.expected, *got);
    r.json_path = e.json_path;
    r.expected_value = e.expected;
    r.got_value = *got;
    res.rows.push_back(r);
  }
  for (Check ch : c.checks) {
    if (ch == Check::roofline) res.rows.push_back(check_roofline(s));
    if (ch == Check::offchip_peak) res.rows.push_back(check_offchip_peak(s, out_dir + "/utilization.csv"));
    if (ch == Check::determinism) res.rows.push_back(check_determinism(out_dir, repeat_dir));
  }
  for (const auto& r : res.rows)
    if (!r.pass) res.status = CaseResult::Status::fail;
  return res;
}

}  // namespace dfsim
