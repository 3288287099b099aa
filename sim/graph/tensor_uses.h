#pragma once
// Who reads and writes each tensor of an op graph, built once in linear time so that the
// compiler's passes answer "who else reads this?" without scanning every op (a scan per op
// made compiling a chain of n ops take time growing as n^2).
#include <vector>

#include "sim/graph/op_graph.h"

namespace dfsim {

// The readers and producer of every tensor, and each op's place in the execution order.
class TensorUses {
 public:
  explicit TensorUses(const OpGraph& g);
  // Ops reading tensor t, each once, in file order.
  const std::vector<int>& readers(int t) const { return readers_[static_cast<std::size_t>(t)]; }
  // The op writing tensor t, or -1 (a graph input).
  int producer(int t) const { return producer_[static_cast<std::size_t>(t)]; }
  bool is_input(int t) const { return input_[static_cast<std::size_t>(t)]; }
  bool is_output(int t) const { return output_[static_cast<std::size_t>(t)]; }
  // Position of op `op` in the graph's topological order.
  int position(int op) const { return position_[static_cast<std::size_t>(op)]; }
  // Whether an op other than `except` reads t, or t is a graph output: needed outside.
  bool read_elsewhere(int t, int except) const;

 private:
  std::vector<std::vector<int>> readers_;
  std::vector<int> producer_, position_;
  std::vector<bool> input_, output_;
};

}  // namespace dfsim
