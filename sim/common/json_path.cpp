#include "sim/common/json_path.h"

namespace dfsim {

const Json* find_json_path(const Json& doc, const std::string& path) {
  if (!path.empty() && path[0] == '/') {
    Json::json_pointer ptr;
    try {
      ptr = Json::json_pointer(path);
    } catch (const Json::exception&) {
      return nullptr;
    }
    return doc.contains(ptr) ? &doc.at(ptr) : nullptr;
  }
  const Json* j = &doc;
  for (std::size_t start = 0; start <= path.size();) {
    std::size_t end = std::min(path.find('.', start), path.size());
    std::string key = path.substr(start, end - start);
    if (j->is_object()) {
      auto it = j->find(key);
      if (it == j->end()) return nullptr;
      j = &*it;
    } else if (j->is_array()) {
      if (key.empty() || key.size() > 9 || key.find_first_not_of("0123456789") != std::string::npos) return nullptr;
      std::size_t i = std::stoul(key);
      if (i >= j->size()) return nullptr;
      j = &(*j)[i];
    } else {
      return nullptr;
    }
    start = end + 1;
  }
  return j;
}

}  // namespace dfsim
