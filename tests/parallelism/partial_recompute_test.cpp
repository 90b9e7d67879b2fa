// Full recomputation of only some layers per model chunk (parallelism.recompute_num_layers,
// Megatron-LM's --recompute-method block): the plan's rules, the chunk's parts, and that time,
// hardware FLOPs and memory fall between no recomputation and full recomputation in
// proportion to the layers recomputed.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "parallelism/chunk_workload.h"
#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_simulation.h"
#include "parallelism/memory_model.h"
#include "parallelism/pass_work.h"
#include "parallelism/plan_validation.h"
#include "parallelism/transformer_workload.h"
#include "tests/parallelism/model_builders.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::parallelism {
namespace {

// Llama 3 8B (32 layers) on one DGX H100, data parallel; `sets` override it.
Experiment experimentWith(const std::vector<std::string>& sets) {
  const std::string yaml = R"(
name: partial-recompute
model: llama3-8b
cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}
training: {seq_len: 4096, global_batch_size: 16, micro_batch_size: 1}
parallelism: {tp: 1, pp: 1, zero: 1, recompute: full}
)";
  std::vector<Override> overrides;
  for (const auto& set : sets) overrides.push_back(parseOverride(set));
  auto experiment =
      loadExperimentNode(parseConfigText(yaml, "test.yaml"), ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS}, overrides);
  if (!experiment.ok()) throw std::runtime_error(experiment.error().toString());
  return std::move(experiment).value();
}

std::string loadError(const std::vector<std::string>& sets) {
  try {
    experimentWith(sets);
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  return {};
}

IterationResult simulate(const Experiment& experiment) {
  auto result = simulateIteration(experiment, shippedSimulationOptions());
  if (!result.ok()) throw std::runtime_error(result.error().toString());
  return std::move(result).value();
}

TEST(PartialRecompute, CountsTheFirstLayersOfEachChunk) {
  ParallelPlan plan;
  EXPECT_EQ(plan.recomputedLayersOfChunk(8), 0);  // recompute: none
  plan.recompute = Recompute::kFull;
  EXPECT_EQ(plan.recomputedLayersOfChunk(8), 8);
  plan.recompute_num_layers = 3;
  EXPECT_EQ(plan.recomputedLayersOfChunk(8), 3);
  EXPECT_EQ(plan.recomputedLayersOfChunk(2), 2);
  EXPECT_TRUE(plan.partialRecompute(8));
  EXPECT_FALSE(plan.partialRecompute(3));
  // pp 2 x 2 chunks of 16 layers: 4 layers per chunk, so 4 or more recomputes every layer.
  plan.pp = 2;
  plan.virtual_stages = 2;
  EXPECT_TRUE(plan.partialRecompute(16));
  plan.recompute_num_layers = 4;
  EXPECT_FALSE(plan.partialRecompute(16));
}

TEST(PartialRecompute, TheRestOfAChunkRunsWithoutRecomputation) {
  const Experiment experiment = experimentWith({"parallelism.recompute_num_layers=12"});
  const std::vector<ChunkPart> parts = chunkWorkloads(experiment, 0, 0, FlopsOptions{});
  std::vector<const ChunkPart*> layers;
  for (const ChunkPart& part : parts) {
    if (part.recomputable) layers.push_back(&part);
  }
  ASSERT_EQ(layers.size(), 2U);
  EXPECT_EQ(layers[0]->repeats, 12.0);
  EXPECT_EQ(recomputeOf(*layers[0], experiment.plan), Recompute::kFull);
  EXPECT_EQ(layers[1]->repeats, 20.0);
  EXPECT_EQ(recomputeOf(*layers[1], experiment.plan), Recompute::kNone);
  // Every layer recomputed: one part, as without the key.
  const Experiment all = experimentWith({"parallelism.recompute_num_layers=32"});
  int layer_parts = 0;
  for (const ChunkPart& part : chunkWorkloads(all, 0, 0, FlopsOptions{})) layer_parts += part.recomputable ? 1 : 0;
  EXPECT_EQ(layer_parts, 1);
}

TEST(PartialRecompute, NeedsFullRecomputationAndAtMostTheModelsLayers) {
  EXPECT_NE(loadError({"parallelism.recompute=selective", "parallelism.recompute_num_layers=4"})
                .find("recompute_num_layers = 4 needs recompute: full"),
            std::string::npos);
  EXPECT_NE(loadError({"parallelism.recompute=none", "parallelism.recompute_num_layers=4"})
                .find("parallelism.recompute_num_layers"),
            std::string::npos);
  EXPECT_NE(loadError({"parallelism.recompute_num_layers=33"}).find("exceeds the model's 32 layers"),
            std::string::npos);
  EXPECT_NE(loadError({"parallelism.recompute_num_layers=0"}).find("expected a positive integer"), std::string::npos);
  EXPECT_EQ(loadError({"parallelism.recompute_num_layers=32"}), "");
}

// Without pipeline parallelism each layer's recomputation costs the same, so recomputing
// half the layers costs half of what recomputing all of them does.
TEST(PartialRecompute, HalfTheLayersCostHalfTheRecomputation) {
  const double none = simulate(experimentWith({"parallelism.recompute=none"})).iteration_time_s;
  const double full = simulate(experimentWith({})).iteration_time_s;
  const double half = simulate(experimentWith({"parallelism.recompute_num_layers=16"})).iteration_time_s;
  ASSERT_LT(none, full);
  EXPECT_NEAR((half - none) / (full - none), 0.5, 0.02);
  // All of them: the same as without the key.
  EXPECT_EQ(simulate(experimentWith({"parallelism.recompute_num_layers=32"})).iteration_time_s, full);
}

TEST(PartialRecompute, HardwareFlopsCountTheRecomputedLayersOnly) {
  const Experiment experiment = experimentWith({});
  const double model = modelFlopsPerIteration(experiment.model, experiment.training);
  const double full = hardwareFlopsPerIteration(experiment.model, experiment.training, experiment.plan);
  ParallelPlan plan = experiment.plan;
  plan.recompute_num_layers = 8;
  EXPECT_NEAR((hardwareFlopsPerIteration(experiment.model, experiment.training, plan) - model) / (full - model), 0.25,
              1e-12);
  // pp 2 x 2 chunks of 8 layers, 2 recomputed in each: 8 of 32.
  plan.pp = 2;
  plan.virtual_stages = 2;
  plan.recompute_num_layers = 2;
  EXPECT_NEAR((hardwareFlopsPerIteration(experiment.model, experiment.training, plan) - model) / (full - model), 0.25,
              1e-12);
}

TEST(PartialRecompute, KeptLayersHoldAllTheirActivations) {
  const Experiment experiment = experimentWith({"parallelism.recompute_num_layers=12"});
  const MemoryOptions options;
  const MemoryReport report = estimateMemory(experiment, options);
  ASSERT_EQ(report.stages.size(), 1U);
  const MicroBatchShard shard = MicroBatchShard::of(experiment.training, experiment.plan);
  const MemoryOptions kernels = [&] {
    MemoryOptions o = options;
    o.kernels = kernelsFor(experiment, options.kernels);
    return o;
  }();
  const double input = layerActivationBytes(experiment.model, shard, Recompute::kFull, kernels);
  const double all = layerActivationBytes(experiment.model, shard, Recompute::kNone, kernels);
  // One micro-batch in flight: 12 layers' inputs, 20 layers' activations, and the working
  // set of one recomputed layer.
  const StageMemory& stage = report.stages.front();
  const MemoryReport full = estimateMemory(experimentWith({}), options);
  const double embedding_and_loss = full.stages.front().activations - (32.0 * input + all);
  EXPECT_NEAR(stage.activations, 12.0 * input + 20.0 * all + all + embedding_and_loss, 1e-6 * stage.activations);
  EXPECT_NEAR(stage.activation_per_layer, (12.0 * input + 20.0 * all) / 32.0, 1e-9 * all);
  const MemoryReport none = estimateMemory(experimentWith({"parallelism.recompute=none"}), options);
  EXPECT_LT(full.stages.front().activations, stage.activations);
  EXPECT_LT(stage.activations, none.stages.front().activations);
}

}  // namespace
}  // namespace trainsim::parallelism
