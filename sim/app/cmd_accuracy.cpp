// `dfsim accuracy`: dfsim against kernels measured on a real card. Every row of the device
// records becomes an op graph (sim/regress/record_graph.cpp), run in a child `dfsim run`
// (`--jobs` at a time); writes DIR/accuracy.csv and DIR/skipped.csv and prints the error per
// category beside torch-spyre's analytical model on the same rows. Rows that cannot run are
// listed with the reason and counted, never dropped.
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include "sim/app/cli.h"
#include "sim/app/options.h"
#include "sim/app/output_dir.h"
#include "sim/common/error.h"
#include "sim/common/json_io.h"
#include "sim/common/temp_dir.h"
#include "sim/config/chip_config.h"
#include "sim/regress/accuracy_stats.h"
#include "sim/regress/child_runs.h"
#include "sim/regress/device_records.h"
#include "sim/regress/record_graph.h"
#include "sim/regress/write_file.h"

namespace dfsim {

namespace {

namespace fs = std::filesystem;

std::string default_records_path() {
  const char* rel = "workloads/device-records/spyre-device-records.csv";
  if (fs::exists(rel)) return rel;
  return std::string(DFSIM_SOURCE_DIR) + "/" + rel;
}

// One row that ran, or one that was skipped.
struct Row {
  const DeviceRecord* rec;
  std::string category, shape;
  double measured = 0, simulated = 0, model = 0;
  std::uint64_t offchip = 0;  // bytes dfsim moved off-chip (read + written)
};
struct Skipped {
  const DeviceRecord* rec;
  std::string reason;
};

const char* kCategories[] = {"pointwise", "broadcast", "reduction", "transport", "softmax", "matmul", "bmm", "other"};

// A record's run directory: its line in the CSV (unique) and its op.
std::string run_name(const DeviceRecord& r) { return fmt::format("{}-{}", r.line, r.at("op")); }

std::string fixed(double v, int digits) { return std::isnan(v) ? "-" : fmt::format("{:.{}f}", v, digits); }

// Every op --only names must be the op of a record ("frob" was silently ignored): UsageError
// naming it, the closest record op and the record ops of the file.
void check_only_ops(const std::set<std::string>& only_ops, const DeviceRecords& records) {
  std::set<std::string> ops;
  for (const auto& r : records.rows) ops.insert(r.at("op"));
  for (const auto& op : only_ops) {
    if (ops.count(op)) continue;
    std::string hint = closest_match(op, {ops.begin(), ops.end()}), list;
    for (const auto& o : ops) list += (list.empty() ? "" : ",") + o;
    throw UsageError("--only: \"" + op + "\" is not the op of any record in " + records.file +
                     (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)") + "; its ops: " + list);
  }
}

}  // namespace

int cmd_accuracy(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string records_file, config, out = "out/accuracy", only;
  std::vector<std::string> sets;
  int jobs = 1;
  opts.add_options()
      ("records,r", po::value(&records_file), "CSV of device records (default: the shipped workloads/device-records/)")
      ("config,c", po::value(&config), "chip config (default configs/spyre.json)")
      ("out,o", po::value(&out), "output directory for accuracy.csv and skipped.csv (default out/accuracy)")
      ("set,s", po::value(&sets)->composing(), "override a config value: key.path=value (repeatable)")
      ("only", po::value(&only), "only these record ops, comma-separated (e.g. add,neg,mm)")
      ("jobs,j", po::value(&jobs), "records to simulate at a time, in child processes (default 1)")
      ("keep-runs", "keep each record's graph and run outputs in DIR/runs/LINE-OP/ (LINE: the record's line in the CSV)")
      ("quiet,q", "print only the per-category table and the skipped rows");
  po::variables_map vm;
  if (!parse_options("accuracy", "[--records FILE.csv] [--config FILE] [--out DIR] [--set key=value ...] [--only OPS] [--jobs N]",
                     "dfsim accuracy --jobs 2 --only add,mm,mmwd --set memory.lpddr5.write_high=24", opts, nullptr,
                     args, vm))
    return 0;
  if (jobs < 1) throw UsageError("--jobs must be >= 1");
  if (records_file.empty()) records_file = default_records_path();
  if (config.empty()) config = default_config_path();
  std::set<std::string> only_ops;
  {
    std::stringstream ss(only);
    std::string op;
    while (std::getline(ss, op, ','))
      if (!op.empty()) only_ops.insert(op);
    // "--only ," named no op and so selected every record (minutes of runs).
    if (vm.count("only") && only_ops.empty()) throw UsageError("--only: expected record ops such as add,mm, got \"" + only + "\"");
  }

  // Inputs are checked before any run: the records, the config with its overrides, the output.
  const std::vector<std::string> replaced = vm.count("keep-runs") ? std::vector<std::string>{"runs"} : std::vector<std::string>{};
  refuse_overwriting_inputs(out, {"accuracy.csv", "skipped.csv"}, replaced, "--out",
                            {{"--records", records_file}, {"--config", config}});
  DeviceRecords records = load_device_records(records_file);
  if (records.rows.empty()) throw InputError(records_file, "", "no records, only the header line");
  check_only_ops(only_ops, records);
  const int chip_cores = load_chip_config(config, sets).cores;
  OutputDir outputs(out);  // created and probed now; accuracy.csv and skipped.csv land together
  // The records' runs: with --keep-runs in DIR/runs itself (each summary names its graph where
  // it stays; an earlier call's runs are replaced, a stale record's directory would mislead),
  // else in a temporary directory. Removed unless the call succeeds with --keep-runs.
  const bool keep_runs = vm.count("keep-runs");
  std::string scratch;
  if (keep_runs) {
    scratch = outputs.path("runs");
    std::error_code ec;
    fs::remove_all(scratch, ec);
    if (!fs::create_directories(scratch, ec) && ec)
      throw OutputError(fmt::format("accuracy: cannot create {}: {}", scratch, ec.message()));
  } else {
    scratch = make_temp_dir("dfsim-accuracy");
  }
  struct Cleanup {
    std::string dir;
    bool kept = false;
    ~Cleanup() {
      std::error_code ec;
      if (!kept) fs::remove_all(dir, ec);
    }
  } cleanup{scratch};

  std::vector<const DeviceRecord*> selected;
  std::vector<Skipped> skipped;
  std::vector<ChildRun> children;
  std::vector<const DeviceRecord*> child_rec;
  for (const auto& r : records.rows) {
    if (!only_ops.empty() && !only_ops.count(r.at("op"))) continue;
    std::string reason;
    Json g = record_graph(records, r, &reason);
    // Compiled for fewer cores than it was measured on, it would be a different kernel.
    if (!g.is_null() && record_int(records, r, "cores", 1) > chip_cores) {
      g = nullptr;
      reason = fmt::format("measured on {} cores, the config has {} (card.cores)", r.at("cores"), chip_cores);
    }
    if (g.is_null()) {
      skipped.push_back({&r, reason});
      continue;
    }
    std::string dir = fmt::format("{}/{}", scratch, run_name(r));
    fs::create_directories(dir);
    write_file_atomically(dir + "/graph.json", g.dump(1) + "\n", "accuracy scratch");
    ChildRun c({"run", "-q", "--config", config, "--workload", dir + "/graph.json", "--out", dir + "/out", "--set",
                "sim.trace=false"});
    for (const auto& s : sets) c.args.insert(c.args.end(), {"--set", s});
    children.push_back(c);
    child_rec.push_back(&r);
  }
  if (children.empty() && skipped.empty()) throw UsageError("--only \"" + only + "\" selects no record");
  run_children(children, jobs);

  std::vector<Row> rows;
  for (std::size_t i = 0; i < children.size(); ++i) {
    const DeviceRecord& r = *child_rec[i];
    if (children[i].exit_code != 0) {
      // A run that could not write its own outputs (a full disk) is this call's failure, not
      // the record's: an error, as any failed write.
      const std::string own = fmt::format("{}/{}/out/", scratch, run_name(r));
      if (children[i].first_error.find(own) != std::string::npos) {
        std::string what = children[i].first_error;
        if (what.rfind("dfsim: ", 0) == 0) what = what.substr(7);
        throw OutputError("accuracy: " + what);
      }
      std::string why = children[i].first_error;
      // The child names its scratch graph; the reason is what matters.
      if (auto p = why.find("graph.json: "); p != std::string::npos) why = why.substr(p + 12);
      skipped.push_back({&r, fmt::format("{} (exit {})", why.empty() ? "the run failed" : why, children[i].exit_code)});
      continue;
    }
    Json s = load_json_file(fmt::format("{}/{}/out/summary.json", scratch, run_name(r)));
    rows.push_back({&r, record_category(r.at("op")), record_shape(records, r),
                    record_number(records, r, "measured_kernel_us"), s["sim_time_ns"].get<double>() / 1000.0,
                    record_number(records, r, "analytical_model_us"),
                    s["offchip"]["bytes_read"].get<std::uint64_t>() + s["offchip"]["bytes_written"].get<std::uint64_t>()});
  }

  // accuracy.csv and skipped.csv, in the records' order.
  // record_hbm_bytes: the card's compiler's off-chip byte count (the records' hbm_bytes, when
  // given) beside dfsim's: a difference points at a mechanism (docs/accuracy.md).
  std::string csv =
      "id,op,category,cores,shape,measured_us,simulated_us,error_pct,analytical_model_us,record_hbm_bytes,"
      "simulated_offchip_bytes\n";
  for (const Row& r : rows)
    csv += fmt::format("{},{},{},{},{},{},{:.3f},{:.2f},{},{},{}\n", r.rec->at("id"), r.rec->at("op"), r.category,
                       record_config(records, *r.rec).cores, r.shape, r.rec->at("measured_kernel_us"), r.simulated,
                       100.0 * (r.simulated - r.measured) / r.measured, r.rec->at("analytical_model_us"),
                       r.rec->at("hbm_bytes"), r.offchip);
  std::sort(skipped.begin(), skipped.end(), [](const Skipped& a, const Skipped& b) { return a.rec->line < b.rec->line; });
  std::string skipped_csv = "id,op,reason\n";
  for (const Skipped& s : skipped) {
    std::string reason = s.reason;
    for (char& ch : reason)
      if (ch == '"') ch = '\'';
    skipped_csv += fmt::format("{},{},\"{}\"\n", s.rec->at("id"), s.rec->at("op"), reason);
  }
  outputs.open("accuracy.csv") << csv;
  outputs.open("skipped.csv") << skipped_csv;
  outputs.commit();
  cleanup.kept = keep_runs;

  bool quiet = vm.count("quiet");
  if (!quiet) {
    std::cout << fmt::format("{:<18} {:>5} {:>18} {:>12} {:>12} {:>8} {:>16}\n", "op", "cores", "shape", "measured us",
                             "dfsim us", "err %", "cost model err %");
    for (const Row& r : rows)
      std::cout << fmt::format("{:<18} {:>5} {:>18} {:>12.1f} {:>12.1f} {:>8.1f} {:>16}\n", r.rec->at("op"),
                               record_config(records, *r.rec).cores, r.shape, r.measured, r.simulated,
                               100.0 * (r.simulated - r.measured) / r.measured,
                               fixed(100.0 * (r.model - r.measured) / r.measured, 1));
    std::cout << "\n";
  }
  std::cout << fmt::format("dfsim accuracy on {} ({})\n", config, records_file);
  std::cout << fmt::format("{:<10} {:>7} {:>8} {:>9} {:>9} {:>16}\n", "category", "records", "RMS %", "mean %",
                           "Spearman", "cost model RMS %");
  auto print_stats = [&](const std::string& name, const std::vector<const Row*>& rs) {
    std::vector<double> m, s, mm, ms;
    for (const Row* r : rs) {
      m.push_back(r->measured);
      s.push_back(r->simulated);
      if (!std::isnan(r->model)) mm.push_back(r->measured), ms.push_back(r->model);
    }
    ErrorStats e = error_stats(m, s), model = error_stats(mm, ms);
    std::cout << fmt::format("{:<10} {:>7} {:>8.1f} {:>+9.1f} {:>9} {:>16}\n", name, e.count, e.rms_pct, e.mean_pct,
                             fixed(e.spearman, 3), model.count ? fixed(model.rms_pct, 1) : "-");
  };
  std::vector<const Row*> all;
  for (const char* cat : kCategories) {
    std::vector<const Row*> rs;
    for (const Row& r : rows)
      if (r.category == cat) rs.push_back(&r);
    if (!rs.empty()) print_stats(cat, rs);
    all.insert(all.end(), rs.begin(), rs.end());
  }
  if (!all.empty()) print_stats("all", all);
  std::cout << fmt::format("\n{} records: {} simulated, {} skipped\n", rows.size() + skipped.size(), rows.size(),
                           skipped.size());
  if (!skipped.empty()) {
    // Grouped by reason, each with its ops and the number of rows.
    std::map<std::string, std::pair<std::set<std::string>, int>> by_reason;
    for (const Skipped& s : skipped) {
      auto& e = by_reason[s.reason];
      e.first.insert(s.rec->at("op"));
      ++e.second;
    }
    std::cout << "skipped:\n";
    for (const auto& [reason, e] : by_reason) {
      std::string ops;
      for (const auto& o : e.first) ops += (ops.empty() ? "" : ", ") + o;
      std::cout << fmt::format("  {} row(s) of {}: {}\n", e.second, ops, reason);
    }
  }
  std::cout << fmt::format("wrote {}/accuracy.csv, {}/skipped.csv{}\n", out, out,
                           vm.count("keep-runs") ? fmt::format(" and {}/runs/", out) : "");
  if (rows.empty()) {  // an accuracy table of nothing is not a success (skipped.csv says why, per record)
    std::cerr << fmt::format("dfsim accuracy: none of the {} records could be simulated (reasons above and in {}/skipped.csv)\n",
                             skipped.size(), out);
    return 1;
  }
  return 0;
}

}  // namespace dfsim
