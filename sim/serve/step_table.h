#pragma once
// The step-time table (CSV, docs/serving.md): one row per compiled step shape with its time,
// read with --step-table and written with --export-step-table. Header comment lines carry what
// the times are for (model, config, tp) and where they come from (source). An optional
// `energy_mj` column gives each step's energy (serving's J per request and average power).
#include <cstdint>
#include <map>
#include <ostream>
#include <string>

#include "sim/serve/step_times.h"

namespace dfsim::serve {

struct StepTable {
  std::string file;
  std::map<std::string, std::string> meta;        // "# key: value" header lines
  std::map<StepShape, StepCost> rows;              // step time (and energy when the table has it)
  std::map<StepShape, int> line;                   // each row's line in the file

  // Whether some row gives an energy (then the config's power keys still matter with the table).
  bool has_energy() const {
    for (const auto& r : rows)
      if (r.second.has_energy()) return true;
    return false;
  }
};

// InputError naming the file and line on a malformed row, a duplicate shape, a bad time or a
// shape no step has (a decode step of more than 1 token per sequence, a prefill of more than
// one sequence, more tokens computed than cached).
StepTable read_step_table(const std::string& file);
// InputError at the first row whose kv_tokens is not a whole number of `block_size` blocks
// (the KV lengths the plugin compiles are: no step would ever use such a row).
void check_step_table_blocks(const StepTable& t, int block_size);
// Writes the header comments, the column line and the rows (with the steps that used each when
// `steps` is given).
void write_step_table(std::ostream& out, const std::map<std::string, std::string>& meta,
                      const std::map<StepShape, MemoStepTimes::Use>& rows);

// Step times looked up in a table; a shape the table lacks is an InputError naming the file
// and the shape (no interpolation: the plugin runs only pre-compiled shapes).
class TableStepTimes : public StepTimeProvider {
 public:
  explicit TableStepTimes(StepTable t) : t_(std::move(t)) {}
  StepCost cost(const StepShape& shape) override;
  std::string describe() const override;
  const StepTable& table() const { return t_; }

 private:
  StepTable t_;
};

}  // namespace dfsim::serve
