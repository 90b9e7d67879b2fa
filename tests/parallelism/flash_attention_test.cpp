// training.flash_attention (parallelism/training_spec.h) reaches every model built from an
// experiment (kernelsFor, parallelism/experiment.h): `false` times attention as the unfused
// path (score and context GEMMs with softmax and dropout kernels between them) and keeps the
// s x s softmax output and dropout mask in activation memory.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_simulation.h"
#include "parallelism/memory_model.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::parallelism {
namespace {

// A small GPT at a long sequence (4 layers, h 1024, 16 heads, s 4096) on one DGX H100 node,
// where the s x s attention matrices dominate activation memory.
Experiment longSequenceGpt(const std::string& flash_attention) {
  const std::string yaml = R"(model:
  name: gpt-long
  architecture: gpt
  layers: 4
  hidden_size: 1024
  attention_heads: 16
  vocab_size: 51200
cluster: dgx-h100
training:
  seq_len: 4096
  global_batch_size: 16
  micro_batch_size: 1
)" + flash_attention + R"(parallelism: {gpus: 8, tp: 2, pp: 2, dp: 2}
)";
  auto experiment = loadExperimentNode(parseConfigText(yaml, "test.yaml"), ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS},
                                       {parseOverride("cluster.nodes=1")});
  if (!experiment.ok()) throw std::runtime_error(experiment.error().toString());
  return std::move(experiment).value();
}

IterationResult simulate(const Experiment& experiment) {
  SimulationOptions options = shippedSimulationOptions();
  options.iteration.symmetric = true;
  auto result = simulateIteration(experiment, options);
  if (!result.ok()) throw std::runtime_error(result.error().toString());
  return std::move(result).value();
}

TEST(FlashAttentionTest, DefaultsToTrueAndLoadsFalse) {
  EXPECT_TRUE(longSequenceGpt("").training.flash_attention);
  EXPECT_TRUE(longSequenceGpt("  flash_attention: true\n").training.flash_attention);
  EXPECT_FALSE(longSequenceGpt("  flash_attention: false\n").training.flash_attention);
}

TEST(FlashAttentionTest, UnfusedAttentionIsSlowerAndHoldsTheScores) {
  const IterationResult fused = simulate(longSequenceGpt(""));
  const IterationResult unfused = simulate(longSequenceGpt("  flash_attention: false\n"));
  EXPECT_GT(unfused.iteration_time_s, fused.iteration_time_s);
  EXPECT_GT(unfused.breakdown.compute, fused.breakdown.compute);
  // The softmax output (2 bytes), dropout mask (1) and dropout output (2) of 16 / tp heads x
  // s x s per layer: 2.5 GiB on the first stage's 2 layers x 2 micro-batches in flight.
  const double added = unfused.memory.peak().activations - fused.memory.peak().activations;
  EXPECT_GT(added, 2.0 * 1024 * 1024 * 1024);
  EXPECT_GT(unfused.memory.peakBytes(), fused.memory.peakBytes());
  // Counted FLOPs are the same matmuls either way.
  EXPECT_DOUBLE_EQ(unfused.model_flops, fused.model_flops);
  EXPECT_DOUBLE_EQ(unfused.hardware_flops, fused.hardware_flops);
}

TEST(FlashAttentionTest, TheExperimentWinsOverTheDefaultAndCodeMayStillAskForUnfused) {
  const Experiment flash = longSequenceGpt("");
  const Experiment no_flash = longSequenceGpt("  flash_attention: false\n");
  MemoryOptions unfused_in_code;
  unfused_in_code.kernels.fused_attention = false;
  // flash_attention: false overrides FlopsOptions' default (fused) ...
  EXPECT_GT(estimateMemory(no_flash).peakBytes(), estimateMemory(flash).peakBytes());
  // ... and code asking for the unfused path gets it whatever the experiment says (kernelsFor: both must allow fusing).
  EXPECT_DOUBLE_EQ(estimateMemory(flash, unfused_in_code).peakBytes(), estimateMemory(no_flash).peakBytes());
  EXPECT_DOUBLE_EQ(estimateMemory(no_flash, unfused_in_code).peakBytes(), estimateMemory(no_flash).peakBytes());
  EXPECT_TRUE(kernelsFor(flash, {}).fused_attention);
  EXPECT_FALSE(kernelsFor(no_flash, {}).fused_attention);
  EXPECT_FALSE(kernelsFor(flash, unfused_in_code.kernels).fused_attention);
}

}  // namespace
}  // namespace trainsim::parallelism
