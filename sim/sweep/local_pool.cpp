// The local engine: a pool of child processes, one point each.
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "sim/runtime/progress.h"
#include "sim/sweep/engines.h"

namespace dfsim {

namespace {

volatile sig_atomic_t g_signal = 0;
void on_signal(int s) { g_signal = s; }

// "sweep lx_by_cores: 12/60 points, 1 failed, 2 running, ETA 0:42" rewritten in place.
void progress(const std::string& name, std::size_t done, std::size_t total, std::size_t failed, std::size_t running,
              double elapsed) {
  std::string eta = "-:--";
  if (done > 0) {
    auto s = static_cast<long>(elapsed / done * (total - done) + 0.5);
    eta = fmt::format("{}:{:02}", s / 60, s % 60);
  }
  std::fprintf(stderr, "\rsweep %s: %zu/%zu points, %zu failed, %zu running, ETA %s   ", name.c_str(), done, total,
               failed, running, eta.c_str());
  std::fflush(stderr);
}

}  // namespace

std::map<std::size_t, PointResult> run_local_pool(const std::string& dfsim, const SweepPlan& plan,
                                                  const std::vector<std::size_t>& todo, int jobs, int* signal) {
  struct sigaction sa {}, old_int{}, old_term{};
  sa.sa_handler = on_signal;  // no SA_RESTART: waitpid returns at once on a signal
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  g_signal = 0;
  bool tty = stderr_is_terminal();  // (not with TERM=dumb: its progress line would show escape codes)
  std::map<std::size_t, PointResult> unrecorded;
  std::map<pid_t, std::pair<std::size_t, double>> running;  // pid -> point, start time
  std::size_t next = 0, done = 0, failed = 0;
  const double t0 = host_seconds();
  bool forwarded = false;
  while (running.size() || (next < todo.size() && !g_signal)) {
    if (g_signal && !forwarded) {  // stop the running points; each ends unrecorded
      for (const auto& [child, _] : running) kill(child, g_signal);
      forwarded = true;
    }
    while (!g_signal && next < todo.size() && running.size() < static_cast<std::size_t>(jobs)) {
      const SweepPoint& p = plan.points[todo[next++]];
      running[start_point(dfsim, p.dir, point_command(p.point, p.dir + "/point.json"))] = {p.index, host_seconds()};
    }
    if (tty) progress(plan.spec.name, done, todo.size(), failed, running.size(), host_seconds() - t0);
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno != EINTR) break;
      continue;
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    auto [index, start] = it->second;
    running.erase(it);
    PointResult r = finish_point(plan.points[index].dir, status, host_seconds() - start);
    ++done;
    failed += r.status != "ok";
    if (!r.recorded) unrecorded[index] = r;
  }
  if (tty) {
    progress(plan.spec.name, done, todo.size(), failed, 0, host_seconds() - t0);
    std::fprintf(stderr, "\n");
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  *signal = g_signal;
  return unrecorded;
}

}  // namespace dfsim
