#include "models/sfp/sfp_timing.h"

#include <cmath>
#include <map>

namespace dfsim {

std::string sfp_function_class(const std::string& op) {
  static const std::map<std::string, std::string> classes = {
      {"add", "add"},   {"sub", "add"},     {"mul", "add"},   {"neg", "add"},   {"copy", "add"},
      {"fma", "fma"},   {"max", "max"},     {"min", "max"},   {"exp", "exp"},   {"log", "log"},
      {"rsqrt", "rsqrt"}, {"sqrt", "rsqrt"}, {"div", "div"},  {"reciprocal", "div"},
      {"gelu", "gelu"}, {"silu", "gelu"},   {"tanh", "gelu"}, {"convert", "convert"},
      {"sum", "reduce"}, {"mean", "reduce"}, {"amax", "reduce"}};
  auto it = classes.find(op);
  return it == classes.end() ? "add" : it->second;
}

std::uint64_t sfp_cycles(const SfpConfig& sfp, const std::string& op, Dtype dtype, std::uint64_t elements,
                         int corelets) {
  if (elements == 0) return 0;
  std::uint64_t per_corelet = (elements + corelets - 1) / corelets;
  std::uint64_t vectors = (per_corelet + sfp.lanes - 1) / sfp.lanes;
  auto it = sfp.cycles_per_vector.find(sfp_function_class(op));
  double cost = it == sfp.cycles_per_vector.end() ? 1.0 : it->second;
  if (dtype == Dtype::fp32 || dtype == Dtype::int32) cost /= sfp.fp32_rate;
  return static_cast<std::uint64_t>(std::ceil(vectors * cost)) + sfp.pipeline_cycles;
}

}  // namespace dfsim
