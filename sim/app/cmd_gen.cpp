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

namespace {

std::string models_dir() { return default_workloads_dir() + "/models"; }

}  // namespace

int cmd_gen(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string model, output, phase, dtype;
  StepSpec step;
  bool list = false;
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
      ("output,o", po::value(&output), "op graph to write (dfsim.ops)")
      ("list", po::bool_switch(&list), "list the models in workloads/models/ and exit");
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (!parse_options("gen",
                     "MODEL (--phase prefill --tokens S [--batch B] | --phase decode --batch B --context L) "
                     "[--layers N] [--dtype fp16|fp8] [--cores N] -o FILE",
                     "dfsim gen llama-3.1-8b --phase decode --batch 1 --context 2048 -o llama-decode.json\n"
                     "  dfsim gen granite-3.3-8b --phase prefill --tokens 512 --layers 4 -o granite-4l.json\n"
                     "  dfsim run -w llama-decode.json      # then simulate it",
                     opts, &pos, args, vm))
    return 0;
  if (list) {
    for (const auto& name : list_models(models_dir())) {
      ModelSpec m = load_model_spec(models_dir() + "/" + name + ".json");
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
  ModelSpec m = find_model_spec(model, models_dir());
  step.dtype = dtype.empty() ? m.dtype : dtype == "fp8" ? Dtype::fp8 : Dtype::fp16;
  std::string text = generate_step_graph(m, step);
  write_file_atomically(output, [&](std::ostream& f) { f << text; });
  std::cout << output << ": " << step_graph_name(m, step) << "\n";
  return 0;
}

}  // namespace dfsim
