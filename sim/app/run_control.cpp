#include "sim/app/run_control.h"

#include <fmt/format.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "sim/common/stop_request.h"
#include "sim/runtime/progress.h"

namespace dfsim {

namespace {

volatile std::sig_atomic_t g_phase = static_cast<int>(Phase::loading);
double g_timeout = 0;
char g_timeout_text[96] = "";

// Directories to remove on an abrupt exit: fixed storage, read from the signal handler.
constexpr int kMaxDirs = 16;
char g_dirs[kMaxDirs][4096];
volatile std::sig_atomic_t g_dir_used[kMaxDirs];
// Files to remove then (before the directories, which must be empty to go): the same.
constexpr int kMaxFiles = 4;
char g_files[kMaxFiles][4096];
volatile std::sig_atomic_t g_file_used[kMaxFiles];

void say(const char* s) {
  ssize_t r = ::write(2, s, std::strlen(s));
  (void)r;
}

void on_stop(int s) {
  if (g_phase >= static_cast<int>(Phase::simulating)) {
    if (!stop_request()) stop_request() = s;
    return;
  }
  if (progress_line_shown()) say("\r\033[K");  // the message starts on a clean line
  say("dfsim: ");
  say(s == SIGALRM ? g_timeout_text : s == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM");
  say(" while ");
  say(phase_name(static_cast<Phase>(g_phase)));
  say("; nothing was written\n");
  for (int i = 0; i < kMaxFiles; ++i)
    if (g_file_used[i]) ::unlink(g_files[i]);
  for (int i = 0; i < kMaxDirs; ++i)  // deepest first, as registered
    if (g_dir_used[i]) ::rmdir(g_dirs[i]);
  ::_exit(stop_exit_code(s));
}

}  // namespace

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::loading: return "loading";
    case Phase::compiling: return "compiling";
    case Phase::expanding: return "expanding";
    case Phase::simulating: return "simulating";
    case Phase::writing: return "writing";
  }
  return "?";
}

std::string stop_reason(int s) {
  if (s == SIGALRM) return fmt::format("stopped at --timeout {} s (host time)", g_timeout);
  return fmt::format("interrupted by {}", s == SIGINT ? "SIGINT" : s == SIGTERM ? "SIGTERM" : "a signal");
}

int stop_exit_code(int s) { return s == SIGALRM ? 1 : 128 + s; }

void install_run_control(double timeout_seconds) {
  g_timeout = timeout_seconds;
  std::snprintf(g_timeout_text, sizeof g_timeout_text, "stopped at --timeout %g s (host time)", timeout_seconds);
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  if (timeout_seconds > 0) {
    sigaction(SIGALRM, &sa, nullptr);
    itimerval t{};
    double whole = std::floor(timeout_seconds);
    t.it_value.tv_sec = static_cast<time_t>(whole);
    t.it_value.tv_usec = static_cast<suseconds_t>((timeout_seconds - whole) * 1e6);
    if (t.it_value.tv_sec == 0 && t.it_value.tv_usec == 0) t.it_value.tv_usec = 1;
    setitimer(ITIMER_REAL, &t, nullptr);
  }
}

void set_phase(Phase p) {
  g_phase = static_cast<int>(p);
  if (p == Phase::simulating) flush_notes();
}

namespace {
std::vector<std::string>& held_notes() {
  static std::vector<std::string> notes;
  return notes;
}
}  // namespace

void note(const std::string& line) { held_notes().push_back(line); }

void flush_notes() {
  for (const auto& n : held_notes()) std::cerr << n << "\n";
  held_notes().clear();
}

void drop_notes() { held_notes().clear(); }
const char* current_phase_name() { return phase_name(static_cast<Phase>(g_phase)); }

void remove_on_abrupt_exit(const std::string& dir) {
  if (dir.size() >= sizeof g_dirs[0]) return;
  for (int i = 0; i < kMaxDirs; ++i)
    if (!g_dir_used[i]) {
      std::memcpy(g_dirs[i], dir.c_str(), dir.size() + 1);
      g_dir_used[i] = 1;
      return;
    }
}

void keep_on_abrupt_exit(const std::string& dir) {
  for (int i = 0; i < kMaxDirs; ++i)
    if (g_dir_used[i] && dir == g_dirs[i]) g_dir_used[i] = 0;
}

void remove_file_on_abrupt_exit(const std::string& file) {
  if (file.size() >= sizeof g_files[0]) return;
  for (int i = 0; i < kMaxFiles; ++i)
    if (!g_file_used[i]) {
      std::memcpy(g_files[i], file.c_str(), file.size() + 1);
      g_file_used[i] = 1;
      return;
    }
}

void keep_file_on_abrupt_exit(const std::string& file) {
  for (int i = 0; i < kMaxFiles; ++i)
    if (g_file_used[i] && file == g_files[i]) g_file_used[i] = 0;
}

}  // namespace dfsim
