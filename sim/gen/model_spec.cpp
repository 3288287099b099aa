// Reading and checking model hyperparameter files (dfsim.model v1).
#include "sim/gen/model_spec.h"

#include <algorithm>
#include <filesystem>

#include "sim/common/error.h"
#include "sim/common/names.h"

namespace dfsim {

namespace {

double get_number(const JsonView& v, std::string_view key, double dflt, double min, double max) {
  return v.has(key) ? v.at(key).as_number(min, max) : dflt;
}

std::string get_choice(const JsonView& v, std::string_view key, const std::string& dflt,
                       std::initializer_list<const char*> choices) {
  if (!v.has(key)) return dflt;
  std::string s = v.at(key).as_string();
  std::string list;
  for (const char* c : choices) {
    if (s == c) return s;
    list += (list.empty() ? "" : ", ") + std::string(c);
  }
  v.at(key).fail("expected one of " + list + ", got \"" + s + "\"");
}

}  // namespace

std::uint64_t ModelSpec::parameters() const {
  auto u = [](std::int64_t x) { return static_cast<std::uint64_t>(x); };
  std::uint64_t q = u(heads * head_dim), kv = u(kv_heads * head_dim), d = u(hidden), f = u(intermediate);
  std::uint64_t attn = d * q + 2 * d * kv + q * d + (attention_bias ? q + 2 * kv + d : 0);
  std::uint64_t mlp = (gated_mlp ? 3 : 2) * d * f + (mlp_bias ? (gated_mlp ? 2 : 1) * f + d : 0);
  std::uint64_t norms = (norm == "layernorm" ? 4 : 2) * d;
  std::uint64_t per_layer = attn + mlp + norms;
  std::uint64_t embed = u(vocab) * d + (arch == ModelArch::encoder ? u(max_positions + type_vocab) * d : 0);
  std::uint64_t head = arch == ModelArch::decoder ? (tie_embeddings ? 0 : u(vocab) * d) : (pooler ? d * d + d : 0);
  std::uint64_t final_norm = arch == ModelArch::decoder ? d : 2 * d;  // encoders: the embedding LayerNorm
  return embed + u(layers) * per_layer + final_norm + head;
}

ModelSpec read_model_spec(const Json& j, const std::string& file) {
  JsonView v(j, file);
  v.expect_format("dfsim.model");
  v.only_keys({"format", "version", "name", "description", "source", "architecture", "hidden_size",
               "num_layers", "num_heads", "num_kv_heads", "head_dim", "intermediate_size", "vocab_size",
               "max_position_embeddings", "type_vocab_size", "norm", "norm_eps", "activation", "gated_mlp",
               "attention_bias", "mlp_bias", "tie_word_embeddings", "rope_theta", "pooling", "pooler",
               "embedding_multiplier", "attention_multiplier", "residual_multiplier", "logits_scaling", "dtype"});
  if (v.at("version").as_int() != kModelSpecVersion)
    v.at("version").fail("expected " + std::to_string(kModelSpecVersion));
  ModelSpec m;
  m.file = file;
  m.name = read_name(v.at("name"), /*path_safe=*/true);  // serve's default output directory
  m.source = v.at("source").as_string();
  m.arch = get_choice(v, "architecture", "decoder", {"decoder", "encoder"}) == "encoder" ? ModelArch::encoder
                                                                                         : ModelArch::decoder;
  const std::int64_t big = 1 << 24;  // no dimension of a real model comes near 16 M
  // Keys of the other architecture would be ignored: refused instead.
  const bool encoder = m.arch == ModelArch::encoder;
  static const std::vector<std::string> decoder_only = {"tie_word_embeddings", "rope_theta", "logits_scaling"},
                                        encoder_only = {"type_vocab_size", "pooling", "pooler"};
  for (const std::string& k : encoder ? decoder_only : encoder_only)
    if (v.has(k))
      v.at(k).fail(std::string("applies to ") + (encoder ? "decoders" : "encoders") + " only, and this model is " +
                   (encoder ? "an encoder" : "a decoder") + " (\"architecture\")");
  m.hidden = v.at("hidden_size").as_int(1, big);
  m.layers = v.at("num_layers").as_int(1, 4096);
  m.heads = v.at("num_heads").as_int(1, 65536);
  m.kv_heads = v.get_int("num_kv_heads", m.heads, 1, m.heads);
  if (m.heads % m.kv_heads)
    v.at("num_kv_heads").fail("expected a divisor of num_heads (" + std::to_string(m.heads) + ")");
  if (!v.has("head_dim") && m.hidden % m.heads)
    v.at("num_heads").fail("hidden_size " + std::to_string(m.hidden) + " is not a multiple of it; give head_dim");
  m.head_dim = v.get_int("head_dim", m.hidden / m.heads, 1, big);
  // Rotary embeddings rotate the two halves of a head (the decoders' rope): an even head_dim.
  if (m.arch == ModelArch::decoder && m.head_dim % 2)
    (v.has("head_dim") ? v.at("head_dim") : v.at("num_heads"))
        .fail("a decoder's head_dim must be even (rope rotates its two halves), got " + std::to_string(m.head_dim));
  m.intermediate = v.at("intermediate_size").as_int(1, big);
  m.vocab = v.at("vocab_size").as_int(1, big);
  m.max_positions = v.at("max_position_embeddings").as_int(1, big);
  m.type_vocab = v.get_int("type_vocab_size", 0, 0, big);
  m.norm = get_choice(v, "norm", m.arch == ModelArch::encoder ? "layernorm" : "rmsnorm", {"rmsnorm", "layernorm"});
  m.norm_eps = get_number(v, "norm_eps", 1e-5, 0, 1);
  m.activation = get_choice(v, "activation", m.arch == ModelArch::encoder ? "gelu" : "silu", {"silu", "gelu"});
  m.gated_mlp = v.get_bool("gated_mlp", m.activation == "silu");
  m.attention_bias = v.get_bool("attention_bias", m.arch == ModelArch::encoder);
  m.mlp_bias = v.get_bool("mlp_bias", m.arch == ModelArch::encoder);
  m.tie_embeddings = v.get_bool("tie_word_embeddings", false);
  m.rope_theta = get_number(v, "rope_theta", 10000.0, 1, 1e12);
  m.pooling = get_choice(v, "pooling", "cls", {"cls", "mean", "none"});
  m.pooler = v.get_bool("pooler", false);
  m.embedding_multiplier = get_number(v, "embedding_multiplier", 1, 0, 1e6);
  m.attention_multiplier = get_number(v, "attention_multiplier", 0, 0, 1e6);
  m.residual_multiplier = get_number(v, "residual_multiplier", 1, 0, 1e6);
  m.logits_scaling = get_number(v, "logits_scaling", 1, 1e-6, 1e6);
  // bf16 has fp16's size and the card's units treat them alike: dfsim models it as fp16.
  std::string dt = get_choice(v, "dtype", "fp16", {"fp16", "bf16", "fp8"});
  m.dtype = dt == "fp8" ? Dtype::fp8 : Dtype::fp16;
  return m;
}

ModelSpec load_model_spec(const std::string& path) { return read_model_spec(load_json_file(path), path); }

std::vector<std::string> list_models(const std::string& models_dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(models_dir, ec))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

ModelSpec find_model_spec(const std::string& name_or_path, const std::string& models_dir) {
  return load_model_spec(find_model_file(name_or_path, models_dir));
}

bool is_model_path(const std::string& name_or_path) {
  return name_or_path.find('/') != std::string::npos || (name_or_path.size() > 5 && name_or_path.ends_with(".json"));
}

std::string find_model_file(const std::string& name_or_path, const std::string& models_dir) {
  if (is_model_path(name_or_path)) return name_or_path;
  std::string path = models_dir + "/" + name_or_path + ".json";
  if (std::filesystem::is_regular_file(path)) return path;
  std::vector<std::string> names = list_models(models_dir);
  std::string hint = closest_match(name_or_path, names);
  if (hint.empty()) {  // a typo of the family ("lama") is far from the whole name ("llama-3.1-8b")
    std::vector<std::string> families;
    for (const auto& n : names) families.push_back(n.substr(0, n.find('-')));
    std::string family = closest_match(name_or_path, families);
    for (std::size_t i = 0; i < names.size() && hint.empty(); ++i)
      if (!family.empty() && families[i] == family) hint = names[i];
  }
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw InputError(name_or_path, "",
                   "unknown model" + (hint.empty() ? std::string() : " (did you mean \"" + hint + "\"?)") +
                       "; the models in " + models_dir + " are: " + list +
                       " (or give the path of a dfsim.model file)");
}

}  // namespace dfsim
