#pragma once
// LX scratchpad of one core: capacity accounting (reserve / release with waiters woken on
// release) and the read and write ports that DMA and the compute units stream through.
#include <cstdint>
#include <systemc>
#include <vector>

#include "models/common/resource.h"
#include "sim/config/chip_config.h"

namespace dfsim {

class TaskUnit;

class LxScratchpad : public sc_core::sc_module {
 public:
  LxScratchpad(sc_core::sc_module_name n, const ChipConfig& cfg, Recorder& rec, int core);

  bool try_reserve(std::uint64_t bytes);
  void release(std::uint64_t bytes);
  void add_waiter(TaskUnit* u);        // woken on the next release or wake_waiters()
  void wake_waiters();                 // space or the allocation turn may have changed

  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t used() const { return used_; }
  std::uint64_t free() const { return capacity_ - used_; }
  std::uint64_t peak() const { return peak_; }

  // Port occupancy for `bytes` (core clock, rounded up to whole cycles).
  Tick read_time(std::uint64_t bytes) const;
  Tick write_time(std::uint64_t bytes) const;
  Resource& read_port() { return rd_; }
  Resource& write_port() { return wr_; }
  std::uint64_t bytes_read = 0, bytes_written = 0;

 private:
  void publish();
  ClockDomain clk_;
  std::uint64_t capacity_, used_ = 0, peak_ = 0;
  int rd_bpc_, wr_bpc_;
  Resource rd_, wr_;
  Recorder& rec_;
  int counter_;
  std::vector<TaskUnit*> waiters_;
};

}  // namespace dfsim
