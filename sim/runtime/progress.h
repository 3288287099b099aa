#pragma once
// The progress line of a long run on a terminal: after about two host seconds, one line on
// stderr refreshed a few times a second (simulated time, task instances done of total,
// events/s, an estimate of the time left), erased when the run ends.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <thread>

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

// The progress line of the steps before a simulation (loading, compiling, expanding, and a
// compile's writing), which do not report as they go: after the same delay, the current
// step's name and the host seconds so far, redrawn four times a second by a thread of its
// own and erased by stop() or when it goes out of scope (an error then prints on a clean
// line). With a delay of 0 the first line is drawn at once, by the constructor.
class StepProgress {
 public:
  // `out` null: prints nothing. `step` names the current step (read from the thread).
  StepProgress(std::FILE* out, const char* (*step)());
  ~StepProgress() { stop(); }
  StepProgress(const StepProgress&) = delete;
  StepProgress& operator=(const StepProgress&) = delete;
  void stop();  // joins the thread and erases the line; idempotent

 private:
  void draw(std::chrono::steady_clock::time_point now);
  std::FILE* out_;
  const char* (*step_)();
  std::chrono::steady_clock::time_point t0_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

// Whether a progress line may be on the terminal now (for a signal handler's message, which
// starts by erasing it): an atomic flag, safe to read there.
bool progress_line_shown();

// True when stderr is a terminal that can redraw a line (the progress line's only destination):
// not with TERM=dumb (an editor's shell buffer), where "\033[K" showed as "^[[K" on every update.
bool stderr_is_terminal();

}  // namespace dfsim
