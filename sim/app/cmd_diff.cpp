// `dfsim diff A B`: compares two runs (summary.json files or output directories of `dfsim run`,
// or of `dfsim serve`) metric by metric and kernel by kernel (matched by name), with a verdict
// per line; exit 1 when anything moved beyond the tolerance or a kernel is only on one side.
// "Compare my change with main."
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>
#include <unordered_map>

#include "sim/app/cli.h"
#include "sim/app/options.h"
#include "sim/common/decimal.h"
#include "sim/common/error.h"
#include "sim/app/output_dir.h"
#include "sim/regress/junit.h"
#include "sim/regress/metrics.h"
#include "sim/regress/write_file.h"

namespace dfsim {

namespace {

// The summary.json an argument names: the file, or the one in a run's output directory.
std::string summary_file(const std::string& arg) {
  std::error_code ec;  // (a name too long for the file system: load_json_file says so, one line)
  return std::filesystem::is_directory(arg, ec) ? arg + "/summary.json" : arg;
}

constexpr const char* kRunSummary = "dfsim.summary";
constexpr const char* kServeSummary = "dfsim.serve.summary";

Json load_summary(const std::string& arg) {
  const std::string file = summary_file(arg);
  Json j = load_json_file(file);
  if (!j.is_object() || !j.contains("format") || (j["format"] != kRunSummary && j["format"] != kServeSummary))
    throw InputError(file, "/format",
                     "expected the summary.json of a dfsim run (\"format\": \"dfsim.summary\") or of a dfsim serve "
                     "run (\"dfsim.serve.summary\")");
  JsonView root(j, file);
  if (j["format"] == kServeSummary) {  // one serving run: every member a metric, no kernels
    root.at("version").as_int(1, 1);
    root.at("completed").as_int(0, INT64_MAX);
    for (const char* section : {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "throughput"}) root.at(section).expect_object();
    return j;
  }
  // Kernels are matched by name: each must be an object with a string name (a hand-edited
  // summary with "name": 5 was an internal error).
  root.at("sim_time_ns").as_number(0, 1e30);  // every run's summary has it (a bare {"format"} is not one)
  if (root.has("version")) root.at("version").as_int(1, 1);  // the one there is (99 was compared as a metric)
  for (const char* section : {"offchip", "compute", "roofline", "units", "dma", "energy"})  // ("offchip": 5 was "only in B")
    if (root.has(section)) root.at(section).expect_object();
  if (root.has("kernels")) {
    JsonView ks = root.at("kernels");
    ks.expect_array();
    for (std::size_t i = 0; i < ks.size(); ++i) ks.at(i).at("name").as_string();
  }
  return j;
}

// "2%" or "2": a plain decimal >= 0, at most one % after it (not 0x10%, 2%% or "2 %").
double parse_tolerance(const std::string& text) {
  std::string s = text;
  if (!s.empty() && s.back() == '%') s.pop_back();
  double v = 0;
  if (parse_decimal(s, v) && v >= 0) return v;
  throw UsageError("--tolerance: expected a percentage >= 0 such as 2%, got \"" + text + "\"");
}

// One compared value.
struct Line {
  std::string item;  // "sim_time_ns", "kernels[add_y].duration_ns"
  std::string before, after, delta, verdict;
  bool beyond = false;
};

// Compares two maps of scalars; appends every line that is not identical.
int compare(const std::string& prefix, const std::map<std::string, Json>& a, const std::map<std::string, Json>& b,
            const Tolerance& tol, std::vector<Line>& out) {
  std::set<std::string> keys;
  for (const auto& [k, v] : a) keys.insert(k);
  for (const auto& [k, v] : b) keys.insert(k);
  int compared = 0;
  for (const auto& k : keys) {
    // Where the inputs were, not what came of them: the same step table at another path is no change.
    if (prefix.empty() && (k == "workload.file" || k == "config.file" || k == "step_times")) continue;
    ++compared;
    auto ia = a.find(k), ib = b.find(k);
    Line l;
    l.item = prefix + k;
    if (ia == a.end() || ib == b.end()) {
      l.before = ia == a.end() ? "-" : metric_text(ia->second);
      l.after = ib == b.end() ? "-" : metric_text(ib->second);
      l.verdict = ia == a.end() ? "only in B" : "only in A";
      l.beyond = true;
      out.push_back(l);
      continue;
    }
    if (ia->second == ib->second) continue;
    l.before = metric_text(ia->second);
    l.after = metric_text(ib->second);
    l.delta = delta_text(ia->second, ib->second);
    l.beyond = !tol.accepts(ia->second, ib->second);
    l.verdict = l.beyond ? "MOVED" : "within";
    out.push_back(l);
  }
  return compared;
}

}  // namespace

int cmd_diff(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string a_path, b_path, tolerance = "2%", junit;
  opts.add_options()
      ("a", po::value(&a_path), "before: a summary.json or the output directory of dfsim run (or of dfsim serve)")
      ("b", po::value(&b_path), "after: the same kind as A")
      ("tolerance,t", po::value(&tolerance), "relative change allowed before a line counts as moved (default 2%)")
      ("junit", po::value(&junit), "also write JUnit XML to this file (the summary and each kernel a testcase)")
      ("all", "also print the lines that did not change");
  po::positional_options_description pos;
  pos.add("a", 1).add("b", 1);
  po::variables_map vm;
  if (!parse_options("diff", "A B [--tolerance 2%] [--junit FILE]",
                     "dfsim diff out/main/summary.json out/mine --tolerance 1%", opts, &pos, args, vm))
    return 0;
  if (a_path.empty() || b_path.empty()) throw UsageError("expected two runs: dfsim diff A B");
  Tolerance tol{Tolerance::Kind::relative_pct, parse_tolerance(tolerance)};
  Json a = load_summary(a_path), b = load_summary(b_path);
  if (a["format"] != b["format"])
    throw InputError(summary_file(b_path), "/format",
                     fmt::format("a {} summary, and A ({}) is a {} one: compare two runs of one kind",
                                 b["format"] == kServeSummary ? "dfsim serve" : "dfsim run", summary_file(a_path),
                                 a["format"] == kServeSummary ? "dfsim serve" : "dfsim run"));
  if (!junit.empty()) {
    refuse_overwriting_inputs(junit, "--junit", {{"A", summary_file(a_path)}, {"B", summary_file(b_path)}});
    check_writable(junit, "--junit");
  }

  std::vector<Line> lines;
  int compared = compare("", summary_scalars(a), summary_scalars(b), tol, lines);
  std::vector<JUnitCase> cases{JUnitCase("summary")};
  auto close_case = [&](JUnitCase& jc, std::size_t first_line) {
    for (std::size_t i = first_line; i < lines.size(); ++i)
      if (lines[i].beyond) jc.detail += fmt::format("{}: {} -> {} ({})\n", lines[i].item, lines[i].before, lines[i].after,
                                                   lines[i].delta.empty() ? lines[i].verdict : lines[i].delta);
    if (!jc.detail.empty()) {
      jc.outcome = JUnitCase::Outcome::failure;
      jc.message = "moved beyond " + tol.text();
    }
  };
  close_case(cases.back(), 0);
  // Kernels matched by name (the first of a name on each side, as find_kernel), in A's order,
  // then those only in B; indexed once, so a diff of many kernels stays linear.
  std::set<std::string> seen;
  int kernels = 0;
  auto kernel_list = [](const Json& s) { return s.contains("kernels") && s["kernels"].is_array() ? s["kernels"] : Json::array(); };
  const Json list_a = kernel_list(a), list_b = kernel_list(b);
  auto by_name = [](const Json& list) {
    std::unordered_map<std::string, const Json*> m;
    for (const Json& k : list)
      if (k.is_object()) m.emplace(k.value("name", ""), &k);
    return m;
  };
  const auto index_a = by_name(list_a), index_b = by_name(list_b);
  auto find = [](const std::unordered_map<std::string, const Json*>& m, const std::string& name) -> const Json* {
    auto it = m.find(name);
    return it == m.end() ? nullptr : it->second;
  };
  for (const Json* side : {&list_a, &list_b})
    for (const Json& k : *side) {
      std::string name = k.value("name", "");
      if (!seen.insert(name).second) continue;
      ++kernels;
      const Json* ka = find(index_a, name);
      const Json* kb = find(index_b, name);
      std::size_t first = lines.size();
      std::string prefix = "kernels[" + name + "].";
      if (!ka || !kb) {
        ++compared;
        lines.push_back({"kernels[" + name + "]", ka ? "present" : "-", kb ? "present" : "-", "",
                         ka ? "only in A" : "only in B", true});
      } else {
        compared += compare(prefix, kernel_scalars(*ka), kernel_scalars(*kb), tol, lines);
      }
      cases.push_back(JUnitCase("kernel " + name));
      close_case(cases.back(), first);
    }

  bool all = vm.count("all");
  int moved = 0, within = 0;
  // With --junit /dev/stdout the XML is stdout: the table goes to stderr (one stream of both
  // is no XML a JUnit reader parses).
  std::ostream& report = is_standard_output(junit) ? std::cerr : std::cout;
  report << fmt::format("{:<48} {:>16} {:>16} {:>10}  {}\n", "metric", "A", "B", "delta", "verdict");
  for (const Line& l : lines) {
    (l.beyond ? moved : within) += 1;
    report << fmt::format("{:<48} {:>16} {:>16} {:>10}  {}\n", l.item, l.before, l.after, l.delta, l.verdict);
  }
  if (all) {
    auto sa = summary_scalars(a), sb = summary_scalars(b);
    for (const auto& [k, v] : sa)
      if (auto it = sb.find(k); it != sb.end() && it->second == v)
        report << fmt::format("{:<48} {:>16} {:>16} {:>10}  {}\n", k, metric_text(v), metric_text(v), "0", "same");
  }
  if (!junit.empty()) write_junit(junit, {{"dfsim diff", cases}});
  report << fmt::format("\n{} values compared ({} kernels): {} identical, {} within {}, {} beyond\n", compared,
                        kernels, compared - moved - within, within, tol.text(), moved);
  return moved > 0 ? 1 : 0;
}

}  // namespace dfsim
