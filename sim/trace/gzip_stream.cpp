#include "sim/trace/gzip_stream.h"

#include <stdexcept>

namespace dfsim {

GzipStreambuf::GzipStreambuf(std::ostream& sink, int level) : sink_(sink), in_(1 << 16), out_(1 << 16) {
  // windowBits 15 + 16: a gzip wrapper (header without a name or time stamp).
  if (deflateInit2(&z_, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("zlib: deflateInit2 failed");
  setp(in_.data(), in_.data() + in_.size());
}

GzipStreambuf::~GzipStreambuf() {
  if (!finished_) finish();
  deflateEnd(&z_);
}

bool GzipStreambuf::deflate_input(const char* data, std::size_t n, int flush) {
  z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
  z_.avail_in = static_cast<uInt>(n);
  do {
    z_.next_out = reinterpret_cast<Bytef*>(out_.data());
    z_.avail_out = static_cast<uInt>(out_.size());
    int rc = deflate(&z_, flush);
    if (rc == Z_STREAM_ERROR) return false;
    sink_.write(out_.data(), static_cast<std::streamsize>(out_.size() - z_.avail_out));
    if (!sink_) return false;
  } while (z_.avail_out == 0 || (flush == Z_FINISH && z_.avail_in > 0));
  return true;
}

GzipStreambuf::int_type GzipStreambuf::overflow(int_type c) {
  if (!deflate_input(pbase(), static_cast<std::size_t>(pptr() - pbase()), Z_NO_FLUSH)) return traits_type::eof();
  setp(in_.data(), in_.data() + in_.size());
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

std::streamsize GzipStreambuf::xsputn(const char* s, std::streamsize n) {
  if (n < static_cast<std::streamsize>(epptr() - pptr())) {
    std::copy(s, s + n, pptr());
    pbump(static_cast<int>(n));
    return n;
  }
  if (!deflate_input(pbase(), static_cast<std::size_t>(pptr() - pbase()), Z_NO_FLUSH)) return 0;
  setp(in_.data(), in_.data() + in_.size());
  if (!deflate_input(s, static_cast<std::size_t>(n), Z_NO_FLUSH)) return 0;
  return n;
}

bool GzipStreambuf::finish() {
  if (finished_) return static_cast<bool>(sink_);
  finished_ = true;
  bool ok = deflate_input(pbase(), static_cast<std::size_t>(pptr() - pbase()), Z_FINISH);
  setp(in_.data(), in_.data() + in_.size());
  sink_.flush();
  return ok && static_cast<bool>(sink_);
}

}  // namespace dfsim
