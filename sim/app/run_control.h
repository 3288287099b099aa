#pragma once
// Signals and --timeout at every phase of a command (docs/reliability.md). Before simulated
// time starts nothing is on disk yet, so SIGINT, SIGTERM and the timeout end the process at
// once (exit 130 / 143 / 1, one line naming the phase, directories made for outputs removed);
// while simulating and writing they set stop_request(), which the watchdog (partial outputs)
// and the output writers (no commit) poll.
#include <string>

namespace dfsim {

enum class Phase { loading, compiling, expanding, simulating, writing };

// Installs the handlers; `timeout_seconds` > 0 arms a host-time alarm for the whole command.
void install_run_control(double timeout_seconds = 0);
void set_phase(Phase p);
const char* phase_name(Phase p);
const char* current_phase_name();

// What a stop request means: "interrupted by SIGINT" or "stopped at --timeout 5 s (host time)".
std::string stop_reason(int signal);
// The exit code of a command stopped by `signal`: 128 + signal, or 1 for the timeout.
int stop_exit_code(int signal);

// A note for stderr ("note: the file asks for 32 cores, compiling for 2"), held until the
// input is known good: printed when simulated time starts (set_phase(simulating)) or by
// flush_notes() when the command ends. A command that fails with bad input (exit 2) prints
// its one line only: main drops the notes then.
void note(const std::string& line);
void flush_notes();
void drop_notes();

// Directories an abrupt exit (before simulated time) removes again if they are empty.
void remove_on_abrupt_exit(const std::string& dir);
void keep_on_abrupt_exit(const std::string& dir);
// Files it removes (before those directories): an input the command wrote for itself.
void remove_file_on_abrupt_exit(const std::string& file);
void keep_file_on_abrupt_exit(const std::string& file);

}  // namespace dfsim
