// libFuzzer target: compiled kernel graph loading (read_kernel_graph) and expansion
// (expand_graph) against the shipped spyre config.
#include "sim/graph/expand.h"
#include "sim/graph/kernel_graph_io.h"
#include "tests/fuzz/fuzz_common.h"

int sc_main(int, char*[]) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dfsim;
  const ChipConfig& cfg = fuzz::spyre();
  fuzz::expect_input_errors_only([&] {
    Json j = parse_json_text(fuzz::as_text(data, size), "fuzz.json");
    KernelGraph g = read_kernel_graph(j, "fuzz.json");
    // Instance count is bounded by cores (<= 32) x tasks in the file; skip absurd totals.
    if (g.instance_count() > 200000) return;
    expand_graph(g, cfg);
  });
  return 0;
}
