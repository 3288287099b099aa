#include "models/chip/card.h"

#include "models/common/task_host.h"

namespace dfsim {

Card::Card(sc_core::sc_module_name n, const ChipConfig& cfg, TaskHost& sched, Recorder& rec,
           const std::vector<std::uint64_t>& hbm_base)
    : sc_core::sc_module(n), mem_(MemoryRegistry::create(cfg.memory.impl, "memory")), ring_("ring") {
  mem_->attach(rec);
  mem_->init(cfg, rec);
  ring_.init(cfg, rec);
  lx_.resize(cfg.cores, nullptr);
  for (int i = 0; i < cfg.cores; ++i) {
    std::string name = "core" + std::to_string(i);
    cores_.push_back(std::make_unique<Core>(name.c_str(), i, cfg, sched, rec, *mem_, ring_, lx_, hbm_base));
    lx_[i] = &cores_.back()->lx();
    sched.set_lx(i, lx_[i]);
  }
}

System::System(sc_core::sc_module_name n, const ChipConfig& cfg, TaskHost& sched, Recorder& rec,
               const std::vector<std::uint64_t>& hbm_base)
    : sc_core::sc_module(n) {
  cards_.push_back(std::make_unique<Card>("card0", cfg, sched, rec, hbm_base));
}

}  // namespace dfsim
