#include "models/lx/lx_scratchpad.h"

#include <algorithm>

#include "models/common/task_unit.h"

namespace dfsim {

LxScratchpad::LxScratchpad(sc_core::sc_module_name n, const ChipConfig& cfg, Recorder& rec, int core)
    : sc_core::sc_module(n),
      clk_(cfg.core.clock_mhz),
      capacity_(cfg.core.lx.usable_bytes),
      rd_bpc_(cfg.core.lx.read_bytes_per_cycle),
      wr_bpc_(cfg.core.lx.write_bytes_per_cycle),
      rec_(rec),
      counter_(rec.add_counter("core " + std::to_string(core), "lx bytes", "bytes")) {}

bool LxScratchpad::try_reserve(std::uint64_t bytes) {
  if (bytes > capacity_ - used_) return false;
  used_ += bytes;
  peak_ = std::max(peak_, used_);
  publish();
  return true;
}

void LxScratchpad::release(std::uint64_t bytes) {
  used_ -= std::min(bytes, used_);
  publish();
  wake_waiters();
}

void LxScratchpad::wake_waiters() {
  std::vector<TaskUnit*> w;
  w.swap(waiters_);
  for (TaskUnit* u : w) u->wake();
}

void LxScratchpad::add_waiter(TaskUnit* u) {
  if (std::find(waiters_.begin(), waiters_.end(), u) == waiters_.end()) waiters_.push_back(u);
}

Tick LxScratchpad::read_time(std::uint64_t bytes) const {
  return clk_.cycles((bytes + rd_bpc_ - 1) / rd_bpc_);
}

Tick LxScratchpad::write_time(std::uint64_t bytes) const {
  return clk_.cycles((bytes + wr_bpc_ - 1) / wr_bpc_);
}

void LxScratchpad::publish() { rec_.counter(counter_, sim_now(), static_cast<double>(used_)); }

}  // namespace dfsim
