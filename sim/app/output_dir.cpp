#include "sim/app/output_dir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "sim/app/cli.h"
#include "sim/app/run_control.h"
#include "sim/common/stop_request.h"

namespace dfsim {

namespace fs = std::filesystem;

namespace {

// 1 for /dev/stdout, /dev/fd/1, /proc/self/fd/1; 2 likewise for stderr; else 0.
int standard_stream_of(std::string path) {
  std::error_code ec;
  if (fs::is_symlink(path, ec) && path != "/dev/stdout" && path != "/dev/stderr") path = fs::read_symlink(path, ec).string();
  for (int fd : {1, 2}) {
    std::string n = std::to_string(fd);
    if (path == "/dev/fd/" + n || path == "/proc/self/fd/" + n || path == (fd == 1 ? "/dev/stdout" : "/dev/stderr")) return fd;
  }
  return 0;
}

}  // namespace

// A buffered stream to a file descriptor that keeps the first failure (errno) of a write,
// flush or close instead of losing it in an iostream state bit. Stops writing once a stop
// is requested (signal or --timeout), so an interrupted command never commits.
class OutputFileBuf : public std::streambuf {
 public:
  OutputFileBuf(std::string path, std::string shown) : path_(std::move(path)), shown_(std::move(shown)) {
    // /dev/stdout (or stderr) is the command's own stream: written through it, so that what
    // the command prints after does not overwrite it when that stream is a file.
    if (int std_fd = standard_stream_of(path_); std_fd > 0) {
      std::fflush(nullptr);
      fd_ = ::dup(std_fd);
    } else {
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    }
    if (fd_ < 0) err_ = errno;
    // Test hook (docs/reliability.md): fail the writes of one output as a full disk would.
    if (const char* f = std::getenv("DFSIM_TEST_ENOSPC"); f && shown_.size() >= std::strlen(f) &&
                                                          shown_.compare(shown_.size() - std::strlen(f), std::string::npos, f) == 0)
      inject_ = ENOSPC;
    setp(buf_, buf_ + sizeof buf_);
  }
  ~OutputFileBuf() override {
    if (fd_ >= 0) ::close(fd_);
  }
  // Flushes and closes; returns "" or the reason of the first failure.
  std::string close() {
    sync();
    if (fd_ >= 0) {
      if (::close(fd_) != 0 && !err_ && !stopped_) err_ = errno;
      fd_ = -1;
    }
    if (stopped_) return stop_reason(stopped_);
    return err_ ? std::strerror(err_) : "";
  }
  const std::string& shown() const { return shown_; }

 protected:
  int_type overflow(int_type c) override {
    if (!flush_buffer()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return flush_buffer() ? 0 : -1; }

 private:
  bool flush_buffer() {
    if (int s = stop_request(); s && !stopped_) stopped_ = s;
    if (err_ || stopped_ || fd_ < 0) {
      setp(buf_, buf_ + sizeof buf_);  // drop the data: the file will not be committed
      return false;
    }
    const char* p = pbase();
    std::size_t n = static_cast<std::size_t>(pptr() - pbase());
    while (n > 0) {
      ssize_t w = inject_ ? (errno = inject_, -1) : ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        err_ = w < 0 ? errno : EIO;
        setp(buf_, buf_ + sizeof buf_);
        return false;
      }
      p += w;
      n -= static_cast<std::size_t>(w);
    }
    setp(buf_, buf_ + sizeof buf_);
    return true;
  }
  std::string path_, shown_;
  int fd_ = -1, err_ = 0, inject_ = 0, stopped_ = 0;
  char buf_[1 << 16];
};

bool is_standard_output(const std::string& path) { return standard_stream_of(path) == 1; }

std::pair<std::string, std::string> split_output_path(const std::string& path) {
  fs::path p(path);
  std::string dir = p.parent_path().string();
  return {dir.empty() ? "." : dir, p.filename().string()};
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  // (A device or a pipe is never overwritten by a rename: /dev/stdin and /dev/stdout may be one tty.)
  if (fs::equivalent(a, b, ec)) return fs::is_regular_file(a, ec) || fs::is_directory(a, ec);
  std::error_code ea, eb;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a, ea), ea), cb = fs::weakly_canonical(fs::absolute(b, eb), eb);
  return !ea && !eb && ca == cb;
}

namespace {

// Whether `input` is inside the directory `dir` (at any depth).
bool inside(const std::string& input, const std::string& dir) {
  std::error_code ea, eb;
  const fs::path in = fs::weakly_canonical(fs::absolute(input, ea), ea), d = fs::weakly_canonical(fs::absolute(dir, eb), eb);
  if (ea || eb) return false;
  auto o = d.begin(), i = in.begin();
  for (; o != d.end() && i != in.end(); ++o, ++i)
    if (*o != *i) return false;
  return o == d.end() && i != in.end();
}

}  // namespace

void refuse_overwriting_inputs(const std::string& output, const std::string& output_option,
                               const std::vector<NamedInput>& inputs) {
  std::error_code ec;
  for (const NamedInput& in : inputs)
    if (!in.path.empty() && fs::exists(in.path, ec) && same_file(in.path, output))
      throw UsageError(output_option + " " + output + " would overwrite " + in.option + " " + in.path +
                       "; write the output elsewhere");
}

void refuse_overwriting_inputs(const std::string& dir, const std::vector<std::string>& names,
                               const std::vector<std::string>& whole_dirs, const std::string& output_option,
                               const std::vector<NamedInput>& inputs) {
  std::error_code ec;
  for (const NamedInput& in : inputs) {
    if (in.path.empty() || !fs::exists(in.path, ec)) continue;
    auto refuse = [&](const std::string& what, const std::string& why) {
      throw UsageError(output_option + " " + dir + " would " + what + " " + in.option + " " + in.path + " (" + why +
                       "); write the outputs elsewhere");
    };
    for (const std::string& n : names)
      if (same_file(in.path, dir + "/" + n)) refuse("overwrite", "it writes " + n + " there");
    for (const std::string& n : whole_dirs)
      if (same_file(in.path, dir + "/" + n) || inside(in.path, dir + "/" + n))
        refuse("remove", "it replaces " + dir + "/" + n + "/");
  }
}

OutputDir::OutputDir(std::string dir, std::vector<std::string> outputs)
    : dir_(std::move(dir)), outputs_(std::move(outputs)) {
  std::error_code ec;
  if (fs::exists(dir_, ec) && !fs::is_directory(dir_, ec))
    throw InputError(dir_, "", "output path exists and is not a directory");
  for (const auto& o : outputs_)  // found here, before the work, not when writing after it
    if (fs::is_directory(path(o), ec)) throw InputError(path(o), "", "is a directory, expected a file path");
  // Remember which directories are made here, so that a failed command removes them again.
  for (fs::path p = fs::absolute(dir_, ec).lexically_normal(); !p.empty() && !fs::exists(p, ec);
       p = p.parent_path()) {
    if (p.has_filename()) created_.push_back(p.string());
    if (p == p.parent_path()) break;
  }
  fs::create_directories(dir_, ec);
  if (ec) {
    discard();
    throw InputError(dir_, "", "cannot create output directory: " + ec.message());
  }
  for (const auto& d : created_) remove_on_abrupt_exit(d);
  std::string probe = temp_of("probe");
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  int probe_err = errno;
  if (fd >= 0) {
    ::close(fd);
    fs::remove(probe, ec);
  } else {
    discard();
    throw InputError(dir_, "", std::string("output directory is not writable: ") + std::strerror(probe_err));
  }
}

OutputDir::~OutputDir() {
  if (!committed_) discard();
}

void OutputDir::discard() {
  std::error_code ec;
  for (auto& f : files_) {
    f.buf.reset();
    if (!f.in_place) fs::remove(temp_of(f.name), ec);
  }
  files_.clear();
  for (const auto& d : created_) {
    fs::remove(d, ec);  // only if empty: never anything that was there before
    keep_on_abrupt_exit(d);
  }
  created_.clear();
}

namespace {

// What is at `path` now: 0 nothing (or not reachable), else the S_IFMT bits of its mode.
unsigned kind_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<unsigned>(st.st_mode & S_IFMT) : 0u;
}

// Written in place rather than through a renamed temporary: an existing path that is not a
// regular file (a device, a pipe), and anything under /dev or /proc (/dev/stdout is a
// symlink to /proc/self/fd/1: renaming over it replaced the link with a file).
bool write_in_place(const std::string& path) {
  unsigned kind = kind_of(path);
  std::error_code ec;
  auto special = [](const std::string& p) { return p.rfind("/dev/", 0) == 0 || p.rfind("/proc/", 0) == 0; };
  std::string link = fs::is_symlink(path, ec) ? fs::read_symlink(path, ec).string() : "";
  return (kind != 0 && kind != S_IFREG) || special(fs::absolute(path, ec).lexically_normal().string()) || special(link);
}

}  // namespace

OutputStream OutputDir::open(const std::string& name) {
  if (kind_of(path(name)) == S_IFDIR) throw InputError(path(name), "", "is a directory, expected a file path");
  bool in_place = write_in_place(path(name));
  files_.push_back({name, std::make_unique<OutputFileBuf>(in_place ? path(name) : temp_of(name), path(name)), in_place});
  return OutputStream(files_.back().buf.get());
}

OutputFile::OutputFile(const std::string& path) : path_(path) {
  // A symlink to a file: the temporary goes beside the file it points to, and the rename
  // replaces that file, keeping the link.
  std::error_code ec;
  std::string target = path;
  if (fs::is_symlink(path, ec) && !write_in_place(path)) {
    fs::path t = fs::weakly_canonical(path, ec);
    if (!ec) target = t.string();
  }
  auto [dir, name] = split_output_path(target);
  name_ = name;
  if (name_.empty() || name_ == "." || name_ == ".." || kind_of(path) == S_IFDIR)
    throw InputError(path, "", "is a directory, expected a file path");
  try {
    dir_ = std::make_unique<OutputDir>(dir);
  } catch (const InputError& e) {  // name the file the user gave, and why its directory fails
    throw InputError(path, "", "cannot be written: " + e.file() + ": " + e.detail());
  }
  // Found now, not when writing after the work: a name the file system cannot hold (with the
  // temporary's "." and ".tmp" around it).
  const long max_name = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  if (!write_in_place(path) && name_.size() + 5 > static_cast<std::size_t>(max_name > 0 ? max_name : 255))
    throw InputError(path, "", fmt::format("file name too long ({} bytes; at most {} here)", name_.size(),
                                           (max_name > 0 ? max_name : 255) - 5));
}

void OutputDir::commit() {
  for (auto& f : files_) {
    std::string why = f.buf->close();
    if (!why.empty()) {
      std::string what = f.buf->shown() + ": " + why;
      discard();
      throw OutputError(what);
    }
  }
  for (std::size_t i = 0; i < files_.size(); ++i) {
    std::error_code ec;
    if (files_[i].in_place) continue;
    fs::rename(temp_of(files_[i].name), path(files_[i].name), ec);
    if (ec) {
      std::string what = path(files_[i].name) + ": " + ec.message();
      files_.erase(files_.begin(), files_.begin() + static_cast<std::ptrdiff_t>(i));  // those are in place
      discard();
      throw OutputError(what);
    }
  }
  for (const auto& o : outputs_) {
    bool written = false;
    for (const auto& f : files_) written = written || f.name == o;
    std::error_code ec;
    if (!written) fs::remove(path(o), ec);
  }
  for (const auto& d : created_) keep_on_abrupt_exit(d);
  files_.clear();
  committed_ = true;
}

}  // namespace dfsim
