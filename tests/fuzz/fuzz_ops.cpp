// libFuzzer target: op graph parsing (read_op_graph) and compilation (compile_ops) for the
// shipped spyre config on 1..4 cores, then expansion of the compiled kernel graph.
#include "sim/compiler/compile.h"
#include "sim/graph/expand.h"
#include "sim/graph/op_graph.h"
#include "tests/fuzz/fuzz_common.h"

int sc_main(int, char*[]) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dfsim;
  const ChipConfig& cfg = fuzz::spyre();
  int cores = 1 + (size ? data[size - 1] % 4 : 0);  // 1..4, chosen by the input
  fuzz::expect_input_errors_only([&] {
    Json j = parse_json_text(fuzz::as_text(data, size), "fuzz.json");
    OpGraph ops = read_op_graph(j, "fuzz.json");
    // Huge but valid tensors compile into millions of tasks: slow, not a bug. Skip them.
    std::uint64_t elements = 0;
    for (const auto& t : ops.tensors) elements += t.elements();
    if (elements > (std::uint64_t{1} << 24)) return;
    KernelGraph g = compile_ops(ops, cfg, cores);
    expand_graph(g, cfg);
  });
  return 0;
}
