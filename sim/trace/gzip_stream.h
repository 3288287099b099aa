#pragma once
// An output stream that gzip-compresses (zlib) everything written to it into another stream:
// trace.json.gz. The gzip header carries no time stamp, so the bytes are deterministic.
#include <ostream>
#include <streambuf>
#include <vector>

#include <zlib.h>

namespace dfsim {

class GzipStreambuf : public std::streambuf {
 public:
  explicit GzipStreambuf(std::ostream& sink, int level = 6);
  ~GzipStreambuf() override;
  // Flushes the compressor and writes the gzip trailer; false if the sink failed.
  bool finish();

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;

 private:
  bool deflate_input(const char* data, std::size_t n, int flush);
  std::ostream& sink_;
  z_stream z_{};
  std::vector<char> in_, out_;
  bool finished_ = false;
};

class GzipOStream : public std::ostream {
 public:
  explicit GzipOStream(std::ostream& sink) : std::ostream(nullptr), buf_(sink) { rdbuf(&buf_); }
  bool finish() { return buf_.finish(); }

 private:
  GzipStreambuf buf_;
};

}  // namespace dfsim
