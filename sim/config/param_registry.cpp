// The registration of every config parameter. Defaults are the initialisers in chip_config.h
// (read through each parameter's field accessor), so they cannot disagree with the struct.
#include <cmath>
#include <algorithm>

#include "sim/config/params.h"

namespace dfsim {

namespace {

// Numbers with an integral value are stored as JSON integers, so defaults print as "1500".
Json num(double v) {
  if (std::isfinite(v) && std::floor(v) == v && std::fabs(v) < 9e15) return static_cast<std::int64_t>(v);
  return v;
}

Json to_json(int v) { return v; }
Json to_json(std::uint64_t v) { return v; }
Json to_json(double v) { return num(v); }
Json to_json(bool v) { return v; }
Json to_json(const std::string& v) { return v; }
Json to_json(Dataflow v) { return std::string(dataflow_name(v)); }
Json to_json(const std::vector<int>& v) { return v; }
Json to_json(const std::map<Dtype, int>& m) {
  Json j = Json::object();
  for (const auto& [d, x] : m) j[std::string(dtype_name(d))] = x;
  return j;
}
Json to_json(const std::map<std::string, double>& m) {
  Json j = Json::object();
  for (const auto& [k, x] : m) j[k] = num(x);
  return j;
}

void from_json_value(const Json& j, int& v) { v = j.get<int>(); }
void from_json_value(const Json& j, std::uint64_t& v) { v = j.get<std::uint64_t>(); }
void from_json_value(const Json& j, double& v) { v = j.get<double>(); }
void from_json_value(const Json& j, bool& v) { v = j.get<bool>(); }
void from_json_value(const Json& j, std::string& v) { v = j.get<std::string>(); }
void from_json_value(const Json& j, Dataflow& v) { v = dataflow_from_name(j.get<std::string>()).value(); }
void from_json_value(const Json& j, std::vector<int>& v) { v = j.get<std::vector<int>>(); }
// A whole map value replaces the field; 0 ways means "not supported" and is left out.
void from_json_value(const Json& j, std::map<Dtype, int>& m) {
  m.clear();
  for (const auto& [k, x] : j.items())
    if (x.get<int>() > 0) m[dtype_from_name(k).value()] = x.get<int>();
}
void from_json_value(const Json& j, std::map<std::string, double>& m) {
  m.clear();
  for (const auto& [k, x] : j.items()) m[k] = x.get<double>();
}

template <class F>
Param make(std::string path, ParamType type, std::string unit, std::string description, F field) {
  Param p;
  p.path = std::move(path);
  p.type = type;
  p.unit = std::move(unit);
  p.description = std::move(description);
  p.get = [field](const ChipConfig& c) { return to_json(field(c)); };
  p.set = [field](ChipConfig& c, const Json& j) { from_json_value(j, field(c)); };
  return p;
}

Param ints(Param p, std::int64_t lo, std::int64_t hi = std::numeric_limits<std::int64_t>::max()) {
  p.int_min = lo;
  p.int_max = hi;
  return p;
}

Param nums(Param p, double lo, bool lo_open, double hi = std::numeric_limits<double>::infinity()) {
  p.num_min = lo;
  p.num_min_open = lo_open;
  p.num_max = hi;
  return p;
}

Param choices(Param p, std::vector<std::string> cs) {
  p.choices = std::move(cs);
  return p;
}

Param compile_time(Param p) {
  p.compile_time = true;
  return p;
}

#define DFSIM_FIELD(member) [](auto& c) -> auto& { return c.member; }

constexpr std::int64_t kBig = 1'000'000;  // upper bound for latencies in cycles

std::vector<Param> build() {
  using T = ParamType;
  std::vector<std::string> sfp_classes(std::begin(kSfpFunctionClasses), std::end(kSfpFunctionClasses));
  return {
      make("name", T::String, "", "config name shown in outputs; default the file stem; not inherited through extends",
           DFSIM_FIELD(name)),
      ints(make("card.cores", T::Int, "cores", "cores on the card", DFSIM_FIELD(cores)), 1, 1024),
      nums(make("card.kernel_launch_ns", T::Double, "ns",
                "launch of a kernel: its tasks on a card fire no earlier than this after the first of them is "
                "ready there (program fetch and the cores' start barrier); 0 here so that hand-built configs time "
                "one mechanism at a time, 1500 in configs/spyre.json",
                DFSIM_FIELD(kernel_launch_ns)), 0, false, 1e9),
      nums(make("card.loop_iteration_ns", T::Double, "ns",
                "start of a coarse-tile loop iteration: a buffer that takes over another's LX space (the next "
                "iteration's loads) gets it no earlier than this after that one is freed (the loop relaunching its "
                "body); 0 here so that hand-built configs time one mechanism at a time, 688 in configs/spyre.json",
                DFSIM_FIELD(loop_iteration_ns)), 0, false, 1e9),
      nums(make("card.power_budget_w", T::Double, "W",
                "card power budget: a run warns when its power averaged over card.power_window_ns exceeds it",
                DFSIM_FIELD(energy.power_budget_w)), 0, true, 1e6),
      nums(make("card.power_window_ns", T::Double, "ns", "averaging window of the power budget check (sliding)",
                DFSIM_FIELD(energy.power_window_ns)), 0, true, 1e12),
      // Rates have a floor, not just > 0: 1e-300 MHz overflowed the clock period into a wrong
      // (faster) result, 1e-9 MHz never finished.
      nums(make("core.clock_mhz", T::Double, "MHz", "core clock (PT, SFP, LX, DMA issue, ring)",
                DFSIM_FIELD(core.clock_mhz)), 1, false, 100000),
      ints(make("core.corelets", T::Int, "corelets", "corelets per core, sharing the core's LX",
                DFSIM_FIELD(core.corelets)), 1, 64),
      ints(make("core.pt.rows", T::Int, "PEs", "PE rows of each corelet's systolic array",
                DFSIM_FIELD(core.pt.rows)), 1, 4096),
      ints(make("core.pt.cols", T::Int, "PEs", "PE columns of each corelet's systolic array",
                DFSIM_FIELD(core.pt.cols)), 1, 4096),
      choices(ints(make("core.pt.simd", T::DtypeIntMap, "MACs/PE/cycle",
                        "SIMD ways per PE per PT precision; 0 = precision not supported by PT",
                        DFSIM_FIELD(core.pt.simd)), 0, 1024),
              {"fp16", "fp8", "int8", "int4"}),
      choices(make("core.pt.dataflow", T::String, "",
                   "systolic dataflow: output-, weight- or input-stationary", DFSIM_FIELD(core.pt.dataflow)),
              {"os", "ws", "is"}),
      make("core.pt.stream_broadcast", T::Bool, "",
           "one LX read of the streamed operand feeds both corelets' arrays (false: each corelet reads its own)",
           DFSIM_FIELD(core.pt.stream_broadcast)),
      ints(make("core.pt.fold_stream_limit", T::Int, "steps",
                "most steps a fold streams before its accumulators drain; folds then do not overlap, each "
                "part pays its fill and drain (0: folds overlap, only the last pays)",
                DFSIM_FIELD(core.pt.fold_stream_limit)), 0, kBig),
      ints(make("core.sfp.lanes", T::Int, "elements/cycle", "SFP vector width per corelet (fp16 elements)",
                DFSIM_FIELD(core.sfp.lanes)), 1, 65536),
      ints(make("core.sfp.pipeline_cycles", T::Int, "cycles", "SFP latency from first input to first output",
                DFSIM_FIELD(core.sfp.pipeline_cycles)), 0, kBig),
      choices(nums(make("core.sfp.cycles_per_vector", T::StringDoubleMap, "cycles",
                        "SFP cycles per `lanes` elements, per function class",
                        DFSIM_FIELD(core.sfp.cycles_per_vector)), 0, true, kBig),
              sfp_classes),
      nums(make("core.sfp.fp32_rate", T::Double, "", "SFP throughput factor when an op runs in fp32",
                DFSIM_FIELD(core.sfp.fp32_rate)), 0.01, false, 1),
      ints(make("core.sfp.tree_level_cycles", T::Int, "cycles",
                "cycles per level of the cross-lane adder tree a row reduction passes every vector through, "
                "one vector at a time (0: pipelined)",
                DFSIM_FIELD(core.sfp.tree_level_cycles)), 0, 1000),
      ints(make("core.lx.bytes", T::UInt64, "bytes", "physical LX scratchpad SRAM per core",
                DFSIM_FIELD(core.lx.bytes)), 1),
      ints(make("core.lx.usable_bytes", T::UInt64, "bytes", "LX bytes programs may reserve (<= core.lx.bytes)",
                DFSIM_FIELD(core.lx.usable_bytes)), 1),
      ints(make("core.lx.read_bytes_per_cycle", T::Int, "B/cycle", "LX read port bandwidth",
                DFSIM_FIELD(core.lx.read_bytes_per_cycle)), 1, 65536),
      ints(make("core.lx.write_bytes_per_cycle", T::Int, "B/cycle", "LX write port bandwidth",
                DFSIM_FIELD(core.lx.write_bytes_per_cycle)), 1, 65536),
      choices(make("core.lx.allocation", T::String, "",
                   "order in which buffers get LX space: in program order per core, or first come first served",
                   DFSIM_FIELD(core.lx.allocation)),
              {"program_order", "first_come"}),
      ints(make("core.dma.stick_bytes", T::Int, "bytes", "stick size: the unit of layout and transfer",
                DFSIM_FIELD(core.dma.stick_bytes)), 1, 65536),
      ints(make("core.dma.burst_sticks", T::Int, "sticks", "most sticks in one DMA burst request",
                DFSIM_FIELD(core.dma.burst_sticks)), 1, 65536),
      ints(make("core.dma.queues", T::Int, "queues",
                "DMA queues per core: 1 runs every transfer of the core in order on one engine; 2 gives "
                "transfers that read off-chip memory (HBM->LX, HBM->HBM) and transfers that read LX "
                "(LX->HBM, LX->LX) separate queues with their own request generator, running concurrently",
                DFSIM_FIELD(core.dma.queues)), 1, 2),
      ints(make("core.dma.max_outstanding", T::Int, "requests", "DMA requests in flight per DMA queue",
                DFSIM_FIELD(core.dma.max_outstanding)), 1, 65536),
      ints(make("core.dma.issue_cycles", T::Int, "cycles", "core cycles to issue one DMA request",
                DFSIM_FIELD(core.dma.issue_cycles)), 0, kBig),
      ints(make("core.dma.stick_issue_cycles", T::Int, "cycles",
                "extra core cycles per stick of a DMA request (the engine generates one 128 B word at a time)",
                DFSIM_FIELD(core.dma.stick_issue_cycles)), 0, kBig),
      choices(make("memory.impl", T::String, "", "off-chip memory model (registered name)", DFSIM_FIELD(memory.impl)),
              {"simple", "lpddr5", "bandwidth"}),
      make("memory.ideal", T::Bool, "", "ideal memory: transfers take no time, bandwidth is unlimited",
           DFSIM_FIELD(memory.ideal)),
      ints(make("memory.capacity_bytes", T::UInt64, "bytes", "off-chip memory capacity per card",
                DFSIM_FIELD(memory.capacity_bytes)), 1),
      ints(make("memory.channels", T::Int, "channels", "memory channels (one controller each)",
                DFSIM_FIELD(memory.channels)), 1, 1024),
      nums(make("memory.clock_mhz", T::Double, "MHz", "memory controller clock", DFSIM_FIELD(memory.clock_mhz)),
           1, false, 100000),
      ints(make("memory.data_rate_mtps", T::Int, "MT/s", "data rate per pin", DFSIM_FIELD(memory.data_rate_mtps)),
           1, kBig),
      ints(make("memory.bus_bits", T::Int, "bits", "data bus width per channel (a multiple of 8)",
                DFSIM_FIELD(memory.bus_bits)), 8, 1024),
      ints(make("memory.latency_cycles", T::Int, "memory cycles", "unloaded access latency",
                DFSIM_FIELD(memory.latency_cycles)), 0, kBig),
      ints(make("memory.turnaround_cycles", T::Int, "memory cycles", "bus read<->write switch penalty",
                DFSIM_FIELD(memory.turnaround_cycles)), 0, kBig),
      ints(make("memory.interleave_bytes", T::UInt64, "bytes",
                "address interleave across channels (a multiple of core.dma.stick_bytes)",
                DFSIM_FIELD(memory.interleave_bytes)), 1),
      ints(make("memory.ring_stops", T::IntList, "ring stop",
                "ring stop of each channel's controller, one per channel (< card.cores); empty: spread evenly",
                DFSIM_FIELD(memory.ring_stops)), 0, 1023),
      ints(make("memory.ports", T::Int, "ports",
                "memory ports: all off-chip traffic of a contiguous block of card.cores / ports cores passes "
                "one port between the memory controllers and the ring (port p serves cores "
                "[p*cores/ports, (p+1)*cores/ports); with more ports than cores some stay unused); 0: no such limit",
                DFSIM_FIELD(memory.ports)), 0, 1024),
      ints(make("memory.port_bytes_per_cycle", T::Int, "B/cycle",
                "bandwidth of each memory port per direction (reads to the cores, writes to memory), core clock",
                DFSIM_FIELD(memory.port_bytes_per_cycle)), 1, 65536),
      nums(make("memory.port_request_ns", T::Double, "ns",
                "least time one request (a DMA burst) holds its memory port in its direction: a burst takes "
                "max(bytes / port_bytes_per_cycle, port_request_ns) of the port; 0: bytes only",
                DFSIM_FIELD(memory.port_request_ns)), 0, false, 1e6),
      choices(make("memory.port_request_scope", T::String, "",
                   "the requests memory.port_request_ns applies to: all, or stick_layout (only those of tensors "
                   "stored in the card's stick layout, memory.hbm_layout; a row-major tensor stands in for a "
                   "stick-laid one whose runs are not its own, so its requests are charged their bytes only: "
                   "docs/calibration.md, \"Port request rate\")",
                   DFSIM_FIELD(memory.port_request_scope)),
              {"all", "stick_layout"}),
      compile_time(choices(make("memory.hbm_layout", T::String, "",
                   "how the compiler lays tensors out in off-chip memory unless the op graph's compile.hbm_layout "
                   "says otherwise: row_major (the dims in compile.layouts order, row-major), batched (the card's "
                   "generic stick layout for the batched tensors of matmuls, rank 3 and more, the rest row-major) or "
                   "stick (the card's generic stick layout for every tensor: docs/compiler.md, \"HBM layout\")",
                   DFSIM_FIELD(memory.hbm_layout)),
              {"row_major", "batched", "stick"})),
      ints(make("memory.lpddr5.bank_groups", T::Int, "banks", "lpddr5: bank groups per channel",
                DFSIM_FIELD(memory.lpddr5.bank_groups)), 1, 64),
      ints(make("memory.lpddr5.banks_per_group", T::Int, "banks", "lpddr5: banks per bank group",
                DFSIM_FIELD(memory.lpddr5.banks_per_group)), 1, 64),
      ints(make("memory.lpddr5.row_bytes", T::Int, "bytes", "lpddr5: row (page) size per channel; a multiple of memory.lpddr5.interleave_bytes",
                DFSIM_FIELD(memory.lpddr5.row_bytes)), 1, kBig),
      ints(make("memory.lpddr5.interleave_bytes", T::UInt64, "bytes",
                "lpddr5: channel interleave block (a multiple of the column access, dividing row_bytes)",
                DFSIM_FIELD(memory.lpddr5.interleave_bytes)), 1),
      ints(make("memory.lpddr5.burst_length", T::Int, "beats", "lpddr5: beats per column access (column bytes = burst_length x bus_bits / 8)",
                DFSIM_FIELD(memory.lpddr5.burst_length)), 1, 1024),
      choices(make("memory.lpddr5.address_map", T::String, "",
                   "lpddr5: order of the fields row, column, bank, bank group, channel (MSB first) in the index "
                   "of an interleave block",
                   DFSIM_FIELD(memory.lpddr5.address_map)),
              {"RoCoBaBgCh", "RoCoBgBaCh", "RoBaBgCoCh", "RoBgBaCoCh", "RoCoChBaBg", "ChRoCoBaBg"}),
      make("memory.lpddr5.bank_xor", T::Bool, "",
           "lpddr5: XOR the low row bits into bank group and bank (permutation interleaving: streams that "
           "start at the same offset in different rows spread over banks)",
           DFSIM_FIELD(memory.lpddr5.bank_xor)),
      make("memory.lpddr5.channel_xor", T::Bool, "",
           "lpddr5: add a 64-bit mix of the address bits above the channel field into the channel, modulo "
           "channels (channel hashing: a strided access, whose stride is a multiple of channels x interleave_bytes "
           "or not, spreads over all channels instead of hitting one or a few)",
           DFSIM_FIELD(memory.lpddr5.channel_xor)),
      ints(make("memory.lpddr5.inline_ecc", T::Int, "columns",
                "lpddr5: inline ECC: every access of n data columns also accesses ceil(n / inline_ecc) ECC "
                "columns of the same row (0: no inline ECC)",
                DFSIM_FIELD(memory.lpddr5.inline_ecc)), 0, 1024),
      ints(make("memory.lpddr5.trcd", T::Int, "memory cycles", "lpddr5: ACT to column command",
                DFSIM_FIELD(memory.lpddr5.trcd)), 0, kBig),
      ints(make("memory.lpddr5.trp", T::Int, "memory cycles", "lpddr5: PRE to ACT",
                DFSIM_FIELD(memory.lpddr5.trp)), 0, kBig),
      ints(make("memory.lpddr5.tras", T::Int, "memory cycles", "lpddr5: ACT to PRE, same bank",
                DFSIM_FIELD(memory.lpddr5.tras)), 0, kBig),
      ints(make("memory.lpddr5.tccd_s", T::Int, "memory cycles", "lpddr5: column to column command, different bank group",
                DFSIM_FIELD(memory.lpddr5.tccd_s)), 1, kBig),
      ints(make("memory.lpddr5.tccd_l", T::Int, "memory cycles", "lpddr5: column to column command, same bank group",
                DFSIM_FIELD(memory.lpddr5.tccd_l)), 1, kBig),
      ints(make("memory.lpddr5.trrd", T::Int, "memory cycles", "lpddr5: ACT to ACT, any two banks of a channel",
                DFSIM_FIELD(memory.lpddr5.trrd)), 0, kBig),
      ints(make("memory.lpddr5.tfaw", T::Int, "memory cycles", "lpddr5: rolling window that holds at most four ACTs",
                DFSIM_FIELD(memory.lpddr5.tfaw)), 0, kBig),
      ints(make("memory.lpddr5.rl", T::Int, "memory cycles", "lpddr5: read latency: read command to first data",
                DFSIM_FIELD(memory.lpddr5.rl)), 0, kBig),
      ints(make("memory.lpddr5.wl", T::Int, "memory cycles", "lpddr5: write latency: write command to first data",
                DFSIM_FIELD(memory.lpddr5.wl)), 0, kBig),
      ints(make("memory.lpddr5.twtr", T::Int, "memory cycles", "lpddr5: write-to-read turnaround: end of write data to read command",
                DFSIM_FIELD(memory.lpddr5.twtr)), 0, kBig),
      ints(make("memory.lpddr5.trtw", T::Int, "memory cycles", "lpddr5: read-to-write turnaround: read command to write command",
                DFSIM_FIELD(memory.lpddr5.trtw)), 0, kBig),
      ints(make("memory.lpddr5.trefi", T::Int, "memory cycles", "lpddr5: all-bank refresh interval (0: no refresh)",
                DFSIM_FIELD(memory.lpddr5.trefi)), 0, kBig),
      ints(make("memory.lpddr5.trfc", T::Int, "memory cycles", "lpddr5: all-bank refresh cycle time",
                DFSIM_FIELD(memory.lpddr5.trfc)), 0, kBig),
      ints(make("memory.lpddr5.frontend_cycles", T::Int, "memory cycles", "lpddr5: controller and PHY latency added to every access",
                DFSIM_FIELD(memory.lpddr5.frontend_cycles)), 0, kBig),
      ints(make("memory.lpddr5.twr", T::Int, "memory cycles", "lpddr5: write recovery: end of write data to PRE of that bank",
                DFSIM_FIELD(memory.lpddr5.twr)), 0, kBig),
      ints(make("memory.lpddr5.queue_depth", T::Int, "requests",
                "lpddr5: entries of the read queue and of the write queue of each channel controller; the "
                "scheduler picks among these, later requests wait in arrival order (back-pressure)",
                DFSIM_FIELD(memory.lpddr5.queue_depth)), 1, kBig),
      ints(make("memory.lpddr5.write_high", T::Int, "requests",
                "lpddr5: write-queue entries that start a write drain (reads are served first otherwise)",
                DFSIM_FIELD(memory.lpddr5.write_high)), 1, kBig),
      ints(make("memory.lpddr5.write_low", T::Int, "requests", "lpddr5: a write drain stops at this many entries (< write_high)",
                DFSIM_FIELD(memory.lpddr5.write_low)), 0, kBig),
      ints(make("memory.lpddr5.min_batch", T::Int, "requests",
                "lpddr5: while requests of the other direction wait, the controller serves at least this many "
                "requests of one direction before it turns the bus around, and at most this many writes "
                "per drain once reads wait (starvation bound)",
                DFSIM_FIELD(memory.lpddr5.min_batch)), 1, kBig),
      choices(make("ring.impl", T::String, "", "on-chip network model (registered name)", DFSIM_FIELD(ring.impl)),
              {"ring"}),
      ints(make("ring.bytes_per_cycle", T::Int, "B/cycle", "ring bandwidth per direction per link, core clock",
                DFSIM_FIELD(ring.bytes_per_cycle)), 1, 65536),
      ints(make("ring.hop_cycles", T::Int, "cycles", "ring latency per hop, core clock", DFSIM_FIELD(ring.hop_cycles)),
           0, kBig),
      compile_time(ints(make("ring.multicast_max_cores", T::Int, "cores",
                "the most cores one banded multicast of a shared operand tile reaches (matmul family, attention "
                "K/V): a tile shared by more is loaded once per group of this many; 0: no limit",
                DFSIM_FIELD(ring.multicast_max_cores)), 0, 4096)),
      choices(make("ring.link_order", T::String, "",
                   "the order a ring link serves the bursts booked on it: arrival (the order they reach it), "
                   "booking (the order the engines book them: faster to simulate, but a burst booked later for "
                   "an earlier time waits behind all booked before it, so latencies compound over the hops), or "
                   "auto (arrival under lpddr5; booking under the models that tell completions when requests are "
                   "sent, bandwidth and simple, whose read/write dip comes from it)",
                   DFSIM_FIELD(ring.link_order)),
              {"auto", "arrival", "booking"}),
      // Several cards and their PCIe fabric (models/pcie/, docs/models.md "PCIe and collectives").
      ints(make("system.cards", T::Int, "cards", "cards in the system (a graph uses compile.cards of them)",
                DFSIM_FIELD(system.cards)), 1, 64),
      ints(make("system.cards_per_drawer", T::Int, "cards", "cards behind one PCIe switch (an I/O drawer)",
                DFSIM_FIELD(system.cards_per_drawer)), 1, 8),
      nums(make("system.pcie.link_gbps", T::Double, "GB/s",
                "nominal rate of a card's PCIe link to its switch, per direction (Gen5 x16: 63.0)",
                DFSIM_FIELD(system.pcie.link_gbps)), 0.01, false, 1e6),
      nums(make("system.pcie.uplink_gbps", T::Double, "GB/s",
                "nominal rate of a switch's uplink to the host, per direction, shared by its drawer's cards",
                DFSIM_FIELD(system.pcie.uplink_gbps)), 0.01, false, 1e6),
      nums(make("system.pcie.efficiency", T::Double, "",
                "share of the nominal PCIe rate a DMA achieves (placeholder: not published for Spyre)",
                DFSIM_FIELD(system.pcie.efficiency)), 0.01, false, 1),
      nums(make("system.pcie.latency_ns", T::Double, "ns",
                "latency of one PCIe transfer: descriptor, switch traversal, completion (placeholder)",
                DFSIM_FIELD(system.pcie.latency_ns)), 0, false, 1e9),
      // Energy model (sim/energy/, docs/energy.md); sources and estimates in docs/calibration.md.
      choices(nums(make("energy.pt.pj_per_mac", T::StringDoubleMap, "pJ/MAC", "PT energy per MAC, per operand precision",
                        DFSIM_FIELD(energy.pt_pj_per_mac)), 0, false, 1e6),
              {"fp16", "fp8", "int8", "int4", "fp32"}),
      choices(nums(make("energy.sfp.pj_per_element", T::StringDoubleMap, "pJ/element",
                        "SFP energy per fp16 element, per function class", DFSIM_FIELD(energy.sfp_pj_per_element)),
                   0, false, 1e6),
              sfp_classes),
      nums(make("energy.sfp.fp32_factor", T::Double, "", "an fp32 SFP element costs this many fp16 elements",
                DFSIM_FIELD(energy.sfp_fp32_factor)), 0, false, 1e3),
      nums(make("energy.lx.read_pj_per_byte", T::Double, "pJ/B", "LX SRAM read energy",
                DFSIM_FIELD(energy.lx_read_pj_per_byte)), 0, false, 1e6),
      nums(make("energy.lx.write_pj_per_byte", T::Double, "pJ/B", "LX SRAM write energy",
                DFSIM_FIELD(energy.lx_write_pj_per_byte)), 0, false, 1e6),
      nums(make("energy.dma.pj_per_byte", T::Double, "pJ/B", "DMA engine energy per byte transferred",
                DFSIM_FIELD(energy.dma_pj_per_byte)), 0, false, 1e6),
      nums(make("energy.ring.pj_per_byte_hop", T::Double, "pJ/B/hop", "ring energy per byte per link crossed",
                DFSIM_FIELD(energy.ring_pj_per_byte_hop)), 0, false, 1e6),
      nums(make("energy.dram.read_pj_per_byte", T::Double, "pJ/B", "off-chip read energy (array, column, I/O)",
                DFSIM_FIELD(energy.dram_read_pj_per_byte)), 0, false, 1e6),
      nums(make("energy.dram.write_pj_per_byte", T::Double, "pJ/B", "off-chip write energy (array, column, I/O)",
                DFSIM_FIELD(energy.dram_write_pj_per_byte)), 0, false, 1e6),
      nums(make("energy.dram.activate_nj", T::Double, "nJ", "energy of one row activation (ACT + PRE)",
                DFSIM_FIELD(energy.dram_activate_nj)), 0, false, 1e6),
      nums(make("energy.dram.refresh_nj", T::Double, "nJ",
                "energy of one all-bank refresh of a channel (one per memory.lpddr5.trefi per channel)",
                DFSIM_FIELD(energy.dram_refresh_nj)), 0, false, 1e9),
      nums(make("energy.pcie.pj_per_byte", T::Double, "pJ/B", "PCIe energy per byte sent over a card's link (host or peer)",
                DFSIM_FIELD(energy.pcie_pj_per_byte)), 0, false, 1e6),
      nums(make("energy.static.core_w", T::Double, "W", "static power of each core the program uses (leakage, clocks)",
                DFSIM_FIELD(energy.core_static_w)), 0, false, 1e4),
      nums(make("energy.static.card_w", T::Double, "W",
                "static power of the card whatever runs (memory background, PHYs, PCIe, board)",
                DFSIM_FIELD(energy.card_static_w)), 0, false, 1e6),
      make("sim.trace", T::Bool, "", "write trace.json", DFSIM_FIELD(sim.trace)),
      nums(make("sim.utilization_bucket_ns", T::Double, "ns", "bucket width of utilization.csv",
                DFSIM_FIELD(sim.utilization_bucket_ns)), 0, true, 1e12),
      nums(make("sim.dma_lookahead_ns", T::Double, "ns",
                "a DMA engine books the bursts it may issue within this window in one step (0: one burst per "
                "step; larger is faster to simulate, coarser in how engines interleave)",
                DFSIM_FIELD(sim.dma_lookahead_ns)), 0, false, 1e6),
      nums(make("sim.memory_lookahead_ns", T::Double, "ns",
                "lpddr5: a channel controller serves every decision due within this window in one wake-up (0: "
                "each at its own time, exact; larger is faster to simulate, blind to pieces sent later that "
                "arrive inside the window)",
                DFSIM_FIELD(sim.memory_lookahead_ns)), 0, false, 1e6),
      ints(make("sim.trace_auto_instances", T::UInt64, "instances",
                "dfsim run without --trace draws the trace at level kernels (not units) when the run has more task "
                "instances than this, so that a whole-model prefill does not write gigabytes (0: never)",
                DFSIM_FIELD(sim.trace_auto_instances)), 0),
  };
}

#undef DFSIM_FIELD

std::vector<Param>& registry() {
  static std::vector<Param> params = build();
  return params;
}

}  // namespace

const std::vector<Param>& chip_params() { return registry(); }

const Param* find_param(std::string_view dotted) {
  for (const auto& p : registry())
    if (p.path == dotted) return &p;
  return nullptr;
}

void add_param_choice(std::string_view dotted, const std::string& value) {
  for (auto& p : registry())
    if (p.path == dotted && p.type == ParamType::String && !p.choices.empty() &&
        std::find(p.choices.begin(), p.choices.end(), value) == p.choices.end())
      p.choices.push_back(value);
}

std::vector<std::string> param_paths_with_map_keys() {
  std::vector<std::string> out;
  for (const auto& p : registry()) {
    out.push_back(p.path);
    if (p.is_map())
      for (const auto& k : p.choices) out.push_back(p.path + "." + k);
  }
  return out;
}

Json param_defaults() {
  Json root = Json::object();
  for (const auto& p : registry()) root[Json::json_pointer(p.pointer())] = p.default_value();
  return root;
}

}  // namespace dfsim
