#include "sim/regress/device_records.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "sim/common/decimal.h"
#include "sim/common/error.h"
#include "sim/common/text_file.h"

namespace dfsim {

namespace {

// Splits one CSV record (quoted fields may hold commas and doubled quotes).
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
      else if (c == '"') quoted = false;
      else out.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

// The largest time a record may give, in microseconds (11.6 days): beyond it the error columns
// overflow (1e308 made accuracy.csv's error -inf).
constexpr double kMaxRecordUs = 1e12;
constexpr double kMinRecordUs = 1e-3;  // 1 ns: below it an error % divides by next to nothing (1e-320 gave inf)

const char* kRequired[] = {"id", "op", "cores", "rows", "cols", "measured_kernel_us"};
// The columns that a parameter of `params` also gives (bench-ops.md).
const std::pair<const char*, const char*> kColumnParams[] = {
    {"cores", "SENCORES"}, {"rows", "BENCH_ROWS"}, {"cols", "BENCH_COLS"}, {"N", "BENCH_N"},
    {"B", "BENCH_B"},      {"tiles", "BENCH_TILES"}, {"lx_planning", "LX_PLANNING"}};

std::string where(int line, const std::string& column) { return "line " + std::to_string(line) + ", column " + column; }

}  // namespace

const std::string& DeviceRecord::at(const std::string& column) const {
  static const std::string empty;
  auto it = fields.find(column);
  return it == fields.end() ? empty : it->second;
}

std::string DeviceRecord::param(const std::string& key, const std::string& dflt) const {
  std::istringstream ss(at("params"));
  std::string kv;
  while (ss >> kv)
    if (kv.rfind(key + "=", 0) == 0) return kv.substr(key.size() + 1);
  return dflt;
}

DeviceRecords load_device_records(const std::string& file) {
  std::istringstream in(read_csv_input_file(file, "a CSV of device records"));
  DeviceRecords f{file, {}};
  std::string line;
  if (!std::getline(in, line)) throw InputError(file, "line 1", "empty file, expected a header row");
  std::vector<std::string> header = split_csv(line);
  for (std::size_t i = 0; i < header.size(); ++i)
    if (std::find(header.begin(), header.begin() + static_cast<std::ptrdiff_t>(i), header[i]) != header.begin() + static_cast<std::ptrdiff_t>(i))
      throw InputError(file, "line 1", "column \"" + header[i] + "\" given twice");
  for (const char* col : kRequired)
    if (std::find(header.begin(), header.end(), col) == header.end())
      throw InputError(file, "line 1", std::string("missing column \"") + col + "\" (see bench-ops.md)");
  for (int n = 2; std::getline(in, line); ++n) {
    if (line.empty() || line == "\r") continue;
    std::vector<std::string> cells = split_csv(line);
    if (cells.size() != header.size())
      throw InputError(file, "line " + std::to_string(n),
                       "expected " + std::to_string(header.size()) + " fields, got " + std::to_string(cells.size()));
    DeviceRecord r;
    r.line = n;
    for (std::size_t i = 0; i < header.size(); ++i) r.fields[header[i]] = cells[i];
    f.rows.push_back(std::move(r));
  }
  // Numbers every row needs are checked here, before any run.
  for (const auto& r : f.rows) {
    if (!r.at("cores").empty() && record_int(f, r, "cores", 0) < 1)
      throw InputError(file, where(r.line, "cores"), "expected a core count >= 1, got \"" + r.at("cores") + "\"");
    for (const char* dim : {"rows", "cols"})  // empty where the op has no such dim, else a size
      if (!r.at(dim).empty() && record_int(f, r, dim, 0) < 1)
        throw InputError(file, where(r.line, dim), "expected a size >= 1, got \"" + r.at(dim) + "\"");
    if (r.fields.count("hbm_bytes")) record_int(f, r, "hbm_bytes", 0);
    if (r.fields.count("lx_planning") && !r.at("lx_planning").empty() && r.at("lx_planning") != "0" && r.at("lx_planning") != "1")
      throw InputError(file, where(r.line, "lx_planning"), "expected 0 or 1, got \"" + r.at("lx_planning") + "\"");
    if (std::isnan(record_number(f, r, "measured_kernel_us")))
      throw InputError(file, where(r.line, "measured_kernel_us"), "expected a number in [0.001, 1e12] (µs), got an empty field");
    record_number(f, r, "analytical_model_us");  // optional, read after the runs: checked now
    // A column and its parameter in params say the same thing (rows and BENCH_ROWS): when both
    // are given they must agree, or the record's shape would depend on which one is read.
    for (const auto& [column, param] : kColumnParams) {
      if (r.at(column).empty() || r.param(param, "").empty()) continue;
      const bool lx = std::string(column) == "lx_planning";
      if (lx ? r.at(column) != r.param(param, "") : record_int(f, r, column, 0) != record_param_int(f, r, param, 0))
        throw InputError(file, where(r.line, column),
                         fmt::format("{}={} but params has {}={}: a record's column and its parameter must agree", column,
                                     r.at(column), param, r.param(param, "")));
    }
    double cv = 0;  // optional: the measurement's coefficient of variation, a percentage
    if (r.fields.count("measured_cv_pct") && !r.at("measured_cv_pct").empty() &&
        !(parse_decimal(r.at("measured_cv_pct"), cv) && cv >= 0 && cv <= 1000))
      throw InputError(file, where(r.line, "measured_cv_pct"),
                       "expected a percentage in [0, 1000], got \"" + r.at("measured_cv_pct") + "\"");
  }
  return f;
}

long long record_int(const DeviceRecords& f, const DeviceRecord& r, const std::string& column, long long dflt) {
  const std::string& s = r.at(column);
  if (s.empty()) return dflt;
  try {
    std::size_t used = 0;
    long long v = std::stoll(s, &used);
    if (used == s.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  throw InputError(f.file, where(r.line, column), "expected an integer >= 0, got \"" + s + "\"");
}

long long record_param_int(const DeviceRecords& f, const DeviceRecord& r, const std::string& key, long long dflt) {
  std::string s = r.param(key, "");
  if (s.empty()) return dflt;
  std::size_t used = 0;
  long long v = -1;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
  }
  if (used != s.size() || v < 0 || v > (1LL << 40))
    throw InputError(f.file, where(r.line, "params"), key + "=" + s + ": expected an integer in [0, 2^40]");
  return v;
}

double record_number(const DeviceRecords& f, const DeviceRecord& r, const std::string& column) {
  const std::string& s = r.at(column);
  if (s.empty()) return std::nan("");
  double v = 0;
  if (parse_decimal(s, v) && v >= kMinRecordUs && v <= kMaxRecordUs) return v;
  throw InputError(f.file, where(r.line, column), "expected a number in [0.001, 1e12] (µs), got \"" + s + "\"");
}

}  // namespace dfsim
