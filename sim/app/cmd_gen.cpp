// `dfsim gen`: the op graph of one forward step of a model (decode or prefill), from its
// hyperparameter file in workloads/models/ (docs/workloads.md).
#include <cstdio>
#include <iostream>

#include "sim/app/cli.h"
#include "sim/app/options.h"
#include "sim/app/output_dir.h"
#include "sim/common/error.h"
#include "sim/gen/step_graph.h"

namespace dfsim {

int cmd_gen(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string model, output, phase, dtype;
  StepSpec step;
  bool list = false, quiet = false;
  opts.add_options()
      ("model", po::value(&model), "model name (a file in workloads/models/) or path of a dfsim.model file")
      ("phase", po::value(&phase), "prefill or decode")
      ("tokens", po::value(&step.tokens), "prefill: prompt tokens per sequence")
      ("batch,b", po::value(&step.batch)->default_value(1), "sequences in the step")
      ("context", po::value(&step.context),
       "tokens already in each sequence's KV cache (decode: required; prefill: earlier chunks, default 0)")
      ("layers", po::value(&step.layers), "only the first N layers (default: all)")
      ("dtype", po::value(&dtype), "fp16 or fp8: weights, KV cache and activations (default: the model file's)")
      ("cores,n", po::value(&step.cores)->default_value(32), "compile.cores of the graph (dfsim run --cores overrides it)")
      ("tp", po::value(&step.tp)->default_value(1),
       "tensor parallel over N cards: one card's shard with its all-reduces and all-gather (compile.cards N; "
       "simulate it with --config configs/spyre-drawer.json)")
      ("host-io", po::bool_switch(&step.host_io),
       "token ids in from the host and logits out over PCIe (always with --tp > 1)")
      ("output,o", po::value(&output), "op graph to write (dfsim.ops)")
      ("list", po::bool_switch(&list), "list the models in workloads/models/ and exit")
      ("quiet,q", po::bool_switch(&quiet), "print nothing on success");
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (!parse_options("gen",
                     "MODEL (--phase prefill --tokens S [--batch B] | --phase decode --batch B --context L) "
                     "[--layers N] [--dtype fp16|fp8] [--cores N] [--tp N] [--host-io] -o FILE",
                     "dfsim gen llama-3.1-8b --phase decode --batch 1 --context 2048 -o llama-decode.json\n"
                     "  dfsim gen granite-3.3-8b --phase prefill --tokens 512 --layers 4 -o granite-4l.json\n"
                     "  dfsim gen llama-3.1-8b --phase decode --context 2048 --tp 4 -o llama-tp4.json\n"
                     "  dfsim run -w llama-tp4.json -c configs/spyre-drawer.json   # 4 of the drawer's 8 cards\n"
                     "  dfsim run -w llama-decode.json      # then simulate it",
                     opts, &pos, args, vm))
    return 0;
  if (list) {
    for (const auto& [name, value] : vm)  // --list takes nothing else: a model or option would be ignored
      if (name != "list" && !value.defaulted())
        throw UsageError("--list takes no other option or model, got " + (name == "model" ? "a model" : "--" + name));
    for (const auto& name : list_models(default_models_dir())) {
      ModelSpec m = load_model_spec(default_models_dir() + "/" + name + ".json");
      std::printf("%-28s %s, %lld layers, %.2f B parameters\n", name.c_str(),
                  m.arch == ModelArch::decoder ? "decoder" : "encoder", static_cast<long long>(m.layers),
                  static_cast<double>(m.parameters()) / 1e9);
    }
    return 0;
  }
  if (model.empty()) throw UsageError("give a MODEL (a name from 'dfsim gen --list', or a file path)");
  if (phase != "prefill" && phase != "decode")
    throw UsageError(phase.empty() ? "--phase is required: prefill or decode"
                                   : "--phase: expected prefill or decode, got \"" + phase + "\"");
  step.phase = phase == "decode" ? StepPhase::decode : StepPhase::prefill;
  if (step.phase == StepPhase::prefill) {
    if (!vm.count("tokens")) throw UsageError("--phase prefill needs --tokens S");
  } else {
    if (!vm.count("context")) throw UsageError("--phase decode needs --context L");
    if (vm.count("tokens")) throw UsageError("--tokens applies to --phase prefill (a decode step makes one token)");
    step.tokens = 1;
  }
  if (!dtype.empty() && dtype != "fp16" && dtype != "fp8")
    throw UsageError("--dtype: expected fp16 or fp8, got \"" + dtype + "\"");
  if (step.cores < 1) throw UsageError("--cores must be >= 1");
  if (vm.count("layers") && step.layers < 1) throw UsageError("--layers must be >= 1");
  if (output.empty()) throw UsageError("-o FILE is required");
  ModelSpec m = find_model_spec(model, default_models_dir());
  refuse_overwriting_inputs(output, "-o", {{"the model file", m.file}});
  OutputFile out(output);  // a path that cannot be written fails before generating
  step.dtype = dtype.empty() ? m.dtype : dtype == "fp8" ? Dtype::fp8 : Dtype::fp16;
  std::string text = generate_step_graph(m, step);
  out.write([&](std::ostream& f) { f << text; });
  if (!quiet) (is_standard_output(output) ? std::cerr : std::cout) << output << ": " << step_graph_name(m, step) << "\n";
  return 0;
}

}  // namespace dfsim
