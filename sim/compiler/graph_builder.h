#pragma once
// Emission pass helper: appends buffers, kernels and tasks to a KernelGraph being built.
#include <cstdint>
#include <string>

#include "sim/graph/kernel_graph.h"

namespace dfsim {

// Thrown by GraphBuilder::add_task once the tasks added expand to more instances than its limit.
struct InstanceLimitExceeded {
  std::uint64_t limit;
};

// Builds a KernelGraph kernel by kernel; tasks go to the kernel begun last.
class GraphBuilder {
 public:
  GraphBuilder(std::string name, int cores);

  // Refuse (InstanceLimitExceeded) a task that takes the instances added beyond `limit` (0: no
  // limit), each task counting its cores times `cards`: a few bytes of coarse tiles can ask for
  // more tasks than host memory holds, and the compiler stops as soon as it knows.
  void limit_instances(std::uint64_t limit, int cards) {
    limit_ = limit;
    cards_ = cards < 1 ? 1 : static_cast<std::uint64_t>(cards);
  }

  int add_buffer(const std::string& name, Space space, std::uint64_t bytes, Dtype dtype, bool preloaded = false);
  // LX buffer `buffer` takes over the space of the earlier LX buffer `after` (Buffer::after).
  void set_after(int buffer, int after) { g_.buffers.at(static_cast<std::size_t>(buffer)).after = after; }
  void begin_kernel(const std::string& name);
  int add_task(Task t);  // sets t.kernel; returns its index

  const KernelGraph& graph() const { return g_; }
  KernelGraph take() { return std::move(g_); }

 private:
  KernelGraph g_;
  std::uint64_t limit_ = 0, cards_ = 1, instances_ = 0;
};

// An LX access of a whole buffer from offset 0 (how compute tasks see their tiles).
Access whole(int buffer, std::uint64_t bytes);

}  // namespace dfsim
