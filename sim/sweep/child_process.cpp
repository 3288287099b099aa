#include "sim/sweep/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "sim/common/error.h"

namespace dfsim {

pid_t spawn_child(const std::vector<std::string>& argv, const std::string& cwd, const std::string& stdout_file,
                  const std::string& stderr_file) {
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) throw SimError("cannot start a process: " + std::string(std::strerror(errno)));
  if (pid > 0) return pid;
  // Child: only async-signal-safe calls from here to exec.
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(143);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  auto redirect = [](const std::string& file, int fd) {
    if (file.empty()) return true;
    int f = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    return f >= 0 && dup2(f, fd) >= 0 && close(f) == 0;
  };
  if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(127);
  if (!redirect(stdout_file, STDOUT_FILENO) || !redirect(stderr_file, STDERR_FILENO)) _exit(127);
  execv(cargv[0], cargv.data());
  _exit(127);
}

int wait_child(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 127 << 8;
  return status;
}

int exit_code_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}


}  // namespace dfsim
