#pragma once
// Typed hardware and simulation parameters of one chip, resolved from a config file.
// Every field here has a registered parameter (path, unit, default, range, description)
// in sim/config/param_registry.cpp; `dfsim info --params` lists them. The initialisers below
// are the registered defaults (the registry reads them), so they are the one source of truth.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/common/dtype.h"
#include "sim/common/json_io.h"

namespace dfsim {

enum class Dataflow { os, ws, is };  // output-, weight-, input-stationary

std::string_view dataflow_name(Dataflow d);
std::optional<Dataflow> dataflow_from_name(std::string_view s);

// The PT unit of one corelet: a systolic PE array.
struct PtConfig {
  int rows = 8;                        // PE rows of the systolic array
  int cols = 8;                        // PE columns
  // MAC ways per PE per cycle, per PT precision; a precision absent here is not supported by PT.
  std::map<Dtype, int> simd{{Dtype::fp16, 8}, {Dtype::fp8, 16}, {Dtype::int8, 16}, {Dtype::int4, 32}};
  Dataflow dataflow = Dataflow::ws;     // which operand stays in the PEs (docs/models.md, "PT")
  // Whether one LX read of the streamed operand feeds both corelets' arrays (a broadcast); if
  // not, each corelet reads its own copy through the shared LX read port.
  bool stream_broadcast = true;
  // > 0: folds do not overlap, and a fold streams at most this many steps (rows of the streamed
  // operand in ws) before its accumulators drain; each part pays its fill and drain. 0: folds
  // overlap back to back (double-buffered) and only the last pays them.
  int fold_stream_limit = 64;
};

// SFP function classes that have a cost in SfpConfig::cycles_per_vector.
inline constexpr const char* kSfpFunctionClasses[] = {"add", "fma",   "max", "exp",     "log",
                                                      "rsqrt", "div", "gelu", "convert", "reduce"};

// The SFP unit of one corelet: 1-D vector and special functions.
struct SfpConfig {
  int lanes = 64;                          // elements per cycle per corelet (fp16)
  int pipeline_cycles = 8;                 // latency from first input to first output
  // Per function class, cycles per `lanes` elements. Keys: kSfpFunctionClasses.
  std::map<std::string, double> cycles_per_vector{
      {"add", 1}, {"fma", 1}, {"max", 1}, {"reduce", 1}, {"convert", 1},
      {"exp", 2}, {"log", 2}, {"rsqrt", 2}, {"div", 2}, {"gelu", 4}};
  double fp32_rate = 0.5;                  // throughput factor when the op runs in fp32
  // Cycles per level of the cross-lane adder tree that a row reduction passes each vector of a
  // row through, one vector at a time (ceil(log2(lanes)) levels); 0: the tree is pipelined and
  // only each row's final vector pays it.
  int tree_level_cycles = 4;
};

// The LX scratchpad shared by a core's corelets.
struct LxConfig {
  std::uint64_t bytes = 2u << 20;          // physical SRAM per core
  std::uint64_t usable_bytes = 1589376;    // what programs may reserve
  int read_bytes_per_cycle = 256;          // port bandwidth, core clock
  int write_bytes_per_cycle = 256;
  // Order in which buffers get LX space: "program_order" (each core allocates its buffers in
  // the program's order, like a static allocator; no deadlock across cores) or "first_come"
  // (whichever writer fires first; can deadlock when cores share buffers).
  std::string allocation = "program_order";
};

// The DMA engine of one core (HBM <-> LX, in sticks).
struct DmaConfig {
  int stick_bytes = 128;
  int burst_sticks = 32;                   // max sticks per burst request
  int queues = 2;                          // 1: one queue for every transfer; 2: inbound + outbound
  int max_outstanding = 8;                 // requests in flight per queue
  int issue_cycles = 4;                    // core cycles to issue one request
  int stick_issue_cycles = 7;              // extra core cycles per stick of a request (word generation)
};

// One core: clock, corelets and their units.
struct CoreConfig {
  double clock_mhz = 1500;
  int corelets = 2;
  PtConfig pt;
  SfpConfig sfp;
  LxConfig lx;
  DmaConfig dma;
};

// Bank structure, address mapping, timing (memory-clock cycles) and controller policy of the
// "lpddr5" memory model. Defaults: LPDDR5-6400 datasheet-class values, 32-bit channel.
struct Lpddr5Config {
  int bank_groups = 4;                     // bank groups per channel
  int banks_per_group = 4;                 // banks per bank group
  int row_bytes = 4096;                    // row (page) size per channel
  std::uint64_t interleave_bytes = 512;    // channel interleave block (memory.interleave_bytes: "simple")
  int burst_length = 32;                   // beats per column access (BL32: 128 B on a 32-bit bus)
  std::string address_map = "RoCoBaBgCh"; // fields of the interleave-block index, MSB first
  bool bank_xor = true;                    // XOR low row bits into bank group and bank (hashing)
  bool channel_xor = true;                 // fold the address bits above the channel into it (hashing)
  int inline_ecc = 8;                      // one ECC column access per this many data columns (0: none)
  int trcd = 15;                           // ACT -> column command
  int trp = 15;                            // PRE -> ACT
  int tras = 34;                           // ACT -> PRE
  int tccd_s = 4;                          // column -> column, different bank group
  int tccd_l = 4;                          // column -> column, same bank group
  int trrd = 4;                            // ACT -> ACT, any bank
  int tfaw = 16;                           // window holding at most four ACTs
  int rl = 17;                             // read command -> first data
  int wl = 9;                              // write command -> first data
  int twtr = 14;                           // end of write data -> read command
  int trtw = 18;                           // read command -> write command
  int trefi = 3125;                        // refresh interval (all-bank)
  int trfc = 224;                          // refresh cycle time (all-bank)
  int frontend_cycles = 8;                 // controller + PHY latency added to every access
  int twr = 28;                            // write recovery: end of write data -> PRE, same bank
  int queue_depth = 32;                    // read and write queue entries the scheduler sees, each
  int write_high = 24;                     // write queue entries that start a write drain
  int write_low = 8;                       // a drain stops at this many entries
  int min_batch = 2;                       // requests served before the bus may turn while the other side waits
};

// Off-chip memory (LPDDR5 on Spyre) and its controllers.
struct MemoryConfig {
  std::string impl = "lpddr5";             // registered model name
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
  int ports = 2;                           // ports between the controllers and the ring (0: unlimited)
  int port_bytes_per_cycle = 54;           // per port per direction, core clock
  double port_request_ns = 7.5;            // least time a request holds its port (0: bytes only)
  std::string port_request_scope = "stick_layout";  // requests it applies to: all | stick_layout
  std::string hbm_layout = "row_major";    // how the compiler lays HBM tensors out: row_major | stick
  Lpddr5Config lpddr5;                     // used when impl = "lpddr5"
};

// The on-chip ring that links cores and memory controllers.
struct RingConfig {
  std::string impl = "ring";
  int bytes_per_cycle = 128;               // per direction per link, core clock
  int hop_cycles = 2;                      // latency per hop
  // The most cores one banded multicast of a shared operand tile reaches (matmul family,
  // attention K/V): a tile shared by more is loaded once per group of this many (the
  // compiler's lowerings and its matmul estimate); 0: no limit.
  int multicast_max_cores = 8;
  // The order a link serves the bursts booked on it: "arrival" (the order they reach it, whatever
  // the order the engines book them in), "booking" (the order they are booked: faster to
  // simulate, but a burst booked later for an earlier time waits behind everything booked), or
  // "auto": arrival under a memory model that tells completions at their time (lpddr5), booking
  // under one that tells them when sent (bandwidth, simple).
  std::string link_order = "auto";
};

// The PCIe fabric of a system of cards (models/pcie/): each card's Gen5 x16 link to its
// drawer's switch, and each switch's uplink to the host. Rates are per direction.
struct PcieConfig {
  double link_gbps = 63.0;                 // nominal per direction: 32 GT/s x 16 lanes x 128/130 / 8
  double uplink_gbps = 63.0;               // switch to host (root complex), per drawer
  double efficiency = 0.8;                 // placeholder: share of the nominal rate a DMA achieves
  double latency_ns = 1000;                // placeholder: per transfer (descriptor, switch, completion)
};

// Several cards: how many, how they sit in drawers, and their PCIe fabric.
struct SystemConfig {
  int cards = 1;                           // cards in the system
  int cards_per_drawer = 8;                // cards behind one PCIe switch (an I/O drawer)
  PcieConfig pcie;
  int drawers() const { return (cards + cards_per_drawer - 1) / cards_per_drawer; }
};

// Energy coefficients of the power model (sim/energy/, docs/energy.md) and the card's power
// budget. Defaults are estimates from published figures (docs/calibration.md, "Energy").
struct EnergyConfig {
  // PT energy per MAC, per operand precision (dtype name); fp32 operands run at one way per PE.
  std::map<std::string, double> pt_pj_per_mac{
      {"fp16", 0.5}, {"fp8", 0.25}, {"int8", 0.2}, {"int4", 0.1}, {"fp32", 2.0}};
  // SFP energy per fp16 element, per function class. Keys: kSfpFunctionClasses.
  std::map<std::string, double> sfp_pj_per_element{
      {"add", 0.8}, {"fma", 1.0}, {"max", 0.6}, {"reduce", 0.8}, {"convert", 0.5},
      {"exp", 2.0}, {"log", 2.0}, {"rsqrt", 2.0}, {"div", 2.0}, {"gelu", 4.0}};
  double sfp_fp32_factor = 2;              // an fp32 SFP element costs this many fp16 elements
  double lx_read_pj_per_byte = 1.0;        // LX SRAM read
  double lx_write_pj_per_byte = 1.2;       // LX SRAM write
  double dma_pj_per_byte = 0.5;            // DMA engine: descriptors, address generation, buffers
  double ring_pj_per_byte_hop = 1.0;       // one byte over one ring link
  double dram_read_pj_per_byte = 24;       // LPDDR5 read: array, column and I/O
  double dram_write_pj_per_byte = 26;      // LPDDR5 write
  double dram_activate_nj = 1.0;           // one ACT + PRE of a channel
  double dram_refresh_nj = 160;            // one all-bank refresh of a channel (all its dies)
  double pcie_pj_per_byte = 40;            // host / card-to-card link, per byte sent
  double core_static_w = 0.25;             // leakage and clocks of each core the program uses
  double card_static_w = 12;               // always-on: LPDDR5 background, PHYs, PCIe, board
  double power_budget_w = 75;              // card power budget (card.power_budget_w)
  double power_window_ns = 1e6;            // averaging window of the budget check (card.power_window_ns)
};

// Simulation options that are not hardware.
struct SimConfig {
  bool trace = true;                       // write trace.json
  double utilization_bucket_ns = 1000;     // utilization.csv bucket width
  double dma_lookahead_ns = 200;           // how far ahead a DMA engine may book its bursts
  double memory_lookahead_ns = 0;          // lpddr5: how far ahead a controller decides (0: exact)
  std::uint64_t trace_auto_instances = 1'000'000;  // default trace level drops to kernels past this (0: never)
};

// The whole card: every parameter, resolved and checked.
struct ChipConfig {
  std::string name;                        // from "name", else the file stem
  std::string file;                        // the file it was loaded from
  int cores = 32;                          // cores on the card
  double kernel_launch_ns = 0;             // a kernel's tasks fire no earlier than this after its first is ready (spyre.json: 1500)
  double loop_iteration_ns = 0;            // a coarse-tile loop iteration starts this long after the one before is done (spyre.json: 688)
  CoreConfig core;
  MemoryConfig memory;
  RingConfig ring;
  SystemConfig system;
  EnergyConfig energy;
  SimConfig sim;
  // The fully merged JSON: every registered parameter (defaults filled in), extends and --set
  // applied, "extends" and "$schema" removed. Loading it again gives the same config.
  Json resolved;

  // Derived figures.
  // Whether the PT multiplies in `d`: a precision with ways in core.pt.simd, or one the map does
  // not configure (fp32, int32: one way). A configurable one set to 0 ways is left out of the map.
  bool pt_supports(Dtype d) const;
  double pt_macs_per_cycle(Dtype d) const;      // per core, all corelets
  double peak_macs_per_ns(Dtype d) const;       // per core
  // The compute roofline of `macs` (MACs by the precision the PT runs them in) on cores x cards:
  // each precision's MACs at that precision's peak (ns); a precision the PT lacks counts 0.
  double compute_bound_ns(const std::map<Dtype, std::uint64_t>& macs, int cores, int cards = 1) const;
  double memory_peak_gbps() const;              // data_rate * bus width * channels
  double ring_gbps_per_direction() const;       // per link
};

// Loads a config file: comments, "extends" (relative to the file), then each "key.path=value"
// override in order (value parsed as JSON, else taken as a string), then checks every value
// and the relations between them. Throws InputError naming the file (or "--set") and the
// JSON path. docs/config.md describes the format.
ChipConfig load_chip_config(const std::string& file, const std::vector<std::string>& overrides = {});

}  // namespace dfsim
