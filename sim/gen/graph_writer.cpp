// OpGraphWriter: tensors and ops in the order they are declared.
#include "sim/gen/graph_writer.h"

#include "sim/graph/op_shapes.h"

#include <stdexcept>

namespace dfsim {

OpGraphWriter::OpGraphWriter(std::string name, std::string description)
    : name_(std::move(name)), description_(std::move(description)) {}

void OpGraphWriter::declare(const std::string& name, const Shape& shape, Dtype dtype) {
  if (!known_.emplace(name, std::make_pair(shape, dtype)).second)
    throw std::logic_error("OpGraphWriter: tensor \"" + name + "\" declared twice");
  OJson t = {{"shape", shape}, {"dtype", std::string(dtype_name(dtype))}};
  tensors_[name] = std::move(t);
}

std::string OpGraphWriter::input(const std::string& name, const Shape& shape, Dtype dtype) {
  declare(name, shape, dtype);
  inputs_.push_back(name);
  return name;
}

std::string OpGraphWriter::op(const std::string& op, const std::vector<std::string>& inputs, const std::string& out,
                              const Shape& shape, Dtype dtype, OJson attrs) {
  for (const auto& in : inputs)
    if (!known_.count(in)) throw std::logic_error("OpGraphWriter: op " + op + " reads undeclared \"" + in + "\"");
  declare(out, shape, dtype);
  OJson o = {{"op", op}, {"inputs", inputs}, {"outputs", OJson::array({out})}};
  if (!attrs.is_null() && !attrs.empty()) o["attrs"] = std::move(attrs);
  ops_.push_back(std::move(o));
  return out;
}

void OpGraphWriter::output(const std::string& name) { outputs_.push_back(name); }

void OpGraphWriter::set_compile(const std::string& key, OJson value) { compile_[key] = std::move(value); }

const Shape& OpGraphWriter::shape(const std::string& tensor) const { return known_.at(tensor).first; }
Dtype OpGraphWriter::dtype(const std::string& tensor) const { return known_.at(tensor).second; }

std::string OpGraphWriter::dump() const {
  // Version 2 only for what version 1 lacks: several cards, ops between cards.
  bool v2 = compile_.contains("cards");
  for (const auto& o : ops_) v2 = v2 || crosses_cards(find_op_info(o["op"].get<std::string>())->kind);
  OJson j = {{"format", "dfsim.ops"}, {"version", v2 ? kOpGraphVersion : 1}, {"name", name_}};
  if (!description_.empty()) j["description"] = description_;
  if (!model_.is_null()) j["model"] = model_;
  j["tensors"] = tensors_;
  j["inputs"] = inputs_;
  j["outputs"] = outputs_;
  j["ops"] = ops_;
  if (!compile_.empty()) j["compile"] = compile_;
  return j.dump(1) + "\n";
}

}  // namespace dfsim
