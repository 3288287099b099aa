// Reader of an op graph's "model" object (docs/op-graph-format.md).
#include "sim/graph/op_graph.h"

#include "sim/common/names.h"

namespace dfsim {

ModelStep read_model_step(const JsonView& v) {
  v.only_keys({"name", "phase", "batch", "tokens", "context", "layers", "model_layers", "weight_bytes"});
  ModelStep m;
  m.name = read_name(v.at("name"));
  m.phase = v.at("phase").as_string();
  if (m.phase != "decode" && m.phase != "prefill") v.at("phase").fail("expected \"decode\" or \"prefill\", got \"" + m.phase + "\"");
  const std::int64_t big = std::int64_t(1) << 40;
  m.batch = v.at("batch").as_int(1, big);
  m.tokens = m.decode() ? v.get_int("tokens", 1, 1, 1) : v.at("tokens").as_int(1, big);
  m.context = v.get_int("context", 0, 0, big);
  m.layers = v.get_int("layers", 0, 0, big);
  m.model_layers = v.get_int("model_layers", m.layers, m.layers, big);
  if (v.has("weight_bytes")) m.weight_bytes = v.at("weight_bytes").as_uint();
  return m;
}

Json model_step_json(const ModelStep& m) {
  Json j = {{"name", m.name}, {"phase", m.phase}, {"batch", m.batch}, {"tokens", m.tokens}, {"context", m.context},
            {"layers", m.layers}, {"model_layers", m.model_layers}, {"weight_bytes", m.weight_bytes}};
  return j;
}

}  // namespace dfsim
