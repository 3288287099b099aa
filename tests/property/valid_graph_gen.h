#pragma once
// A generator of VALID op graphs (dfsim.ops): random shapes, dtypes, chains and DAGs over the
// op set, compile options and forced matmul work divisions, for the property tests of test_valid_graphs.cpp. Each op
// family is one row of op_families() (valid_graph_gen.cpp): adding an op is one table entry.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace dfsim::property {

using Json = nlohmann::json;
using Shape = std::vector<std::int64_t>;

// The graph being built: tensors so far (the ones ops may consume are `live`).
struct GraphDraft {
  explicit GraphDraft(std::mt19937_64& r) : rng(r) {}
  std::mt19937_64& rng;
  Json tensors = Json::object(), ops = Json::array();
  std::vector<std::string> inputs;
  std::vector<std::string> live;  // produced or input tensors, in creation order
  std::vector<int> uses;          // per live tensor: how many ops read it
  int cores = 1;                  // the compile cores (forced work divisions must fit them)
  // Tensors the graph moves only in part (an embedding table's gathered rows, a KV cache's new
  // rows): their compulsory bytes, instead of their size.
  std::map<std::string, std::uint64_t> partial_bytes;
  // Tensors updated in place (a kv_write's cache): no op may read them, so none is picked.
  std::set<std::string> in_place;

  std::int64_t pick(std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); }
  Shape shape_of(const std::string& t) const { return tensors.at(t).at("shape").get<Shape>(); }
  std::string dtype_of(const std::string& t) const { return tensors.at(t).at("dtype").get<std::string>(); }
  // A live tensor (recent ones are likelier, so chains form), or "" if none has rank >= min_rank.
  std::string pick_live(std::size_t min_rank = 1, std::size_t max_rank = 8);
  std::string new_tensor(const Shape& s, const std::string& dtype, bool is_input);
  void add_op(const std::string& op, const std::vector<std::string>& in, const std::string& out, Json attrs = nullptr);
  Shape random_shape(std::size_t rank);  // small dims, the last a multiple of 64 or tiny
};

// One op family: its name, how often it is picked, and how it adds one op to a draft
// (false: it does not apply to the draft as it is, e.g. no 2-D tensor for matmul).
struct OpFamily {
  const char* name;
  int weight;
  bool (*add)(GraphDraft& d);
};
const std::vector<OpFamily>& op_families();

struct GeneratedGraph {
  Json graph;          // the op graph
  std::string config;  // configs/small.json or configs/spyre.json
  int cores = 1;
  std::uint64_t compulsory_bytes = 0;  // graph inputs read once + outputs written once
};

// Graph number `index` of the sequence of `seed`: the same pair always gives the same graph.
GeneratedGraph generate_graph(std::uint64_t seed, std::uint64_t index);

}  // namespace dfsim::property
