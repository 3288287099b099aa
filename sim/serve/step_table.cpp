#include "sim/serve/step_table.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include "sim/common/decimal.h"
#include "sim/common/error.h"
#include "sim/common/text_file.h"

namespace dfsim::serve {

namespace {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

const char* kColumns = "phase,batch,kv_tokens,query_tokens,step_ms";

}  // namespace

StepTable read_step_table(const std::string& file) {
  std::istringstream in(read_csv_input_file(file, "a step table: CSV with columns phase,batch,kv_tokens,query_tokens,step_ms"));
  StepTable t;
  t.file = file;
  bool header = false;
  int line_no = 0;
  int energy_col = -1;  // the optional energy_mj column
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    std::string s = trim(line);
    if (s.empty()) continue;
    std::string where = fmt::format("line {}", line_no);
    if (s[0] == '#') {
      auto colon = s.find(':');
      if (colon != std::string::npos) t.meta[trim(s.substr(1, colon - 1))] = trim(s.substr(colon + 1));
      continue;
    }
    std::vector<std::string> f;
    std::stringstream ss(s);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(trim(x));
    if (!header) {
      if (f.size() < 5 || f[0] != "phase" || f[1] != "batch" || f[2] != "kv_tokens" || f[3] != "query_tokens" || f[4] != "step_ms")
        throw InputError(file, where, std::string("expected the column line \"") + kColumns + "\" (further columns are ignored)");
      for (std::size_t i = 5; i < f.size(); ++i)
        if (f[i] == "energy_mj") energy_col = static_cast<int>(i);
      header = true;
      continue;
    }
    if (f.size() < 5) throw InputError(file, where, std::string("expected ") + kColumns);
    StepShape k;
    if (f[0] == "prefill") k.phase = Phase::prefill;
    else if (f[0] == "decode") k.phase = Phase::decode;
    else throw InputError(file, where + "/phase", "expected prefill or decode, got \"" + f[0] + "\"");
    auto int_field = [&](int i, const char* name) {
      char* end = nullptr;
      long v = std::strtol(f[i].c_str(), &end, 10);
      if (f[i].empty() || *end || v < 1 || v > 100'000'000) throw InputError(file, where + "/" + name, "expected an integer >= 1, got \"" + f[i] + "\"");
      return static_cast<int>(v);
    };
    k.batch = int_field(1, "batch");
    k.kv_tokens = int_field(2, "kv_tokens");
    k.query_tokens = int_field(3, "query_tokens");
    if (k.phase == Phase::decode && k.query_tokens != 1)
      throw InputError(file, where + "/query_tokens", fmt::format("a decode step computes 1 token per sequence, got {}", k.query_tokens));
    if (k.phase == Phase::prefill && k.batch != 1)
      throw InputError(file, where + "/batch", fmt::format("a prefill step is one sequence (1), got {}", k.batch));
    if (k.query_tokens > k.kv_tokens)
      throw InputError(file, where + "/query_tokens",
                       fmt::format("{} tokens computed, more than the {} of kv_tokens (which include them)", k.query_tokens, k.kv_tokens));
    double ms = 0;
    if (!parse_decimal(f[4], ms) || !(ms > 0) || ms > 1e9)
      throw InputError(file, where + "/step_ms", "expected a time in ms in (0, 1e9], got \"" + f[4] + "\"");
    StepCost c{std::max<std::int64_t>(1, std::llround(ms * 1e6))};
    if (energy_col >= 0 && static_cast<std::size_t>(energy_col) < f.size() && !f[energy_col].empty()) {
      const std::string& e = f[energy_col];
      double mj = 0;
      if (!parse_decimal(e, mj) || mj < 0 || mj > 1e12)
        throw InputError(file, where + "/energy_mj", "expected an energy in mJ >= 0 (or an empty field), got \"" + e + "\"");
      c.energy_j = mj / 1e3;
    }
    if (!t.rows.emplace(k, c).second) throw InputError(file, where, "a second row for " + k.text());
    t.line[k] = line_no;
  }
  if (!header) throw InputError(file, "", std::string("no column line (expected \"") + kColumns + "\")");
  if (t.rows.empty()) throw InputError(file, "", "no rows");
  return t;
}

void check_step_table_blocks(const StepTable& t, int block_size) {
  for (const auto& [k, c] : t.rows)
    if (k.kv_tokens % block_size != 0)
      throw InputError(t.file, fmt::format("line {}/kv_tokens", t.line.at(k)),
                       fmt::format("{} is not a whole number of {}-token KV blocks (--block-size): no step has it", k.kv_tokens, block_size));
}

void write_step_table(std::ostream& out, const std::map<std::string, std::string>& meta,
                      const std::map<StepShape, MemoStepTimes::Use>& rows) {
  out << "# dfsim step table (docs/serving.md)\n";
  for (const auto& [k, v] : meta) out << "# " << k << ": " << v << "\n";
  out << kColumns << ",steps,energy_mj\n";
  for (const auto& [k, u] : rows)
    out << fmt::format("{},{},{},{},{:.6f},{},{}\n", phase_name(k.phase), k.batch, k.kv_tokens, k.query_tokens,
                       static_cast<double>(u.cost.ns) / 1e6, u.steps,
                       u.cost.has_energy() ? fmt::format("{:.6f}", u.cost.energy_j * 1e3) : "");
}

StepCost TableStepTimes::cost(const StepShape& shape) {
  auto it = t_.rows.find(shape);
  if (it == t_.rows.end())
    throw InputError(t_.file, "", "no row for " + shape.text() +
                                      " (the table must hold every shape the run uses; see the buckets in docs/serving.md)");
  return it->second;
}

std::string TableStepTimes::describe() const {
  auto src = t_.meta.find("source");
  return "table " + t_.file + (src == t_.meta.end() ? "" : " (" + src->second + ")");
}

}  // namespace dfsim::serve
