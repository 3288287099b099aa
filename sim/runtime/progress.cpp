#include "sim/runtime/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace dfsim {

namespace {
constexpr double kRefreshSeconds = 0.25;
std::atomic<bool> g_shown{false};

double progress_delay() {
  double delay = 2.0;
  if (const char* e = std::getenv("DFSIM_PROGRESS_AFTER_S")) delay = std::atof(e);
  return delay;
}
}  // namespace

bool progress_line_shown() { return g_shown.load(std::memory_order_relaxed); }

bool stderr_is_terminal() {
  const char* term = std::getenv("TERM");
  return isatty(STDERR_FILENO) == 1 && !(term && std::string_view(term) == "dumb");
}

ProgressLine::ProgressLine(std::FILE* out) : out_(out), t0_(Clock::now()) {
  next_ = t0_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(progress_delay()));
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
  g_shown = true;
}

void ProgressLine::clear() {
  if (!shown_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  shown_ = false;
  g_shown = false;
}

StepProgress::StepProgress(std::FILE* out, const char* (*step)())
    : out_(out), step_(step), t0_(std::chrono::steady_clock::now()) {
  if (!out_) return;
  const double delay = progress_delay();
  if (delay <= 0) draw(t0_);
  thread_ = std::thread([this, delay] {
    using namespace std::chrono;
    std::unique_lock<std::mutex> lock(m_);
    auto next = t0_ + duration_cast<steady_clock::duration>(duration<double>(std::max(delay, kRefreshSeconds)));
    while (!cv_.wait_until(lock, next, [this] { return stopping_; })) {
      draw(steady_clock::now());
      next += duration_cast<steady_clock::duration>(duration<double>(kRefreshSeconds));
    }
  });
}

void StepProgress::draw(std::chrono::steady_clock::time_point now) {
  const double host = std::chrono::duration<double>(now - t0_).count();
  std::fprintf(out_, "\r%s  %.0f s\033[K", step_(), host);
  std::fflush(out_);
  g_shown = true;
}

void StepProgress::stop() {
  if (!out_) return;
  {
    std::lock_guard<std::mutex> lock(m_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (g_shown) {
    std::fprintf(out_, "\r\033[K");
    std::fflush(out_);
    g_shown = false;
  }
  out_ = nullptr;
}

}  // namespace dfsim
