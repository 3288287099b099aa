#pragma once
// What the compiler decided and why, kernel by kernel (dfsim compile --explain, the "explain"
// section of summary.json): lowerings fill what they chose, compile_ops the bytes and bounds.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/common/json_io.h"

namespace dfsim {

struct KernelGraph;
struct ChipConfig;

struct KernelReport {
  std::string kernel;
  std::vector<std::string> ops;                 // op graph ops in the kernel: "<op> -> <output>"
  std::string split;                            // the work division, e.g. "M=4 N=8 (32 of 32 cores)"
  std::string why;                              // how it was chosen
  std::vector<std::string> loops;               // tile loops, outermost first
  std::vector<std::string> lx_resident;         // buffers kept in LX across a loop
  std::string sharing;                          // operand sharing: on/off and why
  std::string layout;                           // HBM tensors in the card's stick layout, if any
  std::map<std::string, std::uint64_t> offchip_bytes;  // per HBM buffer: bytes loaded + stored
  std::uint64_t macs = 0;
  double roofline_ns = 0;                       // max(compute at peak, off-chip bytes at peak)
  std::string bound;                            // "compute" or "memory"
  double estimate_ns = 0;                       // the lowering's own estimate (0: none)
  // The estimate's terms, in the order printed: e.g. a matmul's bounds "compute", "memory",
  // "port requests" (part of memory) and "DMA", and "fill and drain" (the estimate is the largest
  // bound plus it). Empty: none given.
  std::vector<std::pair<std::string, double>> estimate_terms_ns;
  std::vector<std::string> warnings;            // cliffs: uneven grids, idle cores, re-reads
};

struct CompileReport {
  std::vector<KernelReport> kernels;
  // The report of kernel `name`, created at the end when absent.
  KernelReport& kernel(const std::string& name);
  // Fills bytes, MACs and roofline of every kernel of `g` (creating reports for kernels no
  // lowering described).
  void measure(const KernelGraph& g, const ChipConfig& chip);
  Json to_json() const;
  std::string text() const;  // the --explain listing
};

}  // namespace dfsim
