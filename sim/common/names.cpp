// What a name may be (sim/common/names.h).
#include "sim/common/names.h"

namespace dfsim {

std::string name_problem(std::string_view s, bool path_safe) {
  // Escaped (\n as two characters): the message stays one line.
  const std::string quoted = Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
  if (s.empty()) return "expected a non-empty name, got \"\"";
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "expected a name without control characters, got " + quoted;
  if (path_safe && (s.find('/') != std::string_view::npos || s == "." || s == ".."))
    return "expected a name without '/' that is not \".\" or \"..\" (it names a directory), got " + quoted;
  return "";
}

std::string read_name(const JsonView& v, bool path_safe) {
  std::string s = v.as_string();
  std::string why = name_problem(s, path_safe);
  if (!why.empty()) v.fail(why);
  return s;
}

std::string join_for_message(const std::vector<std::string>& items, const std::string& sep) {
  constexpr std::size_t kHead = 4, kMost = kHead + 2;
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items.size() > kMost && i == kHead) {
      out += sep + "... (" + std::to_string(items.size() - kHead - 1) + " more) ...";
      i = items.size() - 1;
    }
    out += (i ? sep : "") + items[i];
  }
  return out;
}

}  // namespace dfsim
