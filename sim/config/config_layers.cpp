// The extends chain: loading, loop detection and merging with origin tracking.
#include "sim/config/config_layers.h"

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sim/common/error.h"

namespace dfsim {

namespace fs = std::filesystem;

void Origins::erase_below(const std::string& pointer) {
  // Pointers below P start with P + "/"; '0' is the character after '/'.
  by_pointer_.erase(by_pointer_.lower_bound(pointer + "/"), by_pointer_.lower_bound(pointer + "0"));
}

void Origins::erase(const std::string& pointer) {
  by_pointer_.erase(pointer);
  erase_below(pointer);
}

void Origins::set(const std::string& pointer, const std::string& file) {
  by_pointer_[pointer] = file;
  rank_.emplace(file, static_cast<int>(rank_.size()));
}

int Origins::rank(const std::string& file) const {
  auto it = rank_.find(file);
  return it == rank_.end() ? -1 : it->second;
}

void Origins::replace(const std::string& pointer, const Json& value, const std::string& file) {
  erase_below(pointer);
  set(pointer, file);
  if (value.is_object()) {
    for (const auto& [k, v] : value.items()) replace(json_path_join(pointer, k), v, file);
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) replace(json_path_join(pointer, i), value[i], file);
  }
}

std::string Origins::file_of(const std::string& pointer) const {
  std::string p = pointer;
  while (true) {
    auto it = by_pointer_.find(p);
    if (it != by_pointer_.end()) return it->second;
    if (p.empty()) return "";
    p = p.substr(0, p.rfind('/'));
  }
}

std::string Origins::set_by(const std::string& pointer) const {
  auto it = by_pointer_.find(pointer);
  return it == by_pointer_.end() ? "" : it->second;
}

void merge_json(Json& base, const Json& over, const std::string& pointer, const std::string& file,
                Origins* origins) {
  if (base.is_object() && over.is_object()) {
    if (origins) origins->set(pointer, file);
    for (const auto& [k, v] : over.items()) merge_json(base[k], v, json_path_join(pointer, k), file, origins);
    return;
  }
  if (origins) origins->replace(pointer, over, file);
  base = over;
}

namespace {

// One file of the chain; `chain` holds the files that extend it (for loop detection).
struct ChainEntry {
  std::string key;      // the file's identity (file_key)
  std::string display;  // file name for messages
};

// Which file `path` is: its device and inode, the same through links and `..`, or "" when it
// cannot be read (loop detection then skips it; the caller reports the missing file). It was the
// canonical path, which needs the working directory: from one deeper than PATH_MAX every file's
// was "", and `small.json` extending `spyre.json` was reported as "extends loop".
std::string file_key(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

// A config has no "format": a file with one is another dfsim format given as a config (an op
// graph as --config), named as such rather than by its first key ("/compile: unknown key").
void reject_other_format(const Json& j, const std::string& file) {
  auto it = j.find("format");
  if (it == j.end() || !it->is_string()) return;
  const std::string f = it->get<std::string>();
  throw InputError(file, "/format", "expected a chip config (it has no \"format\"), got a " + format_label(f) + " file");
}

Json load_layer(const std::string& file, std::vector<ChainEntry>& chain, Origins& origins) {
  Json j = load_json_file(file);
  if (!j.is_object()) throw InputError(file, "", "expected a JSON object at the top level, got " + json_type_name(j));
  reject_other_format(j, file);
  std::error_code ec;
  chain.push_back({file_key(file), fs::path(file).filename().string()});
  Json merged = Json::object();
  if (j.contains("extends")) {
    std::string rel = JsonView(j["extends"], file, "/extends").as_string();
    if (rel.empty()) throw InputError(file, "/extends", "expected the path of a config to extend, got \"\"");
    std::string parent = (fs::path(file).parent_path() / rel).lexically_normal().string();
    const std::string key = file_key(parent);
    for (const auto& e : chain) {
      if (key.empty() || e.key != key) continue;
      std::string loop;
      for (const auto& c : chain) loop += c.display + " -> ";
      throw InputError(file, "/extends", "extends loop: " + loop + fs::path(parent).filename().string());
    }
    if (!fs::exists(parent, ec))
      throw InputError(file, "/extends",
                       ec == std::errc::too_many_symbolic_link_levels ? "\"" + parent + "\": a loop of symbolic links"
                                                                       : "no such file \"" + parent + "\"");
    if (fs::is_directory(parent, ec)) throw InputError(file, "/extends", "\"" + parent + "\" is a directory");
    // A parent is a config file: a FIFO or device would block or stream without end.
    if (!fs::is_regular_file(parent, ec))
      throw InputError(file, "/extends", "\"" + parent + "\" is not a regular file (a config to extend)");
    merged = load_layer(parent, chain, origins);
    merged.erase("name");
    origins.erase("/name");
    j.erase("extends");
  }
  j.erase("$schema");
  merge_json(merged, j, "", file, &origins);
  chain.pop_back();
  return merged;
}

}  // namespace

Json load_config_layers(const std::string& file, Origins& origins) {
  std::vector<ChainEntry> chain;
  return load_layer(file, chain, origins);
}

}  // namespace dfsim
