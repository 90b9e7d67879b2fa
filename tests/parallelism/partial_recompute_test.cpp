// Full recomputation of only some layers per model chunk (parallelism.recompute_num_layers,
// Megatron-LM's --recompute-method block): the plan's rules, the chunk's parts, and that time,
// hardware FLOPs and memory fall between no recomputation and full recomputation in
// proportion to the layers recomputed.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
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
#include "tests/parallelism/test_support.h"
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
  return testing::shippedExperiment(yaml, sets);
}

// What the unfused bf16 loss holds at its peak beyond what it keeps: the 16-bit logits (one
// fp32 copy, the shipped memory.yaml's unfused_loss_fp32_copies_at_peak, is the kept one).
double lossPeakBytes(const Experiment& experiment) {
  const MicroBatchShard shard = MicroBatchShard::of(experiment.training, experiment.plan);
  return 2.0 * shard.tokens() * static_cast<double>(experiment.model.vocab_size);
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
  // One micro-batch in flight: 12 layers' inputs and 20 layers' activations. The backward
  // frees the kept layers' before it recomputes a layer, so no working set adds to them
  // (with every layer recomputed it adds one layer's activations).
  // The unfused loss's peak (the 16-bit logits beside its fp32 copy, 2 bytes per logit more
  // than it keeps) comes before any recomputation: it adds what exceeds the working set.
  const StageMemory& stage = report.stages.front();
  const MemoryReport full = estimateMemory(experimentWith({}), options);
  const double loss_peak = lossPeakBytes(experiment);
  const double embedding_and_loss =
      full.stages.front().activations - (32.0 * input + all) - std::max(0.0, loss_peak - all);
  EXPECT_NEAR(stage.activations, 12.0 * input + 20.0 * all + embedding_and_loss + loss_peak, 1e-6 * stage.activations);
  EXPECT_NEAR(stage.activation_per_layer, (12.0 * input + 20.0 * all) / 32.0, 1e-9 * all);
  const MemoryReport none = estimateMemory(experimentWith({"parallelism.recompute=none"}), options);
  EXPECT_LT(full.stages.front().activations, stage.activations);
  EXPECT_LT(stage.activations, none.stages.front().activations);
}

// pp 2 x 2 chunks of 8 layers, 3 recomputed in each: every stage holds, per micro-batch in
// flight, 2 x 5 kept layers' activations where full recomputation holds their inputs, and
// needs no recomputed layer's working set on top (the kept layers free theirs first).
TEST(PartialRecompute, MemoryCountsEachChunksLayers) {
  const std::vector<std::string> plan{"parallelism.pp=2", "parallelism.virtual_stages=2"};
  auto with = [&](std::vector<std::string> sets) {
    sets.insert(sets.end(), plan.begin(), plan.end());
    return experimentWith(sets);
  };
  const Experiment partial = with({"parallelism.recompute_num_layers=3"});
  const MemoryOptions options;
  const MemoryReport report = estimateMemory(partial, options);
  const MemoryReport full = estimateMemory(with({}), options);
  MemoryOptions kernels = options;
  kernels.kernels = kernelsFor(partial, options.kernels);
  const MicroBatchShard shard = MicroBatchShard::of(partial.training, partial.plan);
  const double input = layerActivationBytes(partial.model, shard, Recompute::kFull, kernels);
  const double all = layerActivationBytes(partial.model, shard, Recompute::kNone, kernels);
  ASSERT_EQ(report.stages.size(), 2U);
  const double loss_peak = lossPeakBytes(partial);
  for (std::size_t stage = 0; stage < 2; ++stage) {
    const auto in_flight = static_cast<double>(report.stages[stage].in_flight);
    // The last stage's loss peak, beyond full recomputation's working set there.
    const double loss = stage == 1 ? loss_peak - std::max(0.0, loss_peak - all) : 0.0;
    EXPECT_NEAR(report.stages[stage].activations - full.stages[stage].activations,
                in_flight * 2.0 * 5.0 * (all - input) / 2.0 - all + loss, 1e-9 * report.stages[stage].activations)
        << stage;
  }
}

// Layers of two kinds (GPT-OSS alternates sliding-window and full attention): the recomputed
// part holds the chunk's first layers, the kept part the rest, each with its own kinds.
TEST(PartialRecompute, ThePartsHoldTheirOwnLayersKinds) {
  const Experiment experiment =
      experimentWith({"model=gpt-oss-120b", "parallelism.recompute_num_layers=3", "training.seq_len=8192"});
  ASSERT_FALSE(experiment.model.uniformLayers());
  const MicroBatchShard shard = MicroBatchShard::of(experiment.training, experiment.plan);
  const FlopsOptions flops = kernelsFor(experiment, FlopsOptions{});
  auto flopsOf = [&](int64_t first, int64_t count) {
    double total = 0.0;
    for (const LayerKindCount& group : experiment.model.layerKinds(first, count)) {
      total += static_cast<double>(group.count) *
               transformerLayer(experiment.model, shard, flops, group.kind).forwardFlops(true);
    }
    return total;
  };
  double recomputed = 0.0;
  double kept = 0.0;
  for (const ChunkPart& part : chunkWorkloads(experiment, 0, 0, FlopsOptions{})) {
    if (!part.recomputable) continue;
    (part.beyond_recompute_layers ? kept : recomputed) += part.repeats * part.workload.forwardFlops(true);
  }
  const int64_t layers = experiment.model.layers;
  EXPECT_NEAR(recomputed, flopsOf(0, 3), 1e-12 * recomputed);
  EXPECT_NEAR(kept, flopsOf(3, layers - 3), 1e-12 * kept);
  // The two kinds differ in cost, so the other split would not give these sums.
  EXPECT_GT(std::abs(kept - flopsOf(0, layers - 3)), 1e-6 * kept);
}

// With pipeline parallelism and interleaving the partial plan's step lies between none and full.
TEST(PartialRecompute, APipelinedStepLiesBetweenNoneAndFull) {
  const std::vector<std::string> plan{"parallelism.pp=2", "parallelism.virtual_stages=2"};
  auto time = [&](std::vector<std::string> sets) {
    sets.insert(sets.end(), plan.begin(), plan.end());
    return simulate(experimentWith(sets)).iteration_time_s;
  };
  const double none = time({"parallelism.recompute=none"});
  const double full = time({});
  const double partial = time({"parallelism.recompute_num_layers=4"});
  EXPECT_LT(none, partial);
  EXPECT_LT(partial, full);
  EXPECT_NEAR((partial - none) / (full - none), 0.5, 0.1);
}

}  // namespace
}  // namespace trainsim::parallelism
