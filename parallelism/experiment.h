// One simulation input: what is trained (model, training), on what (cluster) and how (plan).
#pragma once

#include <optional>
#include <string>

#include "parallelism/model_spec.h"
#include "parallelism/parallel_plan.h"
#include "parallelism/software_stack.h"
#include "parallelism/training_spec.h"
#include "parallelism/transformer_workload.h"
#include "topology/cluster_spec.h"

namespace trainsim::parallelism {

struct Experiment {
  std::string name;
  ModelSpec model;
  topology::ClusterSpec cluster;
  TrainingSpec training;
  ParallelPlan plan;  // resolved (gpus and dp filled in) and checked against the rest
  // The software stack training.stack names, with training.stack_overrides (unset: none).
  std::optional<SoftwareStack> stack;
  // training.stack_overrides of an experiment without a stack: over the shipped defaults.
  std::optional<StackParameters> parameter_overrides;
  std::string source_file;  // the experiment file ("" when built in code)
};

// The kernel choices of an experiment's training section applied to `base`. The rule, for
// every place that builds workloads or memory from an experiment (IterationBuilder, the
// memory model, simulateIteration's FLOP counts, the sweep's screen, the GEMM harness):
// attention runs fused only when both training.flash_attention and base.fused_attention say
// so. The experiment's `flash_attention: false` thus wins over FlopsOptions' default (true),
// and code that asks for the unfused path itself (the harness's --unfused-attention, tests)
// still gets it; the same for SwiGLU's fused gate and up GEMM (training.fused_gate_up, a
// stack's choice, against FlopsOptions::fuse_gate_up) and for the element-wise chains
// (training.fused_pointwise, or a compiled dispatch: Inductor fuses each chain into one kernel).
// The cross-entropy kernel and the experts' fused grouped MLP are the experiment's
// (training.fused_cross_entropy, or training.compile_loss with a compiled dispatch;
// training.fused_expert_mlp), FP8 quantization writes a transposed copy only where the
// GPU's FP8 GEMMs need one (topology::GpuSpec::fp8_gemm_any_layout) or the recipe scales blocks, and reads its input
// once more for the amax under current scaling (training.fp8_recipe).
[[nodiscard]] inline FlopsOptions kernelsFor(const Experiment& experiment, FlopsOptions base) {
  base.fused_attention = base.fused_attention && experiment.training.flash_attention;
  base.fused_cross_entropy =
      experiment.training.fused_cross_entropy ||
      (experiment.training.compile_loss && experiment.training.dispatch == DispatchMode::kCompiled);
  base.fuse_gate_up = base.fuse_gate_up && experiment.training.fused_gate_up;
  base.fused_pointwise = base.fused_pointwise && (experiment.training.fused_pointwise ||
                                                  experiment.training.dispatch == DispatchMode::kCompiled);
  base.fused_expert_mlp = experiment.training.fused_expert_mlp;
  base.fp8_current_scaling = experiment.training.fp8_recipe == Fp8Recipe::kCurrent;
  base.fp8_block_scaling =
      experiment.training.fp8_recipe == Fp8Recipe::kMxfp8 || experiment.training.fp8_recipe == Fp8Recipe::kBlockwise;
  base.fp8_transposed_copies = !experiment.cluster.gpu.fp8_gemm_any_layout || base.fp8_block_scaling;
  return base;
}

}  // namespace trainsim::parallelism
