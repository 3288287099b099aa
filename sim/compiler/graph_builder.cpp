// Emission pass helper (see graph_builder.h).
#include "sim/compiler/graph_builder.h"

namespace dfsim {

GraphBuilder::GraphBuilder(std::string name, int cores) {
  g_.name = std::move(name);
  g_.cores = cores;
}

int GraphBuilder::add_buffer(const std::string& name, Space space, std::uint64_t bytes, Dtype dtype, bool preloaded) {
  g_.buffers.push_back(Buffer{name, space, bytes, dtype, preloaded});
  return static_cast<int>(g_.buffers.size()) - 1;
}

void GraphBuilder::begin_kernel(const std::string& name) { g_.kernels.push_back(Kernel{name, {}}); }

int GraphBuilder::add_task(Task t) {
  instances_ += static_cast<std::uint64_t>(t.core_count) * (t.cards.empty() ? cards_ : t.cards.size());
  if (limit_ > 0 && instances_ > limit_) throw InstanceLimitExceeded{limit_};
  int idx = static_cast<int>(g_.tasks.size());
  t.kernel = static_cast<int>(g_.kernels.size()) - 1;
  g_.kernels.back().tasks.push_back(idx);
  g_.tasks.push_back(std::move(t));
  return idx;
}

Access whole(int buffer, std::uint64_t bytes) {
  Access a;
  a.buffer = buffer;
  a.bytes = bytes;
  return a;
}

}  // namespace dfsim
