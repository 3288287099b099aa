#include "sim/serve/serve_outputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "sim/app/cli.h"
#include "sim/common/decimal.h"

namespace dfsim::serve {

namespace fs = std::filesystem;

namespace {

// A directory name an earlier sweep wrote: "rate-" and a positive decimal.
bool is_rate_dir_name(const std::string& name) {
  double r = 0;
  return name.rfind("rate-", 0) == 0 && parse_decimal(name.substr(5), r) && r > 0;
}

// The temporary OutputDir writes `name` through before renaming it (sim/app/output_dir.h).
std::string temporary_of(const std::string& name) { return "." + name + ".tmp"; }

}  // namespace

const std::vector<std::string>& run_output_files() {
  static const std::vector<std::string> files = {"summary.json", "requests.jsonl", "steps.csv", "trace.json"};
  return files;
}

std::vector<std::string> top_output_files() {
  std::vector<std::string> files = run_output_files();
  files.push_back("sweep.csv");
  return files;
}

std::string rate_text(double rate) {
  std::string g = fmt::format("{:g}", rate);
  double back = 0;
  return parse_decimal(g, back) && back == rate ? g : fmt::format("{}", rate);
}

std::string rate_dir_name(double rate) { return "rate-" + rate_text(rate); }

ServeOutputPlan::ServeOutputPlan(std::string out, std::vector<std::string> rate_dirs, bool trace)
    : out_(std::move(out)), rate_dirs_(std::move(rate_dirs)), trace_(trace) {}

std::vector<std::string> ServeOutputPlan::stale_rate_dirs() const {
  std::vector<std::string> stale;
  std::error_code ec;
  for (fs::directory_iterator it(out_, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!is_rate_dir_name(name) || !it->is_directory(ec)) continue;
    if (std::find(rate_dirs_.begin(), rate_dirs_.end(), name) == rate_dirs_.end()) stale.push_back(name);
  }
  return stale;
}

std::vector<ServeOutputPlan::Owned> ServeOutputPlan::owned() const {
  const std::string writes = "a file serve writes", removes = "an earlier run's output, which serve removes";
  bool sweep = !rate_dirs_.empty();
  std::vector<Owned> o{{out_, "the output directory"}};
  auto files = [&](const std::string& dir, const std::vector<std::string>& names, const std::string& what) {
    for (const auto& n : names) {
      o.push_back({dir + "/" + n, n == "trace.json" && !trace_ ? removes : what});
      o.push_back({dir + "/" + temporary_of(n), "a temporary serve writes"});
    }
  };
  // One run writes its files at the top and removes sweep.csv; a sweep the other way round.
  files(out_, run_output_files(), sweep ? removes : writes);
  files(out_, {"sweep.csv"}, sweep ? writes : removes);
  for (const auto& d : rate_dirs_) {
    o.push_back({out_ + "/" + d, "a directory serve writes"});
    files(out_ + "/" + d, run_output_files(), writes);
  }
  for (const auto& d : stale_rate_dirs()) files(out_ + "/" + d, run_output_files(), removes);
  return o;
}

void ServeOutputPlan::check_apart(const std::vector<NamedPath>& inputs, const std::string& export_table) const {
  std::vector<Owned> paths = owned();
  for (const auto& in : inputs) {
    if (in.path.empty()) continue;
    if (!export_table.empty() && same_file(export_table, in.path))
      throw UsageError(fmt::format("--export-step-table {}: the same file as {} {}, which the run would overwrite with its "
                                   "own output; write the table elsewhere",
                                   export_table, in.option, in.path));
    for (const auto& o : paths)
      if (same_file(in.path, o.path))
        throw UsageError(fmt::format("--out {}: {} ({}) is the same file as {} {}, an input of the run; choose another --out",
                                     out_, o.path, o.what, in.option, in.path));
  }
  if (export_table.empty()) return;
  for (const auto& o : paths)
    if (same_file(export_table, o.path))
      throw UsageError(fmt::format("--export-step-table {}: the same path as {} ({} in --out {}); write the table elsewhere",
                                   export_table, o.path, o.what, out_));
}

void ServeOutputPlan::remove_stale_rate_dirs() const {
  for (const auto& d : stale_rate_dirs()) {
    std::error_code ec;
    for (const auto& n : run_output_files()) fs::remove(out_ + "/" + d + "/" + n, ec);
    fs::remove(out_ + "/" + d, ec);  // only if empty: never a file serve did not write
  }
}

}  // namespace dfsim::serve
