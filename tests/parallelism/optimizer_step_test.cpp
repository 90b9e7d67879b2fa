#include "parallelism/optimizer_step.h"

#include <gtest/gtest.h>

namespace trainsim::parallelism {
namespace {

TrainingSpec training(topology::Precision precision, Optimizer optimizer = Optimizer::kAdam) {
  TrainingSpec spec;
  spec.seq_len = 2048;
  spec.global_batch_size = 8;
  spec.precision = precision;
  spec.optimizer = optimizer;
  return spec;
}

ParallelPlan plan(int64_t dp, int zero) {
  ParallelPlan p;
  p.dp = dp;
  p.zero = zero;
  return p;
}

TEST(OptimizerStep, Fp16AddsTheGradientCastAndUnscaleToAdam) {
  // Adam 28 + norm 4 + fp16 -> fp32 gradient cast 6 + unscale 8 + master -> model copy 6;
  // the fp16 gradient buffer is zeroed at 2 bytes per element.
  const OptimizerStepBytes bytes = optimizerStepBytes(training(topology::Precision::kFp16), {});
  EXPECT_DOUBLE_EQ(bytes.per_updated_parameter, 52.0);
  EXPECT_DOUBLE_EQ(bytes.per_gradient_element, 2.0);
}

TEST(OptimizerStep, Bf16HasNoLossScalingAndFp32MainGradients) {
  for (auto precision : {topology::Precision::kBf16, topology::Precision::kFp8}) {
    const OptimizerStepBytes bytes = optimizerStepBytes(training(precision), {});
    EXPECT_DOUBLE_EQ(bytes.per_updated_parameter, 38.0);  // Adam 28 + norm 4 + master -> model copy 6
    EXPECT_DOUBLE_EQ(bytes.per_gradient_element, 4.0);
  }
}

TEST(OptimizerStep, Fp8ParametersAreQuantizedFromTheMasterShard) {
  // FP8 weights: read 4 + write 1 = 5 instead of the 16-bit copy's 6 with delayed scaling;
  // current scaling first reads the shard for its amax: 9.
  TrainingSpec fp8 = training(topology::Precision::kFp8);
  fp8.fp8_param_gather = true;
  EXPECT_DOUBLE_EQ(optimizerStepBytes(fp8, {}).per_updated_parameter, 28.0 + 4.0 + 5.0);
  fp8.fp8_recipe = Fp8Recipe::kCurrent;
  EXPECT_DOUBLE_EQ(optimizerStepBytes(fp8, {}).per_updated_parameter, 28.0 + 4.0 + 9.0);
  // The block recipes read it for their blocks' amax too.
  for (const Fp8Recipe recipe : {Fp8Recipe::kMxfp8, Fp8Recipe::kBlockwise}) {
    fp8.fp8_recipe = recipe;
    EXPECT_DOUBLE_EQ(optimizerStepBytes(fp8, {}).per_updated_parameter, 28.0 + 4.0 + 9.0);
  }
}

TEST(OptimizerStep, SixteenBitMainGradientsAreCastToFp32) {
  // bf16 main gradients: the cast to fp32 (6) and a 2-byte zero-fill, no unscale.
  TrainingSpec bf16 = training(topology::Precision::kBf16);
  bf16.grad_reduce_precision = topology::Precision::kBf16;
  OptimizerStepBytes bytes = optimizerStepBytes(bf16, {});
  EXPECT_DOUBLE_EQ(bytes.per_updated_parameter, 44.0);
  EXPECT_DOUBLE_EQ(bytes.per_gradient_element, 2.0);
  // fp16 with fp32 main gradients: unscaled, not cast.
  TrainingSpec fp16 = training(topology::Precision::kFp16);
  fp16.grad_reduce_precision = topology::Precision::kFp32;
  bytes = optimizerStepBytes(fp16, {});
  EXPECT_DOUBLE_EQ(bytes.per_updated_parameter, 46.0);
  EXPECT_DOUBLE_EQ(bytes.per_gradient_element, 4.0);
}

TEST(OptimizerStep, Bf16StatesHalveTheMomentTrafficAndReadGradientsAsTheyAre) {
  // Adam with bf16 m and v: 28 - 4 x 2 = 20, + norm 4 + master -> model copy 6, fp32 main
  // gradients read as before.
  TrainingSpec bf16_states = training(topology::Precision::kBf16);
  bf16_states.optimizer_state_precision = topology::Precision::kBf16;
  EXPECT_DOUBLE_EQ(optimizerStepBytes(bf16_states, {}).per_updated_parameter, 30.0);
  // bf16 main gradients: read in 2 bytes, no cast into an fp32 copy (44 with fp32 states).
  bf16_states.grad_reduce_precision = topology::Precision::kBf16;
  EXPECT_DOUBLE_EQ(optimizerStepBytes(bf16_states, {}).per_updated_parameter, 28.0);
  // SGD: the momentum read and written in 2 bytes each.
  bf16_states.optimizer = Optimizer::kSgd;
  bf16_states.grad_reduce_precision.reset();
  EXPECT_DOUBLE_EQ(optimizerStepBytes(bf16_states, {}).per_updated_parameter, 20.0 - 4.0 + 4.0 + 6.0);
}

TEST(OptimizerStep, Fp32HasNoMasterCopy) {
  const OptimizerStepBytes bytes = optimizerStepBytes(training(topology::Precision::kFp32), {});
  EXPECT_DOUBLE_EQ(bytes.per_updated_parameter, 32.0);
  EXPECT_DOUBLE_EQ(bytes.per_gradient_element, 4.0);
}

TEST(OptimizerStep, SgdMovesLessThanAdam) {
  const OptimizerStepBytes sgd = optimizerStepBytes(training(topology::Precision::kBf16, Optimizer::kSgd), {});
  EXPECT_DOUBLE_EQ(sgd.per_updated_parameter, 30.0);  // SGD 20 + norm 4 + copy 6
}

TEST(OptimizerStep, ZeroShardsTheUpdateFromStageOneAndTheGradientBufferAtStageThree) {
  const TrainingSpec bf16 = training(topology::Precision::kBf16);
  const double parameters = 8e9;
  EXPECT_DOUBLE_EQ(optimizerStepTraffic(bf16, plan(8, 0), parameters, 0.0, {}), parameters * (38.0 + 4.0));
  EXPECT_DOUBLE_EQ(optimizerStepTraffic(bf16, plan(8, 1), parameters, 0.0, {}),
                   parameters / 8.0 * 38.0 + parameters * 4.0);
  EXPECT_DOUBLE_EQ(optimizerStepTraffic(bf16, plan(8, 2), parameters, 0.0, {}),
                   parameters / 8.0 * 38.0 + parameters * 4.0);
  EXPECT_DOUBLE_EQ(optimizerStepTraffic(bf16, plan(8, 3), parameters, 0.0, {}), parameters / 8.0 * 42.0);
}

TEST(OptimizerStep, OptionsOverrideEachPass) {
  OptimizerStepOptions options;
  options.adam_update_bytes = 30.0;
  options.grad_norm_bytes = 0.0;
  options.master_to_model_copy_bytes = 0.0;
  EXPECT_DOUBLE_EQ(optimizerStepBytes(training(topology::Precision::kBf16), options).per_updated_parameter, 30.0);
}

}  // namespace
}  // namespace trainsim::parallelism
