#include "models/pcie/collective_schedule.h"

namespace dfsim {

namespace {

int ceil_log2(int n) {
  int l = 0;
  while ((1 << l) < n) ++l;
  return l;
}

// Ring: in every step each card sends one chunk to the next card of the group.
std::vector<CollectiveStep> ring(int n, std::uint64_t chunk, int steps, int reduce_steps) {
  std::vector<CollectiveStep> out(static_cast<std::size_t>(steps));
  for (int s = 0; s < steps; ++s)
    for (int p = 0; p < n; ++p) out[static_cast<std::size_t>(s)].push_back({p, (p + 1) % n, chunk, s < reduce_steps});
  return out;
}

// Binomial tree rooted at `root`: step k, every card at distance < 2^k from the root (in
// group order) sends everything to the card 2^k further.
std::vector<CollectiveStep> tree_broadcast(int n, std::uint64_t bytes, int root) {
  std::vector<CollectiveStep> out;
  for (int k = 0; (1 << k) < n; ++k) {
    CollectiveStep st;
    for (int r = 0; r < (1 << k) && r + (1 << k) < n; ++r) st.push_back({(root + r) % n, (root + r + (1 << k)) % n, bytes, false});
    out.push_back(st);
  }
  return out;
}

}  // namespace

std::string collective_unsupported(const std::string& op, const std::string& algorithm, int group) {
  if (algorithm == "tree" && (op == "all_gather" || op == "reduce_scatter") && (group & (group - 1)) != 0)
    return "a tree " + op + " (recursive doubling) needs a power-of-two group, got " + std::to_string(group) + " cards";
  return "";
}

std::vector<CollectiveStep> collective_steps(const std::string& op, const std::string& algorithm, int n,
                                             std::uint64_t bytes, int root) {
  if (n <= 1) return {};
  std::uint64_t chunk = (bytes + static_cast<std::uint64_t>(n) - 1) / static_cast<std::uint64_t>(n);
  bool tree = algorithm == "tree";
  if (op == "broadcast") {
    if (tree) return tree_broadcast(n, bytes, root);
    std::vector<CollectiveStep> out;  // a chain from the root around the ring
    for (int s = 0; s < n - 1; ++s) out.push_back({{(root + s) % n, (root + s + 1) % n, bytes, false}});
    return out;
  }
  if (!tree) {
    if (op == "all_reduce") return ring(n, chunk, 2 * (n - 1), n - 1);  // reduce-scatter, then all-gather
    if (op == "reduce_scatter") return ring(n, chunk, n - 1, n - 1);
    return ring(n, chunk, n - 1, 0);                                    // all_gather
  }
  std::vector<CollectiveStep> out;
  int levels = ceil_log2(n);
  if (op == "all_reduce") {
    // Reduce up a binary tree to position 0, then broadcast down it: each step moves it all.
    for (int k = 0; k < levels; ++k) {
      CollectiveStep st;
      for (int p = 0; p + (1 << k) < n; p += 1 << (k + 1)) st.push_back({p + (1 << k), p, bytes, true});
      out.push_back(st);
    }
    for (int k = levels - 1; k >= 0; --k) {
      CollectiveStep st;
      for (int p = 0; p + (1 << k) < n; p += 1 << (k + 1)) st.push_back({p, p + (1 << k), bytes, false});
      out.push_back(st);
    }
    return out;
  }
  // Power-of-two groups: partners p and p xor 2^k exchange; doubling for all_gather (chunk x
  // 2^k), halving for reduce_scatter (bytes / 2^(k+1), reduced).
  for (int k = 0; k < levels; ++k) {
    CollectiveStep st;
    int bit = op == "all_gather" ? k : levels - 1 - k;
    std::uint64_t b = op == "all_gather" ? chunk << k : bytes >> (k + 1);
    for (int p = 0; p < n; ++p) st.push_back({p, p ^ (1 << bit), b, op == "reduce_scatter"});
    out.push_back(st);
  }
  return out;
}

}  // namespace dfsim
