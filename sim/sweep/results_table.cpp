#include "sim/sweep/results_table.h"

#include <fmt/format.h>

#include "sim/common/error.h"
#include "sim/common/json_path.h"

namespace dfsim {

namespace {

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

void read_metrics(const SweepPlan& plan, const SweepPoint& p, SweepRow& row) {
  const std::string file = p.dir + "/" + plan.spec.kind->metric_file;
  Json doc;
  try {
    doc = load_json_file(file);
  } catch (const InputError& e) {
    row.result.status = "failed";
    row.result.message = e.what();
    return;
  }
  for (const auto& [name, path] : plan.spec.metrics) {
    const Json* v = find_json_path(doc, path);
    row.metrics.push_back(v ? *v : Json());
    if (!v && row.result.status == "ok") {
      row.result.status = "failed";
      row.result.message = plan.spec.kind->metric_file + " has no \"" + path + "\" (metric \"" + name + "\")";
    }
  }
}

}  // namespace

std::vector<SweepRow> collect_rows(const SweepPlan& plan, const std::map<std::size_t, PointResult>& unrecorded) {
  std::vector<SweepRow> rows;
  for (const auto& p : plan.points) {
    SweepRow row;
    if (!p.error.empty()) {
      row.result = {"failed", 2, p.error, 0, false};
    } else if (auto it = unrecorded.find(p.index); it != unrecorded.end()) {
      row.result = it->second;
    } else if (auto rec = point_done(p.dir, p.point["key"]) ? read_point_status(p.dir) : std::nullopt) {
      row.result = *rec;
      if (rec->status == "ok") read_metrics(plan, p, row);
    } else {
      row.result = {"not_run", 0, "not run yet", 0, false};
    }
    if (row.result.status != "ok") row.metrics = Json::array();
    if (row.metrics.empty())
      for (std::size_t m = 0; m < plan.spec.metrics.size(); ++m) row.metrics.push_back(Json());
    rows.push_back(std::move(row));
  }
  return rows;
}

void write_results_csv(std::ostream& out, const SweepPlan& plan, const std::vector<SweepRow>& rows) {
  std::string header;
  for (const auto& c : plan.spec.columns) header += csv_cell(c.name) + ",";
  for (const auto& [name, _] : plan.spec.metrics) header += csv_cell(name) + ",";
  out << header << "status,message,host_s\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string line;
    for (const auto& v : plan.spec.rows[i]) line += (v ? csv_cell(cell_text(*v)) : "") + ",";
    for (const auto& m : rows[i].metrics) line += (m.is_null() ? "" : csv_cell(cell_text(m))) + ",";
    const PointResult& r = rows[i].result;
    out << line << r.status << "," << csv_cell(r.message) << "," << fmt::format("{:.3f}", r.host_s) << "\n";
  }
}

void write_results_jsonl(std::ostream& out, const SweepPlan& plan, const std::vector<SweepRow>& rows) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string line;  // written by hand: members in column order
    auto add = [&](const std::string& key, const Json& v) {
      line += line.empty() ? '{' : ',';
      line += Json(key).dump();
      line += ':';
      line += v.dump();
    };
    add("point", plan.spec.numbers[i]);
    for (std::size_t c = 0; c < plan.spec.columns.size(); ++c)
      add(plan.spec.columns[c].name, plan.spec.rows[i][c] ? *plan.spec.rows[i][c] : Json());
    for (std::size_t m = 0; m < plan.spec.metrics.size(); ++m) add(plan.spec.metrics[m].first, rows[i].metrics[m]);
    const PointResult& r = rows[i].result;
    add("status", r.status);
    add("message", r.message);
    add("exit_code", r.exit_code);
    add("id", plan.points[i].id.empty() ? Json() : Json(plan.points[i].id));
    add("host_s", r.host_s);
    out << line << "}\n";
  }
}

}  // namespace dfsim
