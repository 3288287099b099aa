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

// Paths to remove on an abrupt exit: fixed storage, read from the signal handler.
template <int N>
struct AbruptPaths {
  char path[N][4096];
  volatile std::sig_atomic_t used[N];
  void add(const std::string& p) {
    if (p.size() >= sizeof path[0]) return;
    for (int i = 0; i < N; ++i)
      if (!used[i]) {
        std::memcpy(path[i], p.c_str(), p.size() + 1);
        used[i] = 1;
        return;
      }
  }
  void drop(const std::string& p) {
    for (int i = 0; i < N; ++i)
      if (used[i] && p == path[i]) used[i] = 0;
  }
  void remove_each(int (*remove)(const char*)) const {  // async-signal-safe: unlink, rmdir
    for (int i = 0; i < N; ++i)
      if (used[i]) remove(path[i]);
  }
};
AbruptPaths<16> g_dirs;  // removed if empty, deepest first (as registered)
AbruptPaths<4> g_files;  // removed before the directories, which must be empty to go

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
  if (s == SIGALRM) {
    say(g_timeout_text);
  } else {
    say("interrupted by ");
    say(stop_signal_name(s));
  }
  say(" while ");
  say(phase_name(static_cast<Phase>(g_phase)));
  say("; nothing was written\n");
  g_files.remove_each(::unlink);
  g_dirs.remove_each(::rmdir);
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
  return fmt::format("interrupted by {}", stop_signal_name(s));
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
  sigaction(SIGHUP, &sa, nullptr);  // the terminal went away: as SIGTERM (it left a temporary, exit 129)
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

void remove_on_abrupt_exit(const std::string& dir) { g_dirs.add(dir); }
void keep_on_abrupt_exit(const std::string& dir) { g_dirs.drop(dir); }
void remove_file_on_abrupt_exit(const std::string& file) { g_files.add(file); }
void keep_file_on_abrupt_exit(const std::string& file) { g_files.drop(file); }

}  // namespace dfsim
