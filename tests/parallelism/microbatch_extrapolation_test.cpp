// Micro-batch extrapolation (parallelism/iteration_simulation.*): an iteration of many
// micro-batches is simulated at two smaller counts and extended linearly. It must agree
// with simulating every micro-batch, for each schedule, and cost a fraction of it.
#include <gtest/gtest.h>

#include <string>

#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_simulation.h"

namespace trainsim::parallelism {
namespace {

Experiment experimentFrom(const std::string& yaml) {
  auto experiment = loadExperimentNode(parseConfigText(yaml, "test.yaml"), ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS});
  if (!experiment.ok()) throw std::runtime_error(experiment.error().toString());
  return std::move(experiment).value();
}

IterationResult simulate(const Experiment& experiment, bool every_microbatch) {
  SimulationOptions options;
  options.every_microbatch = every_microbatch;
  auto result = simulateIteration(experiment, options);
  if (!result.ok()) throw std::runtime_error(result.error().toString());
  return std::move(result).value();
}

// Llama 3 8B on 2 DGX H100 nodes, `microbatches` micro-batches per data-parallel replica.
std::string plan(const std::string& parallelism, int microbatches, int dp) {
  return "model: llama3-8b\ncluster: dgx-h100\n"
         "training: {seq_len: 2048, global_batch_size: " +
         std::to_string(microbatches * dp) + ", micro_batch_size: 1}\nparallelism: " + parallelism + "\n";
}

void expectExtrapolationMatchesFullSimulation(const std::string& yaml) {
  const Experiment experiment = experimentFrom(yaml);
  const IterationResult full = simulate(experiment, true);
  const IterationResult fast = simulate(experiment, false);
  ASSERT_TRUE(fast.extrapolation.has_value()) << yaml;
  EXPECT_FALSE(full.extrapolation.has_value());
  EXPECT_EQ(fast.microbatches, full.microbatches);
  const double t = full.iteration_time_s;
  EXPECT_NEAR(fast.iteration_time_s, t, 2e-3 * t) << yaml;
  EXPECT_NEAR(fast.breakdown.compute, full.breakdown.compute, 5e-3 * t) << yaml;
  EXPECT_NEAR(fast.breakdown.pipeline_bubble, full.breakdown.pipeline_bubble, 5e-3 * t) << yaml;
  EXPECT_NEAR(fast.breakdown.tp_comm_exposed, full.breakdown.tp_comm_exposed, 5e-3 * t) << yaml;
  EXPECT_NEAR(fast.breakdown.dp_comm_exposed, full.breakdown.dp_comm_exposed, 5e-3 * t) << yaml;
  EXPECT_NEAR(fast.breakdown.pp_comm_exposed, full.breakdown.pp_comm_exposed, 5e-3 * t) << yaml;
  EXPECT_NEAR(fast.tokens_per_s, full.tokens_per_s, 2e-3 * full.tokens_per_s);
  // The cost does not grow with gradient accumulation: twice the micro-batches, the same
  // two simulations.
  Experiment doubled = experiment;
  doubled.training.global_batch_size *= 2;
  const IterationResult twice = simulate(doubled, false);
  EXPECT_EQ(twice.tasks, fast.tasks) << yaml;
  EXPECT_EQ(twice.events, fast.events) << yaml;
  EXPECT_GT(twice.iteration_time_s, 1.9 * fast.iteration_time_s) << yaml;
}

TEST(MicrobatchExtrapolationTest, OneFOneBMatchesEveryMicrobatch) {
  expectExtrapolationMatchesFullSimulation(plan("{gpus: 16, tp: 2, pp: 4, dp: 2}", 64, 2));
}

TEST(MicrobatchExtrapolationTest, InterleavedMatchesEveryMicrobatch) {
  expectExtrapolationMatchesFullSimulation(plan("{gpus: 16, tp: 2, pp: 4, dp: 2, virtual_stages: 2}", 64, 2));
}

TEST(MicrobatchExtrapolationTest, GPipeMatchesEveryMicrobatch) {
  expectExtrapolationMatchesFullSimulation(plan("{gpus: 16, tp: 2, pp: 4, dp: 2, schedule: gpipe}", 64, 2));
}

TEST(MicrobatchExtrapolationTest, DataParallelWithZeroMatchesEveryMicrobatch) {
  expectExtrapolationMatchesFullSimulation(plan("{gpus: 16, tp: 2, pp: 1, dp: 8, zero: 1}", 48, 8));
}

TEST(MicrobatchExtrapolationTest, FewMicrobatchesAreSimulatedInFull) {
  EXPECT_FALSE(
      microbatchExtrapolation(experimentFrom(plan("{gpus: 16, tp: 2, pp: 4, dp: 2}", 12, 2)).plan, 12).has_value());
  const auto extrapolation =
      microbatchExtrapolation(experimentFrom(plan("{gpus: 16, tp: 2, pp: 4, dp: 2}", 64, 2)).plan, 64);
  ASSERT_TRUE(extrapolation.has_value());
  EXPECT_EQ(extrapolation->first, 4);
  EXPECT_EQ(extrapolation->second, 8);
}

}  // namespace
}  // namespace trainsim::parallelism
