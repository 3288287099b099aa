#pragma once
// IdLists: one list of ids per index (dependencies, consumers), all in one array.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace dfsim {

// Lists of ints, one per index, stored as compressed rows: list i is ids_[start_[i],
// start_[i+1]). Two allocations in all instead of one vector per list (24 bytes of header
// and a heap block each); built list by list in index order, read-only after.
class IdLists {
 public:
  // A read-only view of one list.
  class Span {
   public:
    Span(const int* b, const int* e) : b_(b), e_(e) {}
    const int* begin() const { return b_; }
    const int* end() const { return e_; }
    std::size_t size() const { return static_cast<std::size_t>(e_ - b_); }
    bool empty() const { return b_ == e_; }
    int operator[](std::size_t i) const { return b_[i]; }
    std::vector<int> to_vector() const { return std::vector<int>(b_, e_); }

   private:
    const int* b_;
    const int* e_;
  };

  IdLists() : start_{0} {}

  std::size_t size() const { return start_.size() - 1; }  // lists
  std::size_t total() const { return ids_.size(); }       // ids over all lists
  Span operator[](std::size_t i) const { return Span(ids_.data() + start_[i], ids_.data() + start_[i + 1]); }
  // Position of list i's first id among all ids (index of per-id side arrays).
  std::size_t first(std::size_t i) const { return start_[i]; }
  // Heap bytes held.
  std::size_t bytes() const { return start_.capacity() * sizeof(std::uint32_t) + ids_.capacity() * sizeof(int); }

  // Building, list by list: push the ids of the list being built, then end it.
  void reserve(std::size_t lists, std::size_t ids) {
    start_.reserve(lists + 1);
    ids_.reserve(ids);
  }
  void push(int id) { ids_.push_back(id); }
  void end_list() {
    if (ids_.size() > std::numeric_limits<std::uint32_t>::max())
      throw std::length_error("more than 4 G ids in one IdLists (dependency edges of a graph)");
    start_.push_back(static_cast<std::uint32_t>(ids_.size()));
  }
  void shrink_to_fit() {
    start_.shrink_to_fit();
    ids_.shrink_to_fit();
  }

  // The inverse relation over `n` indices: list j holds every i whose list holds j, ascending.
  IdLists inverse(std::size_t n) const {
    std::vector<std::uint32_t> count(n + 1, 0);
    for (int id : ids_) ++count[static_cast<std::size_t>(id) + 1];
    for (std::size_t j = 0; j < n; ++j) count[j + 1] += count[j];
    IdLists inv;
    inv.start_ = count;
    inv.ids_.resize(ids_.size());
    for (std::size_t i = 0; i < size(); ++i)
      for (int id : (*this)[i]) inv.ids_[count[static_cast<std::size_t>(id)]++] = static_cast<int>(i);
    return inv;
  }

 private:
  std::vector<std::uint32_t> start_;
  std::vector<int> ids_;
};

}  // namespace dfsim
