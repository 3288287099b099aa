#pragma once
// The progress line of a long run on a terminal: after about two host seconds, one line on
// stderr refreshed a few times a second (simulated time, task instances done of total,
// events/s, an estimate of the time left), erased when the run ends.
#include <chrono>
#include <cstdint>
#include <cstdio>

#include "sim/common/time.h"

namespace dfsim {

class ProgressLine {
 public:
  // `out` null: prints nothing. The delay before the first line is DFSIM_PROGRESS_AFTER_S
  // seconds if that is set (for tests), else 2.
  explicit ProgressLine(std::FILE* out);
  ~ProgressLine() { clear(); }
  // Cheap when nothing is due: one clock read.
  void update(Tick sim_now, std::size_t done, std::size_t total, std::uint64_t events);
  void clear();  // erases the line, if one was printed

 private:
  using Clock = std::chrono::steady_clock;
  std::FILE* out_;
  Clock::time_point t0_, next_;
  bool shown_ = false;
};

// True when stderr is a terminal (the progress line's only destination).
bool stderr_is_terminal();

}  // namespace dfsim
