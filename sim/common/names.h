#pragma once
// Names in input files (of a graph, a kernel, a task, a tensor, a case, a config...): what a
// name may be, and reading one with an error that names the file and the JSON path.
#include <string>
#include <string_view>
#include <vector>

#include "sim/common/json_io.h"

namespace dfsim {

// Why `s` cannot be a name, "" if it can: it is empty, or has a control character (names are
// quoted in one-line messages and written to CSV and trace files); with `path_safe` (it names
// a directory) also a '/', or it is "." or "..".
std::string name_problem(std::string_view s, bool path_safe = false);

// The string at `v`, which must be a name (InputError at v's path otherwise).
std::string read_name(const JsonView& v, bool path_safe = false);

// `items` joined by `sep` for a one-line message, at most 6 of them: a longer list keeps its
// first 4 and its last, with how many were left out between ("a needs b needs ... (49 994 more)
// ... needs z"): a cycle through 50 000 ops made a 1 MB line.
std::string join_for_message(const std::vector<std::string>& items, const std::string& sep);

}  // namespace dfsim
