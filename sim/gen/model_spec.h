#pragma once
// A model's hyperparameters ("format": "dfsim.model", v1): what `dfsim gen` needs to write the
// op graph of one forward step (docs/workloads.md).
#include <string>
#include <vector>

#include "sim/common/dtype.h"
#include "sim/common/json_io.h"

namespace dfsim {

inline constexpr int kModelSpecVersion = 1;

// Decoder-only LLM (Llama, Granite) or bidirectional encoder (BERT / XLM-RoBERTa family).
enum class ModelArch { decoder, encoder };

// Hyperparameters of one model, as its published config gives them.
struct ModelSpec {
  std::string name, source, file;
  ModelArch arch = ModelArch::decoder;
  std::int64_t hidden = 0;          // hidden_size
  std::int64_t layers = 0;          // num_hidden_layers
  std::int64_t heads = 0;           // num_attention_heads
  std::int64_t kv_heads = 0;        // num_key_value_heads (GQA); = heads without GQA
  std::int64_t head_dim = 0;        // hidden / heads unless given
  std::int64_t intermediate = 0;    // MLP inner size
  std::int64_t vocab = 0;           // vocab_size
  std::int64_t max_positions = 0;   // max_position_embeddings
  std::int64_t type_vocab = 0;      // encoders: token type embeddings (0: none)
  std::string norm = "rmsnorm";     // rmsnorm | layernorm
  double norm_eps = 1e-5;
  std::string activation = "silu";  // silu (gated MLP: SwiGLU) | gelu (plain MLP)
  bool gated_mlp = true;            // gate and up projections (SwiGLU) or one up projection
  bool attention_bias = false, mlp_bias = false;
  bool tie_embeddings = false;      // the LM head reuses the embedding table
  double rope_theta = 10000.0;      // decoders: rotary embeddings
  Dtype dtype = Dtype::fp16;        // the checkpoint's weights ("dtype": fp16, bf16 as fp16, fp8)
  std::string pooling = "cls";      // encoders: cls | mean | none
  bool pooler = false;              // encoders: a dense + tanh layer after pooling
  // Granite's scalings (1 = absent): embedding output, attention scores, residual branches,
  // and the logits (divided by it).
  double embedding_multiplier = 1, attention_multiplier = 0, residual_multiplier = 1, logits_scaling = 1;

  std::uint64_t parameters() const;  // weights of the whole model, in elements
};

ModelSpec read_model_spec(const Json& j, const std::string& file);
ModelSpec load_model_spec(const std::string& path);
// A model named by a path (contains '/' or ends in .json) or by its name in `models_dir`
// (`<name>.json`). An unknown name lists the models there.
ModelSpec find_model_spec(const std::string& name_or_path, const std::string& models_dir);
// Whether `name_or_path` names a model file (contains '/' or ends in .json) rather than a model.
bool is_model_path(const std::string& name_or_path);
// The file find_model_spec reads (a path as given, unchecked; a name must exist in models_dir).
std::string find_model_file(const std::string& name_or_path, const std::string& models_dir);
std::vector<std::string> list_models(const std::string& models_dir);

}  // namespace dfsim
