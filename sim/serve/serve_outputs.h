#pragma once
// Where `dfsim serve` writes in its output directory (one run's files, or a sweep's rate-R/
// directories and sweep.csv), and the checks that keep those paths apart from the run's inputs
// and from --export-step-table before any work (docs/serving.md, "Outputs").
#include <string>
#include <utility>
#include <vector>

#include "sim/app/output_dir.h"

namespace dfsim::serve {

// The files of one run: DIR/ of a single rate or a trace, DIR/rate-R/ of a sweep.
const std::vector<std::string>& run_output_files();
// Everything serve may write at the top of DIR: a run's files and sweep.csv.
std::vector<std::string> top_output_files();

// "rate-R": R as %g when that reads back as the rate, else its shortest round-trip form, so that
// distinct rates (0.1234567 and 0.1234568) never share a directory.
std::string rate_dir_name(double rate);
// The rate as written in the sweep's table and sweep.csv (the same text as its directory).
std::string rate_text(double rate);

// A command-line input and the option that named it ("--requests", "r.csv").
using NamedPath = NamedInput;

// The paths a serve run into `out` writes or removes (an earlier run's outputs that this run
// does not write): `rate_dirs` are this run's rate-R/ names (empty for one run); `trace`: it
// writes trace.json.
class ServeOutputPlan {
 public:
  ServeOutputPlan(std::string out, std::vector<std::string> rate_dirs, bool trace);
  // UsageError (exit 2) naming both paths when --export-step-table or an input is one of the
  // paths above, or --export-step-table is one of the inputs: the run would overwrite or remove
  // its own input, or write two outputs into one file.
  void check_apart(const std::vector<NamedPath>& inputs, const std::string& export_table) const;
  // After a successful commit: removes the rate-R/ directories of an earlier sweep that this
  // run did not write (their serve files, then the directory if nothing else is left in it).
  void remove_stale_rate_dirs() const;

 private:
  struct Owned {
    std::string path, what;  // what: "writes" or "removes (an earlier run's output)"
  };
  std::vector<Owned> owned() const;
  std::vector<std::string> stale_rate_dirs() const;
  std::string out_;
  std::vector<std::string> rate_dirs_;
  bool trace_;
};

}  // namespace dfsim::serve
