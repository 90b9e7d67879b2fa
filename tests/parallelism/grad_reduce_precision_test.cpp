// training.grad_reduce_precision end to end: 16-bit main gradients halve the data-parallel
// reduction's bytes and the gradient memory (parallelism/micro_batch_shard.h,
// MicroBatchShard::mainGradientBytes).
#include <gtest/gtest.h>

#include <string>

#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_simulation.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::parallelism {
namespace {

IterationResult simulateWithGradients(const std::string& grad_reduce_precision) {
  // Llama 3 8B data parallel over 2 DGX H100 nodes; the reduction follows backward
  // (overlap_grad_reduce false), so all of it is exposed.
  const std::string yaml =
      "model: llama3-8b\ncluster: dgx-h100\ntraining: {seq_len: 2048, global_batch_size: 32, precision: bf16" +
      (grad_reduce_precision.empty() ? std::string() : ", grad_reduce_precision: " + grad_reduce_precision) +
      "}\nparallelism: {gpus: 16, tp: 2, dp: 8, zero: 1, overlap_grad_reduce: false, overlap_param_gather: false}\n";
  auto experiment = loadExperimentNode(parseConfigText(yaml, "test.yaml"), ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS});
  if (!experiment.ok()) throw std::runtime_error(experiment.error().toString());
  auto result = simulateIteration(experiment.value(), shippedSimulationOptions());
  if (!result.ok()) throw std::runtime_error(result.error().toString());
  return std::move(result).value();
}

TEST(GradReducePrecisionTest, Bf16MainGradientsHalveTheReductionAndTheGradientMemory) {
  const IterationResult fp32 = simulateWithGradients("");
  const IterationResult explicit_fp32 = simulateWithGradients("fp32");
  const IterationResult bf16 = simulateWithGradients("bf16");
  // fp32 is bf16 training's default.
  EXPECT_DOUBLE_EQ(explicit_fp32.iteration_time_s, fp32.iteration_time_s);
  // The reduce-scatter of the gradients is half the bytes; the parameter all-gather (bf16
  // either way) is not, so the exposed data-parallel time drops by less than half of it.
  EXPECT_LT(bf16.breakdown.dp_comm_exposed, 0.85 * fp32.breakdown.dp_comm_exposed);
  EXPECT_GT(bf16.breakdown.dp_comm_exposed, 0.5 * fp32.breakdown.dp_comm_exposed);
  const auto& stage_fp32 = fp32.memory.stages.front();
  const auto& stage_bf16 = bf16.memory.stages.front();
  EXPECT_DOUBLE_EQ(stage_bf16.gradients, 0.5 * stage_fp32.gradients);
  EXPECT_GT(stage_bf16.optimizer, stage_fp32.optimizer);  // the fp32 copy of its gradient shard
  EXPECT_LT(bf16.memory.peakBytes(), fp32.memory.peakBytes());
}

}  // namespace
}  // namespace trainsim::parallelism
