// The zero-bubble pipeline schedule (parallelism.schedule: zero_bubble): each backward split
// into its input-gradient pass (B) and its weight-gradient pass (W), the W passes deferred as
// torch.distributed.pipelining's ScheduleInterleavedZeroBubble orders them (ZB-H1 of Qi et al.
// 2024 at one chunk). Its order, the bubble it leaves, what it holds in memory, and the
// simulation and the sweep's screen of a real plan with it.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_simulation.h"
#include "parallelism/memory_model.h"
#include "parallelism/pipeline_schedule.h"
#include "tests/parallelism/pipeline_timing.h"
#include "tests/parallelism/test_support.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::parallelism {
namespace {

using testing::computeOnlyPipelineTime;
using testing::errorText;
using testing::orderText;
using testing::pipelinePlan;
using testing::shippedExperiment;
using testing::testPaths;

TEST(ZeroBubbleSchedule, OrdersThePassesAsTorchPipelining) {
  // 4 stages, 8 micro-batches: stage s warms up with 3 - s forwards and defers each W by s
  // input-gradient passes (_get_1f1b_rank_ops with enable_zero_bubble, num_1f1b_microbatches = rank).
  EXPECT_EQ(orderText(stageOrder(PipelineSchedule::kZeroBubble, 4, 1, 8, 0)),
            "F0 F1 F2 F3 B0 W0 F4 B1 W1 F5 B2 W2 F6 B3 W3 F7 B4 W4 B5 W5 B6 W6 B7 W7");
  EXPECT_EQ(orderText(stageOrder(PipelineSchedule::kZeroBubble, 4, 1, 8, 3)),
            "F0 B0 F1 B1 F2 B2 F3 B3 W0 F4 B4 W1 F5 B5 W2 F6 B6 W3 F7 B7 W4 W5 W6 W7");
  // Two chunks: 4 more warm-up forwards (the other chunk's round), chunks alternating every 4
  // micro-batches, backwards from the last chunk.
  EXPECT_EQ(orderText(stageOrder(PipelineSchedule::kZeroBubble, 4, 2, 4, 3)),
            "F0 F1 F2 F3 F0c1 B0c1 F1c1 B1c1 F2c1 B2c1 F3c1 B3c1 W0c1 B0 W1c1 B1 W2c1 B2 W3c1 B3 W0 W1 W2 W3");
}

TEST(ZeroBubbleSchedule, RunsEveryPassOnceAndEachWeightPassAfterItsBackward) {
  for (int64_t chunks : {1, 2}) {
    for (int64_t stage = 0; stage < 4; ++stage) {
      const std::vector<PipelineStep> order = stageOrder(PipelineSchedule::kZeroBubble, 4, chunks, 8, stage);
      ASSERT_EQ(order.size(), static_cast<std::size_t>(3 * 8 * chunks));
      const StepIndex index(order, chunks, 8);
      for (int32_t chunk = 0; chunk < chunks; ++chunk) {
        for (int32_t mb = 0; mb < 8; ++mb) {
          const std::size_t f = index({PassKind::kForward, mb, chunk});
          const std::size_t b = index({PassKind::kBackward, mb, chunk});
          const std::size_t w = index({PassKind::kWeight, mb, chunk});
          EXPECT_LT(f, b);
          EXPECT_LT(b, w);
          EXPECT_EQ(order[w], (PipelineStep{PassKind::kWeight, mb, chunk}));
          const auto upstream = upstreamSteps(4, chunks, stage, order[w]);
          ASSERT_EQ(upstream.size(), 1u);
          EXPECT_EQ(upstream.front().stage, stage);
          EXPECT_EQ(upstream.front().step, (PipelineStep{PassKind::kBackward, mb, chunk}));
        }
      }
    }
  }
}

TEST(ZeroBubbleSchedule, CutsTheBubbleToAThirdWhenThePassesTakeAlike) {
  // Qi et al. 2024, section 3.1: with T_F = T_B = T_W, ZB-H1's bubble (p - 1)(T_F + T_B - T_W)
  // is a third of 1F1B's (p - 1)(T_F + T_B + T_W).
  const sim::SimTime t = 1000;
  for (int64_t p : {2, 4, 8}) {
    for (int64_t m : {8, 16}) {
      const sim::SimTime ideal = m * 3 * t;
      EXPECT_EQ(computeOnlyPipelineTime(pipelinePlan(PipelineSchedule::kOneFOneB, p), m, t, t, t) - ideal,
                (p - 1) * 3 * t);
      EXPECT_EQ(computeOnlyPipelineTime(pipelinePlan(PipelineSchedule::kZeroBubble, p), m, t, t, t) - ideal,
                (p - 1) * t)
          << "p=" << p << " m=" << m;
    }
  }
}

TEST(ZeroBubbleSchedule, HoldsNoMoreThanOneFOneBOnTheFirstStage) {
  for (int64_t stage = 0; stage < 4; ++stage) {
    const std::vector<PipelineStep> order = stageOrder(PipelineSchedule::kZeroBubble, 4, 1, 8, stage);
    // Forwards whose backward has not run: as 1F1B.
    EXPECT_EQ(peakInFlight(order), 4 - stage);
    // With the weight gradients' inputs held whole, every stage holds as many micro-batches as
    // the first one does (the deferral by `stage` passes fills the warm-up's shortfall).
    EXPECT_DOUBLE_EQ(peakHeld(order, 1.0), 4.0);
    // Nothing held between the passes: the forwards alone.
    EXPECT_DOUBLE_EQ(peakHeld(order, 0.0), static_cast<double>(4 - stage));
  }
  // The last stage: one forward in flight beside the three deferred weight passes.
  EXPECT_DOUBLE_EQ(peakHeld(stageOrder(PipelineSchedule::kZeroBubble, 4, 1, 8, 3), 0.25), 1.75);
}

TEST(ZeroBubbleSchedule, PlacesTheVSchedulesChunksInAV) {
  // ZB-V, 2 stages, 4 micro-batches, the last stage (torch's ScheduleZBVZeroBubble, rank 1):
  // its chunk 1 runs virtual stage 2, right after its own chunk 0 (virtual stage 1).
  EXPECT_EQ(orderText(stageOrder(PipelineSchedule::kZeroBubbleV, 2, 2, 4, 1)),
            "F0 F0c1 F1 F1c1 B0c1 W0c1 F2 B0 W0 F2c1 B1c1 W1c1 F3 B1 W1 F3c1 B2c1 W2c1 B2 B3c1 B3 W2 W3c1 W3");
  // DualPipeV, the same (dualpipev.py's eight steps, rank 1): steps 2, 4 and 6, whose second
  // half defers its weight passes to step 8.
  EXPECT_EQ(orderText(stageOrder(PipelineSchedule::kDualPipeV, 2, 2, 4, 1)),
            "F0 F0c1 F1 F1c1 F2 B0c1 W0c1 F2c1 B0 W0 F3 B1c1 W1c1 F3c1 B1 W1 B2c1 W2c1 B2 W2 B3c1 B3 W3c1 W3");
  ParallelPlan plan;
  plan.pp = 4;
  plan.virtual_stages = 2;
  plan.schedule = PipelineSchedule::kDualPipeV;
  EXPECT_EQ(plan.virtualStage(0, 1), 7);
  EXPECT_TRUE(plan.holdsOutput(0, 1));
  EXPECT_TRUE(plan.holdsEmbedding(0, 0));
  EXPECT_TRUE(plan.holdsOutputOn(0));
  EXPECT_FALSE(plan.holdsOutputOn(3));
  // The forward of virtual stage 4 (stage 3's chunk 1) follows virtual stage 3 (stage 3's chunk 0).
  const auto upstream = upstreamSteps(plan, 3, {PassKind::kForward, 5, 1});
  ASSERT_EQ(upstream.size(), 1u);
  EXPECT_EQ(upstream.front().stage, 3);
  EXPECT_EQ(upstream.front().step, (PipelineStep{PassKind::kForward, 5, 0}));
  for (const PipelineSchedule schedule : {PipelineSchedule::kZeroBubbleV, PipelineSchedule::kDualPipeV}) {
    for (int64_t stage = 0; stage < 4; ++stage) {
      const std::vector<PipelineStep> order = stageOrder(schedule, 4, 2, 10, stage);
      ASSERT_EQ(order.size(), 60u);
      const StepIndex index(order, 2, 10);
      for (int32_t chunk = 0; chunk < 2; ++chunk) {
        for (int32_t mb = 0; mb < 10; ++mb) {
          EXPECT_LT(index({PassKind::kForward, mb, chunk}), index({PassKind::kBackward, mb, chunk}));
          EXPECT_LT(index({PassKind::kBackward, mb, chunk}), index({PassKind::kWeight, mb, chunk}));
        }
      }
    }
  }
}

TEST(ZeroBubbleSchedule, TheVSchedulesLeaveLessBubbleThanOneChunk) {
  // Passes of t per chunk (2t for a stage's one chunk): ideal 6 m t.
  const sim::SimTime t = 1000;
  const int64_t p = 4, m = 16;
  ParallelPlan plan;
  plan.pp = p;
  plan.schedule = PipelineSchedule::kOneFOneB;
  const sim::SimTime one_f_one_b = computeOnlyPipelineTime(plan, m, 2 * t, 2 * t, 2 * t) - 6 * m * t;
  plan.schedule = PipelineSchedule::kZeroBubble;
  const sim::SimTime zero_bubble = computeOnlyPipelineTime(plan, m, 2 * t, 2 * t, 2 * t) - 6 * m * t;
  plan.virtual_stages = 2;
  plan.schedule = PipelineSchedule::kZeroBubbleV;
  const sim::SimTime zbv = computeOnlyPipelineTime(plan, m, t, t, t) - 6 * m * t;
  plan.schedule = PipelineSchedule::kDualPipeV;
  const sim::SimTime dualpipev = computeOnlyPipelineTime(plan, m, t, t, t) - 6 * m * t;
  EXPECT_EQ(one_f_one_b, (p - 1) * 6 * t);
  EXPECT_EQ(zero_bubble, (p - 1) * 2 * t);
  EXPECT_LT(zbv, zero_bubble);
  EXPECT_LT(dualpipev, one_f_one_b);
  EXPECT_GE(zbv, 0);
  EXPECT_GE(dualpipev, 0);
  std::cout << "bubble, p 4, m 16, t per chunk pass: 1f1b " << one_f_one_b / t << "t, zero_bubble " << zero_bubble / t
            << "t, zbv " << zbv / t << "t, dualpipev " << dualpipev / t << "t\n";
}

Experiment llama70bOn64(const std::string& schedule, int64_t tp = 8) {
  return shippedExperiment(
      "model: llama2-70b\ncluster: dgx-h100\ntraining: {seq_len: 4096, global_batch_size: 64, "
      "micro_batch_size: 1, precision: bf16}\nparallelism: {gpus: 64, tp: " +
          std::to_string(tp) + ", pp: 8, dp: " + std::to_string(8 / tp) +
          ", sequence_parallel: true, schedule: " + schedule + ", recompute: selective}\n",
      {"cluster.nodes=8"});
}

TEST(ZeroBubbleSchedule, MemoryKeepsWhatTheDeferredWeightPassesRead) {
  // Without tensor parallelism a weight pass reads about what the layer keeps (each linear's
  // input and its output's gradient): the later stages hold about as much as the first, which
  // holds what it holds under 1F1B.
  const MemoryReport one_f_one_b = estimateMemory(llama70bOn64("1f1b", 1));
  const MemoryReport zero_bubble = estimateMemory(llama70bOn64("zero_bubble", 1));
  ASSERT_EQ(zero_bubble.stages.size(), 8u);
  EXPECT_DOUBLE_EQ(zero_bubble.stages[0].activations, one_f_one_b.stages[0].activations);
  for (std::size_t stage = 1; stage + 1 < 8; ++stage) {
    EXPECT_EQ(zero_bubble.stages[stage].in_flight, one_f_one_b.stages[stage].in_flight);
    EXPECT_GT(zero_bubble.stages[stage].activations, one_f_one_b.stages[stage].activations);
    EXPECT_LE(zero_bubble.stages[stage].activations, 1.0001 * one_f_one_b.stages[0].activations);
  }
  // With sequence parallelism the weight passes read the all-gathered inputs and output
  // gradients where the layer keeps its 1/tp shard: the first stage holds more than under 1F1B.
  EXPECT_GT(estimateMemory(llama70bOn64("zero_bubble")).stages[0].activations,
            1.1 * estimateMemory(llama70bOn64("1f1b")).stages[0].activations);
}

TEST(ZeroBubbleSchedule, SimulatesAShorterBubbleThanOneFOneB) {
  parallelism::SimulationOptions options = shippedSimulationOptions();
  options.iteration.symmetric = true;
  auto one_f_one_b = simulateIteration(llama70bOn64("1f1b"), options);
  auto zero_bubble = simulateIteration(llama70bOn64("zero_bubble"), options);
  ASSERT_TRUE(one_f_one_b.ok()) << one_f_one_b.error().toString();
  ASSERT_TRUE(zero_bubble.ok()) << zero_bubble.error().toString();
  // The same work, less of the 7-stage fill and drain idle.
  EXPECT_NEAR(zero_bubble->breakdown.compute, one_f_one_b->breakdown.compute, 1e-6 * one_f_one_b->breakdown.compute);
  EXPECT_LT(zero_bubble->iteration_time_s, one_f_one_b->iteration_time_s);
  EXPECT_LT(zero_bubble->breakdown.pipeline_bubble, 0.8 * one_f_one_b->breakdown.pipeline_bubble);
  // The V schedules: two chunks of 5 layers per GPU, the output layer and the loss on the
  // first GPU beside the embedding.
  for (const std::string schedule : {"zbv", "dualpipev"}) {
    const Experiment experiment = shippedExperiment(
        "model: llama2-70b\ncluster: dgx-h100\ntraining: {seq_len: 4096, global_batch_size: 64, micro_batch_size: 1, "
        "precision: bf16}\nparallelism: {gpus: 64, tp: 8, pp: 8, dp: 1, virtual_stages: 2, sequence_parallel: true, "
        "schedule: " +
            schedule + ", recompute: selective}\n",
        {"cluster.nodes=8"});
    auto v = simulateIteration(experiment, options);
    ASSERT_TRUE(v.ok()) << v.error().toString();
    // The critical GPU, the first, computes the embedding and the output layer beside its layers.
    EXPECT_NEAR(v->breakdown.compute, one_f_one_b->breakdown.compute, 0.05 * one_f_one_b->breakdown.compute)
        << schedule;
    EXPECT_LT(v->iteration_time_s, one_f_one_b->iteration_time_s) << schedule;
    const MemoryReport memory = estimateMemory(experiment);
    EXPECT_GT(memory.stages[0].parameters.outside_layers, 1.9 * memory.stages[7].parameters.outside_layers) << schedule;
    std::cout << schedule << ": " << v->iteration_time_s << " s, bubble " << v->breakdown.pipeline_bubble
              << " s, peak memory " << memory.peakBytes() / 1073741824.0 << " GiB (1f1b "
              << one_f_one_b->iteration_time_s << " s, bubble " << one_f_one_b->breakdown.pipeline_bubble << " s)\n";
  }
}

TEST(ZeroBubbleSchedule, NeedsAPipeline) {
  const std::string yaml =
      "model: llama3-8b\ncluster: dgx-a100\nparallelism:\n  tp: 8\n  schedule: zero_bubble\n"
      "training: {seq_len: 4096, global_batch_size: 64}\n";
  EXPECT_EQ(errorText(loadExperimentNode(parseConfigText(yaml, "plan.yaml"), testPaths())),
            "plan.yaml:5:13: parallelism.schedule: zero_bubble fills a pipeline's bubbles and needs pp > 1 (pp = 1 "
            "has none); use schedule: 1f1b");
  const std::string v_yaml =
      "model: llama3-8b\ncluster: dgx-a100\nparallelism:\n  pp: 4\n  schedule: zbv\n"
      "training: {seq_len: 4096, global_batch_size: 64}\n";
  EXPECT_EQ(errorText(loadExperimentNode(parseConfigText(v_yaml, "plan.yaml"), testPaths())),
            "plan.yaml:4:3: parallelism.virtual_stages: zbv places two model chunks per GPU in a V; virtual_stages = "
            "1, expected 2");
  const std::string dual_yaml =
      "model: llama3-8b\ncluster: dgx-a100\nparallelism:\n  pp: 4\n  dp: 1\n  gpus: 4\n  virtual_stages: 2\n"
      "  schedule: dualpipev\ntraining: {seq_len: 4096, global_batch_size: 4}\n";
  EXPECT_EQ(errorText(loadExperimentNode(parseConfigText(dual_yaml, "plan.yaml"), testPaths())),
            "plan.yaml:9:46: training.global_batch_size: dualpipev needs at least 2 x pp = 8 micro-batches "
            "(dualpipev.py asserts it); global_batch_size / (dp x micro_batch_size) = 4");
}

}  // namespace
}  // namespace trainsim::parallelism
