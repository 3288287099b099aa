#pragma once
// The lpddr5 controller's queues of request pieces: a ring buffer with insertion by time from
// the back and removal from anywhere (moving the shorter side), so neither arrivals,
// admission nor service copy whole queues or touch the heap.
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

// One direction's pieces at a channel: the controller queue (the oldest `size()` pieces,
// in the order admitted) followed by the pieces not yet admitted (in arrival order). Admitting
// moves the boundary, not the piece; arrivals are placed by time among the waiting ones.
class PieceQueue {
 public:
  // The controller queue.
  bool empty() const { return queued_ == 0; }
  std::size_t size() const { return queued_; }
  const QueuedPiece& operator[](std::size_t i) const { return buf_[(head_ + i) & mask_]; }
  // The pieces not yet admitted.
  bool arriving() const { return tail_ - head_ > queued_; }
  const QueuedPiece& first_arriving() const { return (*this)[queued_]; }
  void admit() { ++queued_; }
  // Among the waiting pieces in time order, after every piece of the same time (first come,
  // first served). A new piece is usually among the latest (senders book a short look-ahead):
  // scanned from the back.
  void insert_by_time(const QueuedPiece& p) {
    if (tail_ - head_ == buf_.size()) grow();
    std::size_t at = tail_++;
    const std::size_t first = head_ + queued_;
    for (; at != first && buf_[(at - 1) & mask_].arrival > p.arrival; --at) buf_[at & mask_] = buf_[(at - 1) & mask_];
    buf_[at & mask_] = p;
  }
  // Removes the i-th oldest of the controller queue, keeping the order of the rest.
  void erase(std::size_t i) {
    --queued_;
    if (i < (tail_ - head_) / 2) {
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
  std::size_t queued_ = 0;        // how many of the oldest are in the controller queue
};

}  // namespace dfsim
