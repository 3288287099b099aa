#pragma once
// The model report of a run of a whole-model step graph (one with a "model" object): time per
// step and per token, and where it went by op family and by layer (docs/outputs.md).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/common/time.h"
#include "sim/config/chip_config.h"
#include "sim/graph/expand.h"
#include "sim/stats/analysis.h"

namespace dfsim {

// embedding: the token (and position) lookups; head: the LM head or the pooler; communication:
// the ops between cards (collectives, host transfers) of a tensor-parallel step.
enum class OpFamily { attention, projections, mlp, norms, embedding, head, communication, other };
inline constexpr int kOpFamilies = 8;
const char* op_family_name(OpFamily f);

// Where a compiled kernel of a generated graph belongs, from its name `<op>_<output tensor>`
// and the tensor naming of dfsim gen: `l<i>.*` inside layer i, `embed.*`, `head.*`, `pool.*`,
// `final_norm` outside. Norms: a tensor whose last part ends in "norm"; projections: the
// Q/K/V/O linears of attention (with the O projection's residual); attention: the rest of
// `l<i>.attn.*` (RoPE, KV-cache writes, SDPA, head reshuffles); MLP: `l<i>.mlp.*`; embedding:
// `embed.*`; head: `head.*` and `pool.*` (LM head, pooler); other: kernels named otherwise.
struct KernelPlace {
  std::string op, tensor;  // tensor empty: the name does not follow the convention
  int layer = -1;          // -1: outside the layers
  OpFamily family = OpFamily::other;
};
KernelPlace place_kernel(const std::string& kernel_name);

// Splits the step [0, end) among kernels by their [start, end) spans: an instant where k
// kernels run counts 1/k towards each, so the returned times plus `idle_ns` (instants where
// no kernel runs) add up to `end`. Spans past `end` are clipped.
std::vector<double> attribute_time_ns(const std::vector<std::pair<Tick, Tick>>& spans, Tick end, double* idle_ns);

// summary.json's "model" object; kernels as kernel_breakdown returns them with their PCIe
// traffic filled in, `pcie_link_gbps` the nominal rate of each fabric link (the roofline's).
nlohmann::ordered_json model_report_json(const KernelGraph& g, const ExpandedGraph& x,
                                         const std::vector<KernelBreakdown>& kernels, Tick end, const ChipConfig& cfg,
                                         const std::vector<double>& pcie_link_gbps);

// The terminal lines of a summary's "model" object ("" without one).
std::string model_report_text(const nlohmann::ordered_json& summary);

}  // namespace dfsim
