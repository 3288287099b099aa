#pragma once
// Overlap of strided byte regions, and an index of the writers of each buffer instance.
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/graph/kernel_graph.h"

namespace dfsim {

// First and one-past-last byte a region touches.
std::uint64_t region_begin(const Region& r);
std::uint64_t region_end(const Region& r);

// Whether two regions of the same buffer instance share a byte. Exact, but for two patterns of
// different strides with more than 4096 rows of one inside the other's bounding range, which
// count as overlapping when their bounding ranges do (conservative).
bool regions_overlap(const Region& a, const Region& b);

// Written regions of every buffer instance, sorted by start, queried by overlap. One flat
// array for all buffer instances (no container per buffer instance); an entry holds a
// region's bounds and who writes it, not the region: the exact overlap test computes the
// region from the writer's template when the bounds meet.
class RegionIndex {
 public:
  // One writer: instance `inst` writes [begin, end) of buffer instance `key` (its
  // writes_of(...)[slot]). Added in (inst, slot) order, which build() keeps for equal starts.
  struct Entry {
    std::uint64_t key = 0;  // buffer, card, core (key_of)
    std::uint64_t begin = 0, end = 0;
    int inst = -1;
    int slot = -1;
  };

  // `instances`: those of `g` that the entries name (kept by reference).
  RegionIndex(const KernelGraph& g, const std::vector<TaskInstance>& instances) : g_(g), instances_(instances) {}

  void reserve(std::size_t entries) { entries_.reserve(entries); }
  void add(const Region& r, int inst, int slot);
  void build();  // sort; call after the last add, before any query
  std::size_t size() const { return entries_.size(); }
  // Entries the queries so far looked at: about 2 to 32 per entry on compiled graphs; writers
  // whose strided spans interleave without sharing bytes make it grow with their square.
  std::uint64_t visited() const { return visited_; }

  // Calls fn(entry) for every writer overlapping r.
  template <class Fn>
  void for_each_overlap(const Region& r, Fn&& fn) const {
    const std::uint64_t key = key_of(r);
    std::uint64_t qb = region_begin(r), qe = region_end(r);
    // The buffer instance's entries with start < qe, scanned backwards while some earlier
    // entry may still reach qb.
    auto [lo, hi] = starting_before(key, qe);
    for (std::size_t i = hi; i-- > lo;) {
      if (max_end_[i] <= qb) break;
      ++visited_;
      const Entry& e = entries_[i];
      if (e.end > qb && regions_overlap(region_of(e), r)) fn(e);
    }
  }

 private:
  // Buffer (bits 32-63), card (16-31), core + 1 (0-15; 0 for HBM).
  static std::uint64_t key_of(const Region& r) {
    return (static_cast<std::uint64_t>(r.buffer) << 32) | (static_cast<std::uint64_t>(r.card & 0xffff) << 16) |
           static_cast<std::uint64_t>((r.core + 1) & 0xffff);
  }
  // The key's entries that start before `end`: [its first entry, the first at or after end);
  // an empty range if the key has none.
  std::pair<std::size_t, std::size_t> starting_before(std::uint64_t key, std::uint64_t end) const;
  Region region_of(const Entry& e) const;

  const KernelGraph& g_;
  const std::vector<TaskInstance>& instances_;
  std::vector<Entry> entries_;          // by key, then begin, then (inst, slot)
  std::vector<std::uint64_t> max_end_;  // prefix maximum of end within each key's entries
  // The distinct keys in order and where each one's entries start (one more: the end), so a
  // query searches its key's entries only, not the whole array.
  std::vector<std::uint64_t> keys_;
  std::vector<std::size_t> key_first_;
  // Per buffer: the place in keys_ of the key last found for it. Expansion asks for one
  // template's instances in a row, core after core, so the next query of a buffer is usually
  // that key or the next one (the next core's): two comparisons instead of a binary search
  // over millions of keys. A cache only (not thread-safe): every answer is the same.
  mutable std::vector<std::size_t> hint_;
  mutable std::uint64_t visited_ = 0;
};

}  // namespace dfsim
