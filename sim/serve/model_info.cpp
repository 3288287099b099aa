#include "sim/serve/model_info.h"

#include "sim/app/cli.h"
#include "sim/common/error.h"

namespace dfsim::serve {

ModelInfo load_model_info(const std::string& model) {
  ModelInfo m;
  m.spec = find_model_spec(model, default_workloads_dir() + "/models");
  const ModelSpec& s = m.spec;
  if (s.arch != ModelArch::decoder)
    throw InputError(s.file, "/architecture", "serve simulates decoder models; " + s.name + " is an encoder (no decode steps)");
  m.file = s.file;
  m.name = s.name;
  m.layers = static_cast<int>(s.layers);
  m.heads = static_cast<int>(s.heads);
  m.kv_heads = static_cast<int>(s.kv_heads);
  m.head_dim = static_cast<int>(s.head_dim);
  m.hidden = s.hidden;
  m.intermediate = s.intermediate;
  m.vocab = s.vocab;
  m.max_position = s.max_positions;
  m.tie_embeddings = s.tie_embeddings;
  m.dtype_bytes = static_cast<int>(dtype_bits(s.dtype) / 8);
  return m;
}

}  // namespace dfsim::serve
