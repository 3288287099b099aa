#pragma once
// The lpddr5 controller's queues of request pieces: a ring buffer in arrival order with
// insertion by time from the back and removal from anywhere (moving the shorter side), so
// neither arrivals nor service copy whole queues or touch the heap.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/common/time.h"

namespace dfsim {

// A piece of a request, in one row of one bank of one channel: what FR-FCFS looks at and
// what serving it needs (32 bytes, moved whole between the queues).
struct QueuedPiece {
  Tick arrival = 0;
  std::uint64_t row = 0;
  std::uint32_t req = 0;      // index of the parent request
  std::uint32_t bytes = 0;
  std::uint32_t columns = 0;     // column accesses, inline ECC included
  std::uint16_t bank = 0;        // flat index bank_group * banks_per_group + b (at most 64 x 64)
  std::uint16_t bank_group = 0;
};

class PieceQueue {
 public:
  bool empty() const { return head_ == tail_; }
  std::size_t size() const { return tail_ - head_; }
  const QueuedPiece& operator[](std::size_t i) const { return buf_[(head_ + i) & mask_]; }
  const QueuedPiece& front() const { return (*this)[0]; }
  void pop_front() { ++head_; }
  QueuedPiece& back() { return buf_[(tail_ - 1) & mask_]; }
  void push_back(const QueuedPiece& p) {
    if (size() == buf_.size()) grow();
    buf_[tail_++ & mask_] = p;
  }
  // In time order, after every piece of the same time (first come, first served). A new
  // piece is usually among the latest (senders book a short look-ahead): scanned from the back.
  void insert_by_time(const QueuedPiece& p) {
    if (size() == buf_.size()) grow();
    std::size_t at = tail_++;
    for (; at != head_ && buf_[(at - 1) & mask_].arrival > p.arrival; --at) buf_[at & mask_] = buf_[(at - 1) & mask_];
    buf_[at & mask_] = p;
  }
  // Removes the i-th oldest, keeping the order of the rest.
  void erase(std::size_t i) {
    if (i < size() / 2) {
      for (std::size_t k = head_ + i; k != head_; --k) buf_[k & mask_] = buf_[(k - 1) & mask_];
      ++head_;
    } else {
      for (std::size_t k = head_ + i; k + 1 != tail_; ++k) buf_[k & mask_] = buf_[(k + 1) & mask_];
      --tail_;
    }
  }

 private:
  void grow() {  // twice the size, oldest first
    std::vector<QueuedPiece> b(std::max<std::size_t>(16, 2 * buf_.size()));
    for (std::size_t i = head_; i != tail_; ++i) b[i - head_] = buf_[i & mask_];
    tail_ -= head_;
    head_ = 0;
    buf_.swap(b);
    mask_ = buf_.size() - 1;
  }
  std::vector<QueuedPiece> buf_;  // a power-of-two size; positions are taken modulo it
  std::size_t head_ = 0, tail_ = 0, mask_ = 0;
};

}  // namespace dfsim
