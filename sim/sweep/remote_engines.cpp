// The engines that run points elsewhere: a Dask cluster through tools/sweep_dask.py, and a
// Slurm job array written as a script for the user to submit.
#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "sim/app/output_dir.h"
#include "sim/common/error.h"
#include "sim/sweep/child_process.h"
#include "sim/sweep/engines.h"

namespace dfsim {

namespace fs = std::filesystem;

namespace {

// tools/<name> here, else in the source tree this dfsim was built from.
std::string tool_path(const std::string& name) {
  if (fs::exists("tools/" + name)) return fs::absolute("tools/" + name).string();
  return std::string(DFSIM_SOURCE_DIR) + "/tools/" + name;
}

void write_point_list(OutputDir& out, const std::string& name, const SweepPlan& plan,
                      const std::vector<std::size_t>& todo) {
  auto f = out.open(name);
  for (auto i : todo) f << plan.points[i].dir << "\n";
}

// "host:port" (IPv6 in brackets: "[::1]:8786") split; the port is 8786 when not given.
std::pair<std::string, std::string> host_and_port(const std::string& s) {
  auto colon = s.rfind(':');
  bool bracketed = !s.empty() && s[0] == '[';
  if (colon == std::string::npos || (bracketed && colon < s.find(']'))) colon = s.size();
  std::string host = s.substr(0, colon), port = colon < s.size() ? s.substr(colon + 1) : "8786";
  if (bracketed && host.size() >= 2 && host.back() == ']') host = host.substr(1, host.size() - 2);
  return {host, port};
}

// DFSIM_DASK_TIMEOUT: seconds to wait for the scheduler (default 20), as the driver reads it.
double dask_timeout() {
  const char* t = std::getenv("DFSIM_DASK_TIMEOUT");
  if (!t || !*t) return 20;
  char* end = nullptr;
  double s = std::strtod(t, &end);
  if (*end || !(s >= 0) || s > 1e6)
    throw InputError("DFSIM_DASK_TIMEOUT", "", std::string("expected seconds to wait for the Dask scheduler, got \"") + t + "\"");
  return s;
}

// Connects to `a` within `seconds`: 0, or the errno of the failure.
int connect_within(const addrinfo* a, double seconds) {
  int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
  if (fd < 0) return errno;
  int err = connect(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
  if (err == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int n = poll(&p, 1, static_cast<int>(seconds * 1000));
    socklen_t len = sizeof err;
    if (n <= 0) err = n == 0 ? ETIMEDOUT : errno;
    else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  }
  close(fd);
  return err;
}

}  // namespace

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

void check_dask_scheduler(const std::string& address) {
  std::string rest = address.rfind("tcp://", 0) == 0 ? address.substr(6) : address;
  if (rest.find("://") != std::string::npos) return;  // tls://, ws://, ...: the driver's own connection
  auto [host, port] = host_and_port(rest);
  double timeout = dask_timeout();
  auto fail = [&](const std::string& why) {
    throw InputError("--dask", "", "cannot reach the Dask scheduler at " + address + ": " + why);
  };
  addrinfo hints{}, *found = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) fail(gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addrs(found, freeaddrinfo);
  const double end = host_seconds() + timeout;
  int err = 0;
  do {  // refused until the deadline: the scheduler may be starting, as the driver's Client waits
    for (addrinfo* a = addrs.get(); a; a = a->ai_next)
      if ((err = connect_within(a, std::max(0.0, end - host_seconds()))) == 0) return;
    if (host_seconds() < end) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (host_seconds() < end);
  fail(std::string(std::strerror(err)) + " (for " + fmt::format("{:g}", timeout) + " s, DFSIM_DASK_TIMEOUT)");
}

int run_on_dask(const std::string& dfsim, const std::string& address, const SweepPlan& plan,
                const std::vector<std::size_t>& todo, const std::string& list_file) {
  fs::path list = fs::absolute(list_file);
  {
    OutputDir out(list.parent_path().string());
    write_point_list(out, list.filename().string(), plan, todo);
    out.commit();
  }
  // Debian's python3 has python3-distributed; DFSIM_PYTHON picks another interpreter.
  const char* py = std::getenv("DFSIM_PYTHON");
  std::vector<std::string> argv{py && *py ? py : "/usr/bin/python3", tool_path("sweep_dask.py"), "--scheduler", address,
                                "--dfsim", dfsim, "--points", list.string(), "--name", plan.spec.name};
  int code = exit_code_of(wait_child(spawn_child(argv, "", "", "")));
  fs::remove(list);
  return code;
}

void check_slurm_dir(const std::string& abs) {
  // The log path goes into an #SBATCH line, which sbatch splits at white space and whose '%'
  // starts a file-name pattern (%A, %a): such a directory cannot be said there.
  if (auto bad = abs.find_first_of(" \t\n\r\"'\\%"); bad != std::string::npos)
    throw InputError("--slurm", "",
                     fmt::format("{}: an #SBATCH --output line cannot hold the directory's '{}' (white space, quotes, "
                                 "'\\' and '%' are not allowed); give another directory",
                                 abs, abs[bad] == '\n' ? std::string("\\n") : std::string(1, abs[bad])));
}

std::string write_slurm_array(const std::string& dfsim, OutputDir& out, const SweepPlan& plan,
                              const std::vector<std::size_t>& todo, const std::string& gather) {
  const std::string& abs = out.dir();
  write_point_list(out, "points.txt", plan, todo);
  {
    auto f = out.open("sweep.sbatch");
    f << "#!/bin/bash\n"
      << "# dfsim sweep \"" << plan.spec.name << "\": " << todo.size() << " points as a Slurm job array; task i runs\n"
      << "# the point whose directory is line i+1 of points.txt. Submit: sbatch " << shell_quote(abs + "/sweep.sbatch")
      << "\n# When the array has finished: sh " << shell_quote(abs + "/gather.sh") << "\n"
      << "#SBATCH --job-name=dfsim-" << plan.spec.name << "\n"
      << "#SBATCH --array=0-" << todo.size() - 1 << "\n"
      << "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n"
      << "#SBATCH --output=" << abs << "/logs/%A_%a.log\n"
      << "set -eu\n"
      << "point=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" " << shell_quote(abs + "/points.txt") << ")\n"
      << "test -n \"$point\" || { echo \"no point $SLURM_ARRAY_TASK_ID in points.txt\" >&2; exit 2; }\n"
      << "exec " << shell_quote(dfsim) << " sweep --run-point \"$point\"\n";
  }
  out.open("gather.sh") << "#!/bin/sh\n# Writes the sweep's results.csv and results.jsonl from the point store.\n"
                        << gather << "\n";
  out.commit();
  fs::create_directories(abs + "/logs");
  for (const char* f : {"sweep.sbatch", "gather.sh"})
    fs::permissions(abs + "/" + f, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
  return "sbatch " + shell_quote(abs + "/sweep.sbatch");
}

}  // namespace dfsim
