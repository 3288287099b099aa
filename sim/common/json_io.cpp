#include "sim/common/json_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/common/error.h"
#include "sim/common/text_file.h"

namespace dfsim {

namespace {

constexpr int kMaxDepth = 200;

// Line and column (1-based) of a byte offset in text.
std::string line_col(const std::string& text, std::size_t byte) {
  byte = std::min(byte, text.size());
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < byte; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

// nlohmann's messages start with "[json.exception.parse_error.101] parse error at line 1,
// column 2: "; keep the part after the location.
std::string short_parse_message(const std::string& what) {
  auto pos = what.find(": ");
  std::string s = pos == std::string::npos ? what : what.substr(pos + 2);
  return s;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// Visits the bytes of `text` that are outside strings and comments, in order, until
// `visit(i)` returns true; returns that offset or text.size().
template <class F>
std::size_t scan_json_code(const std::string& text, F visit) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      auto end = text.find("*/", i + 2);
      i = end == std::string::npos ? text.size() : end + 1;
    } else if (visit(i)) {
      return i;
    }
  }
  return text.size();
}

// Byte offset at which `text` first nests deeper than `max_depth`.
std::size_t too_deep_offset(const std::string& text, int max_depth) {
  int depth = 0;
  return scan_json_code(text, [&](std::size_t i) {
    char c = text[i];
    if (c == '[' || c == '{') return ++depth > max_depth;
    if (c == ']' || c == '}') --depth;
    return false;
  });
}

// Byte offset of `token` outside strings and comments, or text.size().
std::size_t find_code_token(const std::string& text, const std::string& token) {
  return scan_json_code(text, [&](std::size_t i) { return text.compare(i, token.size(), token) == 0; });
}

// While parsing: the path to the current value, for errors. Keys given twice in one object
// are found in the object being built; a key whose value the callback left out is kept here.
struct ParseFrame {
  bool object = false;
  Json* value = nullptr;                 // the container being built
  std::string key;                       // object: current key
  std::vector<std::string> dropped_keys; // object: keys whose values were left out
  long index = -1;                       // array: current element
};

std::string frames_path(const std::vector<ParseFrame>& frames) {
  std::string p;
  for (const auto& f : frames)
    p = f.object ? json_path_join(p, f.key) : json_path_join(p, static_cast<std::size_t>(f.index));
  return p;
}

// One SAX pass that builds the document and checks it: nesting depth and keys given twice
// (an error instead of the last one silently winning). With a callback it raises the events
// of nlohmann's callback parser at the same depths, and a value the callback declines at its
// end (a scalar's `value`, `object_end`, `array_end`) is left out. Unlike nlohmann's callback
// parser it never rescans a container's members when one of them ends (quadratic: a 10^5-
// member array), and the text is read once instead of a checking pass and a building pass.
class CheckedDomSax : public nlohmann::json_sax<Json> {
 public:
  using Event = Json::parse_event_t;
  CheckedDomSax(const std::string& text, const std::string& file, const Json::parser_callback_t& callback)
      : text_(text), file_(file), callback_(callback) {}
  Json& root() { return root_; }

  bool null() override { return add(Json(nullptr)); }
  bool boolean(bool v) override { return add(Json(v)); }
  bool number_integer(number_integer_t v) override { return add(Json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return add(Json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return add(Json(v)); }
  bool string(string_t& v) override { return add(Json(std::move(v))); }
  bool binary(binary_t& v) override { return add(Json(std::move(v))); }
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(Event::object_end); }
  bool end_array() override { return close(Event::array_end); }
  bool key(string_t& k) override {
    ParseFrame& f = frames_.back();
    f.key = k;
    if (f.value->contains(k) || std::find(f.dropped_keys.begin(), f.dropped_keys.end(), k) != f.dropped_keys.end())
      throw InputError(file_, frames_path(frames_), "duplicate key \"" + k + "\" in one object");
    if (callback_) {
      Json key_value(k);
      callback_(static_cast<int>(frames_.size()), Event::key, key_value);
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override {
    if (auto* p = dynamic_cast<const Json::parse_error*>(&ex)) throw *p;
    if (auto* o = dynamic_cast<const Json::out_of_range*>(&ex)) throw *o;
    throw std::runtime_error(ex.what());
  }

 private:
  // The slot of the next value in the open container (or the root), its index counted.
  Json& slot() {
    if (frames_.empty()) return root_;
    ParseFrame& f = frames_.back();
    if (f.object) return (*f.value)[f.key];
    ++f.index;
    f.value->push_back(Json());
    return f.value->back();
  }
  // Removes the value just completed in the open container (the callback declined it).
  void drop() {
    if (frames_.empty()) {
      root_ = Json(Json::value_t::discarded);
      return;
    }
    ParseFrame& f = frames_.back();
    if (f.object) {
      f.value->erase(f.key);
      f.dropped_keys.push_back(f.key);
    } else {
      f.value->erase(f.value->size() - 1);
    }
  }
  bool add(Json v) {
    if (!callback_ || callback_(static_cast<int>(frames_.size()), Event::value, v)) {
      slot() = std::move(v);
    } else if (!frames_.empty()) {  // declined: its key is remembered, its index counted
      ParseFrame& f = frames_.back();
      if (f.object) f.dropped_keys.push_back(f.key);
      else ++f.index;
    }
    return true;
  }
  bool open(bool object) {
    if (static_cast<int>(frames_.size()) >= kMaxDepth)
      throw InputError(file_, line_col(text_, too_deep_offset(text_, kMaxDepth)),
                       "JSON nested deeper than " + std::to_string(kMaxDepth) + " levels");
    if (callback_) {
      Json none(Json::value_t::discarded);
      if (!callback_(static_cast<int>(frames_.size()), object ? Event::object_start : Event::array_start, none))
        throw std::logic_error("parse_json_text: a callback may leave a container out only at its end");
    }
    Json& v = slot();
    v = object ? Json::object() : Json::array();
    frames_.push_back(ParseFrame{});
    frames_.back().object = object;
    frames_.back().value = &v;
    return true;
  }
  bool close(Event event) {
    Json& v = *frames_.back().value;
    frames_.pop_back();
    if (callback_ && !callback_(static_cast<int>(frames_.size()), event, v)) drop();
    return true;
  }
  const std::string& text_;
  const std::string& file_;
  const Json::parser_callback_t& callback_;
  Json root_;
  std::vector<ParseFrame> frames_;
};

}  // namespace

Json parse_json_text(const std::string& text, const std::string& file, const Json::parser_callback_t& callback) {
  try {
    CheckedDomSax sax(text, file, callback);
    Json::sax_parse(text, &sax, Json::input_format_t::json, /*strict=*/true, /*ignore_comments=*/true);
    return std::move(sax.root());
  } catch (const Json::parse_error& e) {
    std::size_t at = e.byte > 0 ? e.byte - 1 : 0;
    throw InputError(file, line_col(text, at), "malformed JSON: " + short_parse_message(e.what()));
  } catch (const Json::out_of_range& e) {
    // A number beyond the range of a double (e.g. 1e400): "number overflow parsing '1e400'".
    std::string what = e.what();
    auto q1 = what.find('\''), q2 = what.rfind('\'');
    std::string token = q1 != std::string::npos && q2 > q1 ? what.substr(q1 + 1, q2 - q1 - 1) : "";
    std::size_t at = token.empty() ? text.size() : find_code_token(text, token);
    throw InputError(file, at == text.size() ? "" : line_col(text, at),
                     "number " + (token.empty() ? std::string() : token + " ") + "is out of range");
  }
}

Json load_json_file(const std::string& path) {
  return parse_json_text(read_input_file(path, "a JSON file", true), path);
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  // Half the word or more changed is another word, not a typo ("bmm" is not "sum").
  return best_d <= limit && 2 * best_d <= word.size() ? best : std::string();
}

std::string json_path_join(const std::string& path, std::string_view key) {
  std::string token;
  for (char c : key) {
    if (c == '~') token += "~0";
    else if (c == '/') token += "~1";
    else token += c;
  }
  return path + "/" + escape_controls(token);  // a path stays one line
}

std::string json_path_join(const std::string& path, std::size_t index) {
  return path + "/" + std::to_string(index);
}

std::string json_type_name(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    case Json::value_t::string: return "a string";
    case Json::value_t::array: return "an array";
    case Json::value_t::object: return "an object";
    default: return "an unknown value";
  }
}

void JsonView::fail(const std::string& detail) const { throw InputError(file_, path_, detail); }

void JsonView::fail_at(std::string_view key, const std::string& detail) const {
  throw InputError(file_, json_path_join(path_, key), detail);
}

bool JsonView::has(std::string_view key) const {
  return j_->is_object() && j_->contains(std::string(key));
}

JsonView JsonView::at(std::string_view key) const {
  expect_object();
  auto it = j_->find(std::string(key));
  if (it == j_->end()) fail_at(key, "missing required field");
  return JsonView(*it, file_, json_path_join(path_, key));
}

JsonView JsonView::at(std::size_t index) const {
  expect_array();
  if (index >= j_->size()) fail("index " + std::to_string(index) + " out of range");
  return JsonView((*j_)[index], file_, json_path_join(path_, index));
}

std::size_t JsonView::size() const { return j_->size(); }

void JsonView::expect_object() const {
  if (!j_->is_object()) fail("expected an object, got " + json_type_name(*j_));
}

void JsonView::expect_array() const {
  if (!j_->is_array()) fail("expected an array, got " + json_type_name(*j_));
}

std::vector<int> JsonView::as_distinct_ints(int min, int max, const std::string& noun) const {
  expect_array();
  if (size() == 0) fail(fmt::format("expected at least one {}", noun));
  std::vector<int> out;
  for (std::size_t i = 0; i < size(); ++i) {
    int v = static_cast<int>(at(i).as_int(min, max));
    if (std::find(out.begin(), out.end(), v) != out.end()) at(i).fail(fmt::format("{} {} listed twice", noun, v));
    out.push_back(v);
  }
  return out;
}

void JsonView::only_keys(std::initializer_list<std::string_view> allowed) const {
  expect_object();
  std::vector<std::string> names(allowed.begin(), allowed.end());
  for (const auto& [k, v] : j_->items()) {
    if (std::find(names.begin(), names.end(), k) != names.end()) {
      // Free text, wherever a format allows it: checked here so that no reader forgets.
      if ((k == "description" || k == "$schema") && !v.is_string()) at(k).fail("expected a string, got " + json_type_name(v));
      continue;
    }
    std::string hint = closest_match(k, names);
    fail_at(k, "unknown key" + (hint.empty() ? std::string() : " (did you mean \"" + hint + "\"?)"));
  }
}

void JsonView::expect_format(const std::string& expected) const {
  expect_object();
  if (!has("format")) fail_at("format", "missing required field, expected \"format\": \"" + expected + "\"");
  const JsonView f = at("format");
  const std::string got = f.as_string();
  if (got == expected) return;
  f.fail("expected " + expected + ", got " + format_label(got));
}

std::string format_label(const std::string& format) {
  return format.rfind("dfsim.", 0) == 0 ? format : "\"" + format + "\"";
}

std::string JsonView::as_string() const {
  if (!j_->is_string()) fail("expected a string, got " + json_type_name(*j_));
  return j_->get<std::string>();
}

std::int64_t JsonView::as_int(std::int64_t min, std::int64_t max) const {
  std::int64_t v = 0;
  if (j_->is_number_unsigned()) {
    auto u = j_->get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) fail("integer too large");
    v = static_cast<std::int64_t>(u);
  } else if (j_->is_number_integer()) {
    v = j_->get<std::int64_t>();
  } else {
    fail("expected an integer, got " + json_type_name(*j_) + (j_->is_number() ? " " + j_->dump() : ""));
  }
  if (v < min || v > max) {
    std::string range = max == INT64_MAX ? ">= " + std::to_string(min)
                                         : "in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    fail("expected an integer " + range + ", got " + std::to_string(v));
  }
  return v;
}

std::uint64_t JsonView::as_uint(std::uint64_t min, std::uint64_t max) const {
  std::uint64_t v = 0;
  if (j_->is_number_unsigned()) {
    v = j_->get<std::uint64_t>();
  } else if (j_->is_number_integer()) {
    // JSON built in code stores non-negative integers as signed.
    std::int64_t s = j_->get<std::int64_t>();
    if (s < 0) fail("expected an integer >= " + std::to_string(min) + ", got " + j_->dump());
    v = static_cast<std::uint64_t>(s);
  } else {
    fail("expected an integer, got " + json_type_name(*j_));
  }
  if (v < min || v > max) {
    std::string range = max == UINT64_MAX ? ">= " + std::to_string(min)
                                          : "in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    fail("expected an integer " + range + ", got " + std::to_string(v));
  }
  return v;
}

double JsonView::as_number(double min, double max) const {
  if (!j_->is_number()) fail("expected a number, got " + json_type_name(*j_));
  double v = j_->get<double>();
  if (!(v >= min && v <= max)) {
    std::ostringstream ss;
    ss << "expected a number in [" << min << ", " << max << "], got " << v;
    fail(ss.str());
  }
  return v;
}

bool JsonView::as_bool() const {
  if (!j_->is_boolean()) fail("expected true or false, got " + json_type_name(*j_));
  return j_->get<bool>();
}

Dtype JsonView::as_dtype() const {
  std::string s = as_string();
  if (auto d = dtype_from_name(s)) return *d;
  fail("unknown dtype \"" + s + "\", expected one of fp16, fp8, int8, int4, fp32, int32");
}

std::string JsonView::get_string(std::string_view key, const std::string& dflt) const {
  return has(key) ? at(key).as_string() : dflt;
}

std::int64_t JsonView::get_int(std::string_view key, std::int64_t dflt, std::int64_t min,
                               std::int64_t max) const {
  return has(key) ? at(key).as_int(min, max) : dflt;
}

bool JsonView::get_bool(std::string_view key, bool dflt) const {
  return has(key) ? at(key).as_bool() : dflt;
}

}  // namespace dfsim
