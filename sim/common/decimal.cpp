#include "sim/common/decimal.h"

#include <cmath>
#include <cstdlib>

namespace dfsim {

bool parse_decimal(const std::string& s, double& v) {
  if (s.empty() || s.find_first_not_of("0123456789+-.eE") != std::string::npos) return false;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return *end == '\0' && end != s.c_str() && std::isfinite(v);  // 1e400 is read as inf: not a number here
}

}  // namespace dfsim
