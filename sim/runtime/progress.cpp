#include "sim/runtime/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>

namespace dfsim {

namespace {
constexpr double kRefreshSeconds = 0.25;
}

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

ProgressLine::ProgressLine(std::FILE* out) : out_(out), t0_(Clock::now()) {
  double delay = 2.0;
  if (const char* e = std::getenv("DFSIM_PROGRESS_AFTER_S")) delay = std::atof(e);
  next_ = t0_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(delay));
}

void ProgressLine::update(Tick sim_now, std::size_t done, std::size_t total, std::uint64_t events) {
  if (!out_) return;
  Clock::time_point now = Clock::now();
  if (now < next_) return;
  next_ = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kRefreshSeconds));
  double host = std::chrono::duration<double>(now - t0_).count();
  std::string eta = "?";
  if (done > 0 && done < total) eta = fmt::format("{:.0f} s", host * static_cast<double>(total - done) / done);
  else if (done >= total) eta = "0 s";
  std::string line = fmt::format("simulated {:.3f} us  tasks {}/{}  {:.3g} events/s  about {} left",
                                 ticks_to_ns(sim_now) / 1000, done, total, events / std::max(host, 1e-9), eta);
  std::fprintf(out_, "\r%s\033[K", line.c_str());
  std::fflush(out_);
  shown_ = true;
}

void ProgressLine::clear() {
  if (!shown_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  shown_ = false;
}

}  // namespace dfsim
