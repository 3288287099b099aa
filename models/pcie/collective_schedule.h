#pragma once
// The steps of a collective over a group of cards: which card sends how many bytes to which,
// and how many elements the receiver reduces, per step (ring or tree algorithm; docs/models.md,
// "PCIe and collectives"). Pure arithmetic: the fabric model times the steps.
#include <cstdint>
#include <string>
#include <vector>

namespace dfsim {

struct CollectiveTransfer {
  int src = 0, dst = 0;                // positions in the group
  std::uint64_t bytes = 0;
  bool reduce = false;                 // the receiver adds what it received to its own data
};
using CollectiveStep = std::vector<CollectiveTransfer>;

// `op`: all_reduce, all_gather, reduce_scatter or broadcast; `algorithm`: "tree", or the ring
// for anything else ("" included: a task that names none);
// `bytes`: the full tensor (all_reduce, broadcast), the gathered output (all_gather) or the
// scattered input (reduce_scatter); `root`: the broadcasting position.
std::vector<CollectiveStep> collective_steps(const std::string& op, const std::string& algorithm, int group,
                                             std::uint64_t bytes, int root = 0);

// Why `algorithm` cannot run `op` over `group` cards ("" if it can): tree all_gather and
// reduce_scatter (recursive doubling / halving) need a power-of-two group.
std::string collective_unsupported(const std::string& op, const std::string& algorithm, int group);

}  // namespace dfsim
