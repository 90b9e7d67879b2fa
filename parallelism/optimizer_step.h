// Device-memory traffic of the optimizer step, per parameter, as Megatron-LM runs it
// (megatron/core/optimizer/optimizer.py: MixedPrecisionOptimizer.step and its fp32 and
// distributed variants). The step is a chain of memory-bound multi-tensor kernels over the
// parameters this rank updates (its ZeRO shard), after a zero-fill of its gradient buffer.
// Each pass below is named with what it reads and writes; FlopsOptions-style overrides let
// a calibration replace them.
#pragma once

#include "parallelism/parallel_plan.h"
#include "parallelism/training_spec.h"

namespace trainsim::parallelism {

struct OptimizerStepOptions {
  // The update itself. Adam (apex / Transformer Engine FusedAdam, one multi-tensor kernel):
  // reads the fp32 master weight, gradient, first and second moments (16 B) and writes the
  // weight and both moments (12 B). SGD with momentum: reads weight, gradient, momentum (12 B),
  // writes weight and momentum (8 B).
  double adam_update_bytes = 28.0;
  double sgd_update_bytes = 20.0;
  // Gradient norm for clipping (clip_grad_norm_fp32: multi_tensor_l2norm over the fp32 main
  // gradients, read once). Megatron clips by default (--clip-grad 1.0); the rescale pass runs
  // only when the norm exceeds the limit and is not counted.
  double grad_norm_bytes = 4.0;
  // 16-bit main gradients (fp16 training by default, bf16 with grad_reduce_precision: bf16)
  // are cast into the fp32 master gradients (_copy_model_grads_to_main_grads: read 2, write 4).
  // fp16 training then unscales them and checks for inf/NaN
  // (torch._amp_foreach_non_finite_check_and_unscale_: read 4, write 4). bf16 training has no
  // loss scaler, and with fp32 main gradients (its default) no cast; fp32 training has no
  // master copy at all.
  double grad_cast_bytes = 6.0;
  double fp16_unscale_bytes = 8.0;
  // Mixed precision (fp16, bf16, fp8): the updated fp32 master weights are cast back into
  // the 16-bit model weights (_copy_main_params_to_model_params: read 4, write 2).
  double master_to_model_copy_bytes = 6.0;
  // FP8 parameters (training.fp8_param_gather): the updated fp32 master shard is quantized
  // into the FP8 weights instead (Transformer Engine's cast_master_weights_to_fp8, called by
  // Megatron-Core's quantize_param_shard): read 4, write 1. With current scaling the shard is
  // first read once more for its absolute maximum (4; the maxima are then all-reduced, a few
  // bytes per tensor, not counted): 9.
  double master_to_fp8_model_copy_bytes = 5.0;
  double fp8_current_scaling_master_amax_bytes = 4.0;
};

// Bytes the step moves: `per_updated_parameter` for each parameter this rank updates (all of
// its model chunks' parameters, or its 1/dp shard under ZeRO >= 1), `per_gradient_element`
// for each element of its gradient buffer, which is zero-filled once per iteration
// (zero_grad_buffer; the element is the main gradient's size: MicroBatchShard::
// mainGradientBytes).
struct OptimizerStepBytes {
  double per_updated_parameter = 0.0;
  double per_gradient_element = 0.0;
};

[[nodiscard]] OptimizerStepBytes optimizerStepBytes(const TrainingSpec& training, const OptimizerStepOptions& options);

// Bytes of one rank's optimizer step: the dense and expert parameters of its model chunks.
// ZeRO >= 1 shards the update of the dense ones over dp x cp (RankLayout::dataGroup), of the
// expert ones over the expert data-parallel ranks (ParallelPlan::expertDataParallel). The gradient buffer is zeroed in
// full up to ZeRO-2: Megatron's distributed optimizer keeps a full-size buffer that backward accumulates into, and
// ZeRO-2 is timed as ZeRO-1 (zero_sharding_test.cpp); ZeRO-3 holds 1/dp of it.
[[nodiscard]] double optimizerStepTraffic(const TrainingSpec& training, const ParallelPlan& plan,
                                          double dense_parameters, double expert_parameters,
                                          const OptimizerStepOptions& options);

}  // namespace trainsim::parallelism
