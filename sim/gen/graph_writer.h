#pragma once
// Writes an op graph ("dfsim.ops" JSON) op by op, declaring every tensor with its shape, so
// that generators (`dfsim gen`) read like the model they describe.
#include <map>
#include <string>
#include <vector>

#include "sim/common/dtype.h"
#include "sim/common/json_io.h"
#include "sim/graph/op_graph.h"

namespace dfsim {

using OJson = nlohmann::ordered_json;  // keeps keys in insertion order

// Accumulates tensors and ops in order; names must be unique (a repeated name is a bug).
class OpGraphWriter {
 public:
  OpGraphWriter(std::string name, std::string description);

  // A graph input (weights, caches, token ids: present before the run).
  std::string input(const std::string& name, const Shape& shape, Dtype dtype);
  // One op producing `out`; returns `out`.
  std::string op(const std::string& op, const std::vector<std::string>& inputs, const std::string& out,
                 const Shape& shape, Dtype dtype, OJson attrs = OJson());
  void output(const std::string& name);
  void set_compile(const std::string& key, OJson value);

  const Shape& shape(const std::string& tensor) const;
  Dtype dtype(const std::string& tensor) const;
  std::size_t op_count() const { return ops_.size(); }
  // The graph as JSON text, keys in a reading order (format, name, tensors, inputs, outputs, ops).
  std::string dump() const;

 private:
  void declare(const std::string& name, const Shape& shape, Dtype dtype);
  std::string name_, description_;
  OJson tensors_ = OJson::object(), ops_ = OJson::array(), inputs_ = OJson::array(), outputs_ = OJson::array();
  OJson compile_ = OJson::object();
  std::map<std::string, std::pair<Shape, Dtype>> known_;
};

}  // namespace dfsim
