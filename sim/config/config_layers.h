#pragma once
// Reading a config file and its "extends" chain into one merged JSON tree, remembering which
// file set each value so that later errors name the right file.
#include <map>
#include <string>

#include "sim/common/json_io.h"

namespace dfsim {

// Which file set each JSON pointer of a merged config ("" when it is a default).
class Origins {
 public:
  // `file` set the value at `pointer` and everything below it; older records below go away.
  void replace(const std::string& pointer, const Json& value, const std::string& file);
  void set(const std::string& pointer, const std::string& file);
  void erase(const std::string& pointer);
  // The file of the nearest recorded pointer at or above `pointer`, or "".
  std::string file_of(const std::string& pointer) const;
  // The file that set exactly this value, or "" when it is a default.
  std::string set_by(const std::string& pointer) const;
  // Merge order of a file: parents before children before "--set"; -1 for "" (defaults).
  int rank(const std::string& file) const;

 private:
  void erase_below(const std::string& pointer);
  std::map<std::string, std::string> by_pointer_;
  std::map<std::string, int> rank_;
};

// Merges `over` into `base`: objects merge key-wise (recursively), anything else replaces.
// With `origins`, records `file` for every value taken from `over`.
void merge_json(Json& base, const Json& over, const std::string& pointer = "",
                const std::string& file = "", Origins* origins = nullptr);

// Loads `file` (comments allowed) and, first, the chain of files it "extends" (each path relative
// to the folder of the file naming it), merged parents first. "extends" and "$schema" are
// removed; "name" is never inherited. Errors: extends loop, missing parent, non-object top level.
Json load_config_layers(const std::string& file, Origins& origins);

}  // namespace dfsim
