// dfsim: command-line entry. SystemC calls sc_main; it dispatches to the subcommands.
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <systemc>
#include <vector>

#include "sim/app/cli.h"
#include "sim/app/run_control.h"
#include "sim/common/stop_request.h"
#include "sim/common/error.h"

namespace {

const char* kUsage =
    "dfsim " DFSIM_VERSION " - cycle-approximate simulator of a Spyre-class dataflow inference accelerator\n"
    "\n"
    "usage: dfsim <command> [options]\n"
    "\n"
    "commands:\n"
    "  run       simulate a workload (op graph or compiled kernel graph) on a chip config\n"
    "  compile   compile an op graph into a kernel graph\n"
    "  validate  check configs, graphs, suites, sweeps, placements and model files without running\n"
    "  info      print a config's derived figures (and --params: every parameter)\n"
    "  calibrate run the calibration microbenchmarks (memory, an add, a matmul) against the measured card\n"
    "  regress   run regression suites: expected metrics with tolerances, JUnit output\n"
    "  diff      compare two runs metric by metric and kernel by kernel\n"
    "  accuracy  simulate the kernels measured on a card and report the error per category\n"
    "  sweep     run a design-space sweep (many runs) locally, on Dask or Slurm; tables for plots\n"
    "  serve     simulate continuous-batching LLM serving (TTFT, ITL, throughput) at a request rate\n"
    "  gen       write the op graph of one step of a model (llama-3.1-8b, granite-3.3-8b, ...)\n"
    "\n"
    "Run 'dfsim <command> --help' for its options and an example.\n"
    "Exit codes: 0 success, 1 the simulation failed (deadlock, limit), 2 bad input or usage.\n";

// Whether stdout is a pipe whose reader has gone (`dfsim info --params | head -1`).
bool stdout_reader_gone() {
  struct stat st {};
  if (::fstat(STDOUT_FILENO, &st) != 0 || !S_ISFIFO(st.st_mode)) return false;
  pollfd p{STDOUT_FILENO, POLLOUT, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

// What a command printed must have reached stdout: `dfsim info --params > file` on a full
// disk exited 0 with the file cut short. A failed write, flush or close of stdout is one
// line on stderr and exit 1 (unless the command already failed); a pipe whose reader went
// away ends the command quietly with 141, as SIGPIPE would (its outputs are complete: SIGPIPE
// is ignored so that it cannot stop it between a temporary and its rename).
int check_stdout(int code) {
  std::cout.flush();
  bool failed = !std::cout.good() || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (!failed) return code;
  int err = errno;
  if (stdout_reader_gone()) return code == 0 ? 128 + SIGPIPE : code;
  std::cerr << "dfsim: stdout: " << (err ? std::strerror(err) : "write failed") << "\n";
  return code == 0 ? 1 : code;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {  // a usage error: one line on stderr, as for every other
    std::cerr << "dfsim: expected a command: run, compile, validate, info, calibrate, regress, diff, accuracy, "
                 "sweep, serve or gen (see 'dfsim --help')\n";
    return 2;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return check_stdout(0);
  }
  if (args[0] == "--version" || args[0] == "-V") {
    std::cout << "dfsim " DFSIM_VERSION "\n";
    return check_stdout(0);
  }
  std::string cmd = args[0];
  args.erase(args.begin());
  // Notes held while loading are printed unless the command fails on bad input (exit 2:
  // exactly one line).
  auto finish = [](int code) {
    if (code == 2) dfsim::drop_notes();
    else dfsim::flush_notes();
    return check_stdout(code);
  };
  try {
    if (cmd == "run") return finish(dfsim::cmd_run(args));
    if (cmd == "compile") return finish(dfsim::cmd_compile(args));
    if (cmd == "validate") return finish(dfsim::cmd_validate(args));
    if (cmd == "info") return finish(dfsim::cmd_info(args));
    if (cmd == "calibrate") return finish(dfsim::cmd_calibrate(args));
    if (cmd == "regress") return finish(dfsim::cmd_regress(args));
    if (cmd == "diff") return finish(dfsim::cmd_diff(args));
    if (cmd == "accuracy") return finish(dfsim::cmd_accuracy(args));
    if (cmd == "sweep") return finish(dfsim::cmd_sweep(args));
    if (cmd == "serve") return finish(dfsim::cmd_serve(args));
    if (cmd == "gen") return finish(dfsim::cmd_gen(args));
    std::cerr << "dfsim: unknown command \"" << dfsim::escape_controls(cmd) << "\" (expected run, compile, validate, info, calibrate, regress, diff, accuracy, sweep, serve or gen)\n";
    return 2;
  } catch (const dfsim::InputError& e) {
    std::cerr << dfsim::escape_controls(e.what()) << "\n";  // one line: controls and non-UTF-8 escaped
    return 2;
  } catch (const dfsim::UsageError& e) {
    std::cerr << "dfsim " << cmd << ": " << dfsim::escape_controls(e.what()) << " (see 'dfsim " << cmd << " --help')\n";
    return 2;
  } catch (const dfsim::SimError& e) {
    dfsim::flush_notes();
    std::cerr << "dfsim: " << e.what() << "\n";
    return dfsim::stop_request() ? dfsim::stop_exit_code(dfsim::stop_request()) : 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "dfsim: out of host memory while " << dfsim::current_phase_name()
              << " (the input is too large for this machine; nothing was written)\n";
    return 1;
  } catch (const std::exception& e) {
    if (std::string(e.what()).find("std::bad_alloc") != std::string::npos) {  // from inside a SystemC process
      std::cerr << "dfsim: out of host memory while " << dfsim::current_phase_name()
                << " (the input is too large for this machine)\n";
      return 1;
    }
    std::cerr << "dfsim: internal error: " << e.what() << "\n";
    return 1;
  }
}

int main(int argc, char* argv[]) {
  // SystemC prints a banner when its kernel starts unless this is set.
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  // A reader of stdout that went away (`dfsim ... | head -1`) must not kill the command between
  // its temporaries and their rename: a write to it fails (EPIPE) and the command goes on.
  std::signal(SIGPIPE, SIG_IGN);
  return sc_core::sc_elab_and_sim(argc, argv);
}
