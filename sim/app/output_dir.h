#pragma once
// Writes a command's output files all or nothing, for every subcommand that writes files:
// each file goes to a hidden temporary, every write, flush and close is checked, and only
// commit() renames them into place (removing the outputs of an earlier run that this one no
// longer writes). Without commit the temporaries and the directories it created are removed,
// so a failed or interrupted command leaves the directory as it was. See docs/architecture.md.
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/common/error.h"

namespace dfsim {

// A write, flush, close or rename of an output failed: what() is "path: reason" (exit 1).
struct OutputError : SimError {
  using SimError::SimError;
};

class OutputFileBuf;

// A stream to one output's temporary. Cheap to move; the OutputDir owns the file itself, so
// the stream may be dropped before commit().
class OutputStream : public std::ostream {
 public:
  explicit OutputStream(std::streambuf* buf) : std::ostream(buf) {}
  OutputStream(OutputStream&& o) noexcept : std::ostream(std::move(o)) { set_rdbuf(o.rdbuf()); }
};

class OutputDir {
 public:
  // Creates `dir` (and missing parents) and probes it for writing: InputError (exit 2) if it
  // cannot be. `outputs`: every file name the command may write there; at commit, those not
  // written this time are removed (they would describe an earlier run).
  explicit OutputDir(std::string dir, std::vector<std::string> outputs = {});
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  OutputStream open(const std::string& name);  // a stream to the temporary of `name`
  // Closes every file (checking each), then renames them into place and removes stale
  // outputs. OutputError on the first failure, after removing every temporary.
  void commit();
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  const std::string& dir() const { return dir_; }

 private:
  struct File {
    std::string name;
    std::unique_ptr<OutputFileBuf> buf;
    bool in_place = false;  // a device or pipe: written directly, never renamed or removed
  };
  std::string temp_of(const std::string& name) const { return dir_ + "/." + name + ".tmp"; }
  void discard();
  std::string dir_;
  std::vector<std::string> outputs_, created_;  // created_: directories made here, deepest first
  std::vector<File> files_;
  bool committed_ = false;
};

// One output file written all or nothing (`dfsim compile -o`, `gen -o`, `serve
// --export-step-table`, `--junit`). The constructor checks the path before any work: a
// directory, or a directory that cannot be made or written, is an InputError (exit 2).
// write() fills a temporary next to `path`, renamed over it only if every write, flush and
// close succeeded: OutputError ("path: reason", exit 1) otherwise, `path` untouched. An
// existing path that is neither a regular file nor a directory (/dev/stdout, a pipe,
// /dev/full) is written in place, never replaced: there is no file to leave half-written.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path);
  template <class Fn>
  void write(Fn&& fill) {
    OutputStream out = dir_->open(name_);
    fill(static_cast<std::ostream&>(out));
    dir_->commit();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_, name_;
  std::unique_ptr<OutputDir> dir_;
};

// OutputFile(path).write(write): for a file whose path needs no checking before the work.
template <class Fn>
void write_file_atomically(const std::string& path, Fn&& write) {
  OutputFile(path).write(std::forward<Fn>(write));
}

// Whether `path` names the process's standard output (/dev/stdout, /dev/fd/1, /proc/self/fd/1):
// a command writing its output there prints its status line to stderr instead.
bool is_standard_output(const std::string& path);

// The parent directory of a file path ("." for a bare name) and its last component.
std::pair<std::string, std::string> split_output_path(const std::string& path);

// A file a command reads, and the option (or role) that names it.
struct NamedInput {
  std::string option, path;
};

// Whether `a` and `b` are one file: the same file through links, or the same canonical path for
// one that does not exist yet. A device or pipe is never "the same" (a rename does not replace it).
bool same_file(const std::string& a, const std::string& b);

// Refuses (UsageError, exit 2) an output file, named by `output_option`, that is one of the
// command's inputs (those that exist), before the work.
void refuse_overwriting_inputs(const std::string& output, const std::string& output_option,
                               const std::vector<NamedInput>& inputs);

// The same for a directory of outputs: `names` are the files the command writes in `dir`, and
// `whole_dirs` the directories it replaces whole (an input anywhere inside one is lost too).
void refuse_overwriting_inputs(const std::string& dir, const std::vector<std::string>& names,
                               const std::vector<std::string>& whole_dirs, const std::string& output_option,
                               const std::vector<NamedInput>& inputs);

}  // namespace dfsim
