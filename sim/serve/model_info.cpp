#include "sim/serve/model_info.h"

#include <filesystem>

#include "sim/app/cli.h"
#include "sim/common/error.h"
#include "sim/common/json_io.h"

namespace dfsim::serve {

std::int64_t ModelInfo::parameters() const {
  std::int64_t q = static_cast<std::int64_t>(heads) * head_dim, kv = static_cast<std::int64_t>(kv_heads) * head_dim;
  std::int64_t per_layer = hidden * q + 2 * hidden * kv + q * hidden  // Q, K, V, O projections
                           + 3 * hidden * intermediate                // gate, up, down
                           + 2 * hidden;                              // two RMSNorm weights
  return vocab * hidden * (tie_embeddings ? 1 : 2) + layers * per_layer + hidden;
}

ModelInfo load_model_info(const std::string& model) {
  std::string file = model;
  if (!std::filesystem::exists(file) && model.find('/') == std::string::npos &&
      model.find(".json") == std::string::npos)
    file = default_workloads_dir() + "/models/" + model + ".json";
  if (!std::filesystem::exists(file))
    throw InputError(model, "", "no such model file (expected a path, or a name in workloads/models/)");
  Json j = load_json_file(file);
  JsonView v(j, file);
  v.expect_object();
  if (v.get_string("format", "") != "dfsim.model") v.fail_at("format", "expected \"dfsim.model\"");
  if (v.get_int("version", 0) != 1) v.fail_at("version", "expected 1");
  ModelInfo m;
  m.file = file;
  m.name = v.get_string("name", std::filesystem::path(file).stem().string());
  m.hidden = v.at("hidden_size").as_int(1, 1 << 20);
  m.layers = static_cast<int>(v.at("num_layers").as_int(1, 10000));
  m.heads = static_cast<int>(v.at("num_heads").as_int(1, 10000));
  m.kv_heads = static_cast<int>(v.at("num_kv_heads").as_int(1, m.heads));
  if (m.heads % m.kv_heads) v.fail_at("num_kv_heads", "must divide num_heads (grouped-query attention)");
  m.head_dim = static_cast<int>(v.get_int("head_dim", m.hidden / m.heads, 1, 1 << 16));
  m.intermediate = v.at("intermediate_size").as_int(1, 1 << 24);
  m.vocab = v.at("vocab_size").as_int(1, 1 << 24);
  m.max_position = v.at("max_position_embeddings").as_int(1, 1 << 24);
  m.tie_embeddings = v.get_bool("tie_word_embeddings", false);
  std::string dtype = v.get_string("dtype", "fp16");
  if (dtype == "fp16" || dtype == "bf16") m.dtype_bytes = 2;
  else if (dtype == "fp8") m.dtype_bytes = 1;
  else v.fail_at("dtype", "expected fp16, bf16 or fp8");
  return m;
}

}  // namespace dfsim::serve
