#pragma once
// Reading JSON inputs with errors that name the file, the JSON path and what was expected.
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sim/common/dtype.h"

namespace dfsim {

using Json = nlohmann::json;

// Parses a JSON file (comments allowed). Malformed JSON, bad UTF-8, nesting deeper than 200
// levels, a missing or unreadable file or a directory: InputError with line:column where known.
Json load_json_file(const std::string& path);

// Parses JSON text; `file` names it in errors. With `callback`, nlohmann's parser callback (it
// may read values as they are met and leave them out of the document: kernel_graph_read.cpp).
Json parse_json_text(const std::string& text, const std::string& file, const Json::parser_callback_t& callback = nullptr);

// The closest of `candidates` to `word` by edit distance, or "" if none is close.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// Appends a JSON pointer token (escaping ~ and /).
std::string json_path_join(const std::string& path, std::string_view key);
std::string json_path_join(const std::string& path, std::size_t index);

// A view of one JSON value at a known path of a known file; its accessors throw InputError
// naming both. Used by every format reader so that all errors look alike.
class JsonView {
 public:
  JsonView(const Json& j, std::string file, std::string path = "")
      : j_(&j), file_(std::move(file)), path_(std::move(path)) {}

  const Json& json() const { return *j_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(const std::string& detail) const;
  [[noreturn]] void fail_at(std::string_view key, const std::string& detail) const;

  bool has(std::string_view key) const;
  JsonView at(std::string_view key) const;    // required member
  JsonView at(std::size_t index) const;       // array element
  std::size_t size() const;                   // array or object size

  void expect_object() const;
  void expect_array() const;
  // Every member must be one of `allowed`; an unknown one fails with a "did you mean" hint.
  void only_keys(std::initializer_list<std::string_view> allowed) const;
  // An object whose "format" is `expected` ("dfsim.suite"); else "/format: expected
  // dfsim.suite, got dfsim.ops". Readers call it before only_keys, so that a file of another
  // format is named by its format, not by its first key the reader does not know.
  void expect_format(const std::string& expected) const;

  std::string as_string() const;
  std::int64_t as_int(std::int64_t min = INT64_MIN, std::int64_t max = INT64_MAX) const;
  std::uint64_t as_uint(std::uint64_t min = 0, std::uint64_t max = UINT64_MAX) const;
  double as_number(double min, double max) const;
  bool as_bool() const;
  Dtype as_dtype() const;
  // A non-empty array of distinct integers in [min, max] (a list of cards): "expected at least
  // one {noun}", "{noun} N listed twice".
  std::vector<int> as_distinct_ints(int min, int max, const std::string& noun) const;

  // Optional members with defaults.
  std::string get_string(std::string_view key, const std::string& dflt) const;
  std::int64_t get_int(std::string_view key, std::int64_t dflt, std::int64_t min = INT64_MIN,
                       std::int64_t max = INT64_MAX) const;
  bool get_bool(std::string_view key, bool dflt) const;

 private:
  const Json* j_;
  std::string file_, path_;
};

std::string json_type_name(const Json& j);

// A "format" value as errors name it: dfsim.ops as it is, anything else quoted.
std::string format_label(const std::string& format);

}  // namespace dfsim
