#pragma once
// A sweep file ("format": "dfsim.sweep", v1; docs/sweeps.md) read, checked and expanded into
// its points: the base, one column per axis, one row of axis values per point, the metrics.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/common/json_io.h"
#include "sim/sweep/base_kinds.h"

namespace dfsim {

// One axis column: an option of the base kind ("cores", "split", ...) or one config key of "set".
struct SweepColumn {
  std::string name;     // the results.csv header: "cores", "core.lx.usable_bytes"
  std::string option;   // "set" or an option name of the base kind
  std::string set_key;  // for "set": the dotted config key
};

struct SweepSpec {
  std::string file, name;
  std::string text;  // the file as read (results keep a copy: the file may be a pipe)
  const BaseKind* kind = nullptr;
  std::string config;     // as written (relative to the directory the sweep runs in); "" = default
  std::string input;      // the base's input file (workload), as written
  Json base_options;      // {"set": {...}, "cores": 8, ...}: what every point starts from
  std::string combine;    // grid, zip or points
  std::vector<SweepColumn> columns;
  // One row per point, in order; an absent value keeps the base's (combine "points" only).
  std::vector<std::vector<std::optional<Json>>> rows;
  std::vector<std::size_t> numbers;  // each row's number in the whole sweep (kept when --only selects rows)
  std::vector<std::pair<std::string, std::string>> metrics;  // column name, path into the metric file
};

// Reads and checks a sweep file; InputError ("file: /json/pointer: what") on anything wrong.
// A sweep of more than `max_points` points is refused before it is expanded (planning costs
// about 1 ms and 2.5 KB per point before any runs: 100 000 points are 100 s and 250 MB).
inline constexpr std::size_t kMaxSweepPoints = 100000;
SweepSpec read_sweep_file(const std::string& file, std::size_t max_points = kMaxSweepPoints);

// A point's options: the base's with the row's axis values applied.
Json point_options(const SweepSpec& spec, const std::vector<std::optional<Json>>& row);

}  // namespace dfsim
