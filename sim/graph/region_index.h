#pragma once
// Overlap of strided byte regions, and an index of the writers of each buffer instance.
#include <cstdint>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/graph/kernel_graph.h"

namespace dfsim {

// First and one-past-last byte a region touches.
std::uint64_t region_begin(const Region& r);
std::uint64_t region_end(const Region& r);

// Whether two regions of the same buffer instance share a byte. Exact when both have the
// same stride or either is a single run; otherwise by bounding ranges (conservative).
bool regions_overlap(const Region& a, const Region& b);

// Written regions of every buffer instance, sorted by start, queried by overlap.
class RegionIndex {
 public:
  // One writer: instance `inst` writes `r` (its `writes[slot]`).
  struct Entry {
    Region r;
    int inst = -1;
    int slot = -1;
  };

  void add(const Region& r, int inst, int slot);
  void build();  // sort; call after the last add, before any query

  // Calls fn(entry) for every writer overlapping r.
  template <class Fn>
  void for_each_overlap(const Region& r, Fn&& fn) const {
    auto it = lists_.find({r.buffer, r.card, r.core});
    if (it == lists_.end()) return;
    const List& l = it->second;
    std::uint64_t qb = region_begin(r), qe = region_end(r);
    // Entries with start < qe, scanned backwards while some earlier entry may still reach qb.
    std::size_t hi = upper_bound_start(l, qe);
    for (std::size_t i = hi; i-- > 0;) {
      if (l.max_end[i] <= qb) break;
      const Entry& e = l.entries[i];
      if (region_end(e.r) > qb && regions_overlap(e.r, r)) fn(e);
    }
  }

 private:
  struct List {
    std::vector<Entry> entries;
    std::vector<std::uint64_t> max_end;  // prefix maximum of region_end over entries
  };
  static std::size_t upper_bound_start(const List& l, std::uint64_t qe);
  std::map<std::tuple<int, int, int>, List> lists_;  // by buffer, card, core
};

}  // namespace dfsim
