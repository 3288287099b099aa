#pragma once
// Typed hardware and simulation parameters of one chip, resolved from a config file.
// Every field here has a registered parameter (path, unit, default, range, description)
// in sim/config/params.cpp; `dfsim info --params` lists them.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/common/dtype.h"
#include "sim/common/json_io.h"

namespace dfsim {

enum class Dataflow { os, ws, is };  // output-, weight-, input-stationary

struct PtConfig {
  int rows = 8;                        // PE rows of the systolic array
  int cols = 8;                        // PE columns
  std::map<Dtype, int> simd;           // MAC ways per PE per cycle, per PT precision
  Dataflow dataflow = Dataflow::os;
};

struct SfpConfig {
  int lanes = 64;                          // elements per cycle per corelet (fp16)
  int pipeline_cycles = 8;                 // latency from first input to first output
  std::map<std::string, double> cycles_per_vector;  // per function class, cycles per `lanes` elements
  double fp32_rate = 0.5;                  // throughput factor when the op runs in fp32
};

struct LxConfig {
  std::uint64_t bytes = 2u << 20;          // physical SRAM per core
  std::uint64_t usable_bytes = 1589376;    // what programs may reserve
  int read_bytes_per_cycle = 256;          // port bandwidth, core clock
  int write_bytes_per_cycle = 256;
};

struct DmaConfig {
  int stick_bytes = 128;
  int burst_sticks = 32;                   // max sticks per burst request
  int max_outstanding = 8;                 // requests in flight per core
  int issue_cycles = 4;                    // core cycles to issue one request
};

struct CoreConfig {
  double clock_mhz = 1500;
  int corelets = 2;
  PtConfig pt;
  SfpConfig sfp;
  LxConfig lx;
  DmaConfig dma;
};

struct MemoryConfig {
  std::string impl = "simple";             // registered model name
  bool ideal = false;                      // transfers take no time, infinite bandwidth
  std::uint64_t capacity_bytes = 128ull << 30;
  int channels = 8;
  double clock_mhz = 800;                  // memory controller clock
  int data_rate_mtps = 6400;               // transfers per second per pin, millions
  int bus_bits = 32;                       // data bus width per channel
  int latency_cycles = 80;                 // unloaded access latency, memory cycles
  int turnaround_cycles = 16;              // bus read<->write switch, memory cycles
  std::uint64_t interleave_bytes = 4096;   // address interleave across channels
  std::vector<int> ring_stops;             // ring stop of each controller (empty: spread evenly)
};

struct RingConfig {
  std::string impl = "ring";
  int bytes_per_cycle = 128;               // per direction per link, core clock
  int hop_cycles = 2;                      // latency per hop
};

struct SimConfig {
  bool trace = true;                       // write trace.json
  double utilization_bucket_ns = 1000;     // utilization.csv bucket width
};

struct ChipConfig {
  std::string name;                        // from "name", else the file stem
  std::string file;                        // the file it was loaded from
  int cores = 32;                          // cores on the card
  CoreConfig core;
  MemoryConfig memory;
  RingConfig ring;
  SimConfig sim;
  Json resolved;                           // the fully merged JSON (extends and --set applied)

  // Derived figures.
  double pt_macs_per_cycle(Dtype d) const;      // per core, all corelets
  double peak_macs_per_ns(Dtype d) const;       // per core
  double memory_peak_gbps() const;              // data_rate * bus width * channels
  double ring_gbps_per_direction() const;       // per link
};

// Loads a config file: comments, "extends" (relative to the file), then each "key.path=value"
// override in order (value parsed as JSON, else taken as a string). Throws InputError.
ChipConfig load_chip_config(const std::string& file, const std::vector<std::string>& overrides = {});

}  // namespace dfsim
