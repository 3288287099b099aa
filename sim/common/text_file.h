#pragma once
// Whole files as text, and a stable hash of text for cache and point keys.
#include <cstdint>
#include <string>

namespace dfsim {

// The bytes of `path`, or "" when it cannot be read (callers that must know check first).
std::string read_text_file(const std::string& path);

// The largest input file a reader accepts (configs, graphs, suites, traces, tables).
constexpr std::uint64_t kMaxInputBytes = std::uint64_t{1} << 30;

// The bytes of an input file, for every reader of user inputs. InputError (exit 2) naming
// `path` when it is missing, a directory, unreadable, larger than kMaxInputBytes (refused from
// its size, or after that many bytes of a pipe or device), or binary: a NUL byte, which no
// JSON or CSV text holds, refused at its line:column as soon as it is read (so /dev/zero or
// /dev/urandom cost one read, not all memory). `expected` says what it should be ("a JSON file").
// With `json`, a first character (after white space and a UTF-8 byte order mark) that can
// begin no JSON text (nor a comment's '/': configs have them) is refused at its line:column as
// soon as it is read, so `yes | dfsim run -w /dev/stdin` costs one read, not a gigabyte.
// The last pipe read (`<(...)`, /dev/stdin), read again by the same process, gives the same
// text (up to 64 MiB), not the empty rest of the pipe.
std::string read_input_file(const std::string& path, const std::string& expected, bool json = false);

// read_input_file for the line-oriented inputs (CSV tables, request traces, histograms), less a
// leading UTF-8 byte order mark (spreadsheets write one; the JSON parser skips it itself), so
// that the first header cell is "id", not "\xEF\xBB\xBFid".
std::string read_csv_input_file(const std::string& path, const std::string& expected);

// 64-bit FNV-1a of `text` as 16 hex digits: the same on every machine and run.
std::string hash_hex(const std::string& text);

}  // namespace dfsim
