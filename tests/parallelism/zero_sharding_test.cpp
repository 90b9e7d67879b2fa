// ZeRO stages in the iteration (parallelism/iteration_builder.cpp): stage 3 gathers the
// parameters for every pass and reduce-scatters every micro-batch's gradients, so its
// data-parallel traffic grows with gradient accumulation where stages 1 and 2 communicate
// once per iteration; waiting for those gathers is data-parallel time, not pipeline bubble.
#include <gtest/gtest.h>

#include <string>

#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_simulation.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::parallelism {
namespace {

IterationResult simulateYaml(const std::string& yaml) {
  auto experiment = loadExperimentNode(parseConfigText(yaml, "test.yaml"), ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS});
  if (!experiment.ok()) throw std::runtime_error(experiment.error().toString());
  auto result = simulateIteration(experiment.value(), shippedSimulationOptions());
  if (!result.ok()) throw std::runtime_error(result.error().toString());
  return std::move(result).value();
}

IterationResult simulate(int zero, int microbatches) {
  // Llama 3 8B, data parallel over 2 DGX H100 nodes (tp 2, dp 8).
  return simulateYaml(
      "model: llama3-8b\ncluster: dgx-h100\ntraining: {seq_len: 2048, global_batch_size: " +
      std::to_string(8 * microbatches) +
      ", micro_batch_size: 1}\nparallelism: {gpus: 16, tp: 2, pp: 1, dp: 8, zero: " + std::to_string(zero) + "}\n");
}

TEST(ZeroShardingTest, StageThreeCommunicatesEveryMicrobatch) {
  const IterationResult two_4 = simulate(2, 4);
  const IterationResult two_8 = simulate(2, 8);
  const IterationResult three_4 = simulate(3, 4);
  const IterationResult three_8 = simulate(3, 8);
  // Stage 2: the exposed reduction is the same however many micro-batches run.
  EXPECT_NEAR(two_8.breakdown.dp_comm_exposed, two_4.breakdown.dp_comm_exposed, 1e-9);
  // Stage 3: each extra micro-batch adds two parameter gathers and a reduce-scatter of the
  // whole (tp-sharded) model; on this machine they outlast the micro-batch's compute.
  EXPECT_GT(three_8.breakdown.dp_comm_exposed, three_4.breakdown.dp_comm_exposed + 0.1);
  EXPECT_GT(three_8.iteration_time_s - three_4.iteration_time_s, two_8.iteration_time_s - two_4.iteration_time_s);
  // The same computation either way but for the optimizer step's zero-fill of the gradient
  // buffer, of which stage 3 holds 1/dp (optimizer_step.h); and stage 3 holds less memory.
  EXPECT_LT(three_8.breakdown.compute, two_8.breakdown.compute);
  EXPECT_NEAR(three_8.breakdown.compute, two_8.breakdown.compute, 0.01 * two_8.breakdown.compute);
  EXPECT_LT(three_8.memory.peakBytes(), two_8.memory.peakBytes());
}

TEST(ZeroShardingTest, WaitingForParametersIsNotPipelineBubble) {
  for (int zero : {1, 2, 3}) {
    const IterationResult result = simulate(zero, 8);
    EXPECT_LT(result.breakdown.pipeline_bubble, 1e-9 * result.iteration_time_s) << "zero " << zero;
    const auto& b = result.breakdown;
    EXPECT_NEAR(b.compute + b.tp_comm_exposed + b.dp_comm_exposed + b.pp_comm_exposed + b.pipeline_bubble,
                result.iteration_time_s, 1e-6 * result.iteration_time_s)
        << "zero " << zero;
  }
}

}  // namespace
}  // namespace trainsim::parallelism

namespace trainsim::parallelism {
namespace {

// `trainsim sweep` lets ZeRO-1 and ZeRO-2 plans share one event simulation
// (sweep/sweep.cpp, timingOf): they must run the same events and differ only in memory.
TEST(ZeroShardingTest, StagesOneAndTwoRunTheSameEvents) {
  const IterationResult one = simulate(1, 8);
  const IterationResult two = simulate(2, 8);
  EXPECT_EQ(one.iteration_time_s, two.iteration_time_s);
  EXPECT_EQ(one.events, two.events);
  EXPECT_EQ(one.tasks, two.tasks);
  EXPECT_EQ(one.breakdown.dp_comm_exposed, two.breakdown.dp_comm_exposed);
  EXPECT_LT(two.memory.peakBytes(), one.memory.peakBytes());
}

}  // namespace
}  // namespace trainsim::parallelism

namespace trainsim::parallelism {
namespace {

IterationResult simulateGatherBound(bool overlap_param_gather) {
  // Llama 3 8B on tp 8 x dp 2 (one GPU of each data-parallel pair per node): each GPU
  // all-gathers 2 GB of bf16 parameters over its 400 Gb/s NIC, about 20 ms, where a forward
  // pass of one 2,048-token sequence takes under 10 ms.
  return simulateYaml(
      "model: llama3-8b\ncluster: dgx-h100\ntraining: {seq_len: 2048, global_batch_size: 8, micro_batch_size: 1}\n"
      "parallelism: {gpus: 16, tp: 8, pp: 1, dp: 2, zero: 1, overlap_grad_reduce: true, overlap_param_gather: " +
      std::string(overlap_param_gather ? "true" : "false") + "}\n");
}

// Megatron-Core's forward pre-hooks wait for each parameter bucket's all-gather as the
// first forward reaches it, so overlapping the gather hides at most that forward pass:
// the rest of a gather longer than the pass stays exposed.
TEST(ZeroShardingTest, OverlappedParameterGatherHidesAtMostTheFirstForward) {
  const IterationResult after_step = simulateGatherBound(false);
  const IterationResult overlapped = simulateGatherBound(true);
  // The same kernels (summed in another order: a picosecond apart at most).
  EXPECT_NEAR(after_step.breakdown.compute, overlapped.breakdown.compute, 1e-9);
  const double hidden = after_step.breakdown.dp_comm_exposed - overlapped.breakdown.dp_comm_exposed;
  // 4 micro-batches; a forward pass (its compute and tensor-parallel collectives) is under a
  // third of a micro-batch's time.
  const double forward_bound = (overlapped.breakdown.compute + overlapped.breakdown.tp_comm_exposed) / 4.0 / 3.0;
  EXPECT_GT(hidden, 0.5 * forward_bound);
  EXPECT_LE(hidden, forward_bound);
  EXPECT_GT(overlapped.breakdown.dp_comm_exposed, 0.005);
  EXPECT_NEAR(overlapped.iteration_time_s - after_step.iteration_time_s, -hidden, 1e-6);
}

}  // namespace
}  // namespace trainsim::parallelism

namespace trainsim::parallelism {
namespace {

// FP8 weights (training.fp8_param_gather) are gathered in 1 byte per parameter. Llama 3 8B on
// tp 8 x dp 2 as above, the gather after the optimizer step: each GPU receives its partner's
// half of its 1.0 B-parameter tensor-parallel shard, 1.0 GB in bf16 over its 400 Gb/s NIC
// (20 ms), 0.5 GB in FP8 (10 ms).
TEST(ZeroShardingTest, Fp8ParametersHalveTheParameterGather) {
  const std::string yaml =
      "model: llama3-8b\ncluster: dgx-h100\n"
      "training: {seq_len: 2048, global_batch_size: 8, micro_batch_size: 1, precision: fp8, fp8_param_gather: ";
  const std::string plan =
      "}\nparallelism: {gpus: 16, tp: 8, pp: 1, dp: 2, zero: 1, overlap_grad_reduce: true, "
      "overlap_param_gather: false}\n";
  const IterationResult sixteen_bit = simulateYaml(yaml + "false" + plan);
  const IterationResult fp8 = simulateYaml(yaml + "true" + plan);
  const double saved = sixteen_bit.breakdown.dp_comm_exposed - fp8.breakdown.dp_comm_exposed;
  EXPECT_NEAR(saved, 0.010, 0.0015);
  EXPECT_NEAR(sixteen_bit.iteration_time_s - fp8.iteration_time_s, saved, 0.001);
  // The weights held: bf16 + FP8 weight and transpose (4 bytes) against FP8 weight and transpose (2).
  EXPECT_NEAR(fp8.memory.peak().weights / sixteen_bit.memory.peak().weights, 0.5, 1e-12);
}

}  // namespace
}  // namespace trainsim::parallelism
