// The sweep's screen (sweep/iteration_estimate.h) of the zero-bubble schedule against the
// event simulation: the fill and drain shrink by the deferred weight-gradient passes.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_simulation.h"
#include "sweep/iteration_estimate.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::sweep {
namespace {

// Llama 2 70B on 64 H100, tp 8 x pp 8, 64 micro-batches.
parallelism::Experiment llama70bOn64(const std::string& schedule) {
  const std::string yaml =
      "model: llama2-70b\ncluster: dgx-h100\ntraining: {seq_len: 4096, global_batch_size: 64, micro_batch_size: 1, "
      "precision: bf16}\nparallelism: {gpus: 64, tp: 8, pp: 8, dp: 1, sequence_parallel: true, schedule: " +
      schedule + ", recompute: selective}\n";
  auto experiment =
      parallelism::loadExperimentNode(parseConfigText(yaml, "test.yaml"), ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS},
                                      {parseOverride("cluster.nodes=8")});
  if (!experiment.ok()) throw std::runtime_error(experiment.error().toString());
  return std::move(experiment).value();
}

TEST(ZeroBubbleScreen, PricesTheScheduleAsTheSimulationRunsIt) {
  parallelism::SimulationOptions options = shippedSimulationOptions();
  options.iteration.symmetric = true;
  double estimates[2] = {};
  double simulated[2] = {};
  int i = 0;
  for (const std::string schedule : {"1f1b", "zero_bubble"}) {
    const parallelism::Experiment experiment = llama70bOn64(schedule);
    IterationEstimator estimator(experiment.cluster, experiment.training.precision, options);
    estimates[i] = estimator.iterationSeconds(experiment);
    auto result = parallelism::simulateIteration(experiment, options);
    ASSERT_TRUE(result.ok()) << result.error().toString();
    simulated[i] = result->iteration_time_s;
    EXPECT_NEAR(estimates[i] / simulated[i], 1.0, 0.1) << schedule;
    ++i;
  }
  // Both see what the schedule saves, and about alike.
  EXPECT_LT(estimates[1], estimates[0]);
  EXPECT_NEAR((estimates[0] - estimates[1]) / (simulated[0] - simulated[1]), 1.0, 0.35);
}

// The screen's estimate of an experiment over its simulated (symmetric) iteration time.
double screenOverSimulation(const std::string& yaml, const std::string& nodes) {
  parallelism::SimulationOptions options = shippedSimulationOptions();
  options.iteration.symmetric = true;
  auto experiment =
      parallelism::loadExperimentNode(parseConfigText(yaml, "test.yaml"), ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS},
                                      {parseOverride("cluster.nodes=" + nodes)});
  if (!experiment.ok()) throw std::runtime_error(experiment.error().toString());
  IterationEstimator estimator(experiment->cluster, experiment->training.precision, options);
  const double estimate = estimator.iterationSeconds(*experiment);
  auto result = parallelism::simulateIteration(*experiment, options);
  if (!result.ok()) throw std::runtime_error(result.error().toString());
  return estimate / result->iteration_time_s;
}

// Qi et al.'s 6.2B model (30 layers) on 16 A100, micro-batch 6, 48 micro-batches, as zbv with
// layerless ends (V: 0 + 30 x 1 + 0): the first GPU's first chunk holds no layer to price the
// others from, and the screen prices each chunk from its own parts.
TEST(ZeroBubbleScreen, PricesAVWithLayerlessEnds) {
  EXPECT_NEAR(screenOverSimulation(
                  "model: {name: gpt-6.2b, architecture: gpt, layers: 30, hidden_size: 4096, attention_heads: 32, "
                  "vocab_size: 51200}\ncluster: dgx-a100\ntraining: {seq_len: 1024, global_batch_size: 288, "
                  "micro_batch_size: 6, precision: fp16}\nparallelism: {gpus: 16, tp: 1, pp: 16, dp: 1, recompute: "
                  "none, schedule: zbv, virtual_stages: 2, first_stage_layers: 0, last_stage_layers: 0}\n",
                  "2"),
              1.0, 0.05);
}

// DualPipe runs half the micro-batches through each of a GPU's two chunks: the screen prices
// them so (it priced every micro-batch through both, twice the simulated time).
TEST(ZeroBubbleScreen, PricesDualPipesTwoDirections) {
  EXPECT_NEAR(
      screenOverSimulation("model: llama2-70b\ncluster: dgx-h100\ntraining: {seq_len: 4096, global_batch_size: 64, "
                           "micro_batch_size: 1, precision: bf16}\nparallelism: {gpus: 64, tp: 8, pp: 8, dp: 1, "
                           "sequence_parallel: true, schedule: dualpipe, virtual_stages: 2, recompute: selective}\n",
                           "8"),
      1.0, 0.1);
}

}  // namespace
}  // namespace trainsim::sweep
