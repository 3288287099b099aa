#pragma once
// Off-chip memory as the DMA engines see it, and the registry that builds a model by the
// name given in `memory.impl`.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "sim/common/time.h"
#include "sim/config/chip_config.h"
#include "sim/stats/recorder.h"

namespace dfsim {

// Whoever sends memory requests: told when each completes.
class MemClient {
 public:
  virtual ~MemClient() = default;
  // Request `tag` completes at `t` (called now or later, never with t < the issue time).
  virtual void mem_done(std::uint64_t tag, Tick t) = 0;
};

// One burst to or from off-chip memory.
struct MemRequest {
  std::uint64_t addr = 0;
  std::uint32_t bytes = 0;
  bool write = false;
  Tick issued = 0;               // when it reaches the controller
  MemClient* client = nullptr;   // told of the completion
  std::uint64_t tag = 0;         // the client's reference
};

// Per-channel and total traffic counters.
struct MemStats {
  std::uint64_t bytes_read = 0, bytes_written = 0;
  std::uint64_t reads = 0, writes = 0;
  std::uint64_t turnarounds = 0;        // read<->write bus switches
  // Row-buffer and controller figures of models with banks ("lpddr5"; 0 elsewhere).
  std::uint64_t row_hits = 0;           // column accesses to an open row
  std::uint64_t row_misses = 0;         // activations of a bank with no open row
  std::uint64_t row_conflicts = 0;      // activations that first closed another row
  std::uint64_t refreshes = 0;
  std::uint64_t max_queue = 0;          // most requests waiting at the controller at once
};

// Interface of an off-chip memory model.
class IMemory : public sc_core::sc_module {
 public:
  using sc_core::sc_module::sc_module;
  virtual ~IMemory() = default;
  // Own parameters, then recorder tracks.
  virtual void init(const ChipConfig& cfg, Recorder& rec) = 0;
  // Accepts a request; calls req.client->mem_done(req.tag, completion time), now or later.
  virtual void send(MemRequest req) = 0;
  virtual int channel_of(std::uint64_t addr) const = 0;
  virtual int channels() const = 0;
  virtual const MemStats& stats() const = 0;
  virtual std::vector<MemStats> channel_stats() const = 0;
  // True when send() tells the completion at once, for a time still to come: the DMA then
  // books the ring and LX legs of a burst ahead, out of time order across cores.
  virtual bool tells_completion_at_send() const { return false; }

  // Before init: the recorder series "off-chip GB/s" that count_bytes feeds.
  void attach(Recorder& rec) {
    rec_ = &rec;
    series_ = rec.add_series("memory", "off-chip GB/s");
  }

 protected:
  // Bytes moved, by completion time, for the bandwidth counter (nothing if no recorder is
  // attached, e.g. a model tested on its own).
  void count_bytes(Tick t, std::uint64_t bytes) {
    if (rec_) rec_->add(series_, t, bytes);
  }

 private:
  Recorder* rec_ = nullptr;
  int series_ = -1;
};

// Name -> factory. Implementations register themselves with DFSIM_REGISTER_MEMORY.
class MemoryRegistry {
 public:
  using Factory = std::function<IMemory*(sc_core::sc_module_name)>;
  static std::map<std::string, Factory>& table();
  static bool add(const std::string& name, Factory f);
  static IMemory* create(const std::string& name, sc_core::sc_module_name inst);
  static std::vector<std::string> names();
};

#define DFSIM_REGISTER_MEMORY(Class, Name) \
  static const bool dfsim_registered_memory_##Class = ::dfsim::MemoryRegistry::add( \
      Name, [](sc_core::sc_module_name n) -> ::dfsim::IMemory* { return new Class(n); })

}  // namespace dfsim
