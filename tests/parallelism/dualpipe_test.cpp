// DualPipe (parallelism.schedule: dualpipe): DeepSeek's bidirectional schedule, half the
// micro-batches from the first GPU to the last and half back, each GPU holding its stage of the
// first direction (chunk 0) and the mirror stage of the second (chunk 1). Its order against
// dualpipe.py, the placement, what checkPlan refuses, the bubble it leaves and a simulated plan.
#include <gtest/gtest.h>

#include <iostream>
#include <string>
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

TEST(DualPipe, OrdersThePassesAsDualPipePy) {
  // 4 GPUs, 8 micro-batches (4 each way); c1 = the second direction. Written from
  // deepseek-ai/DualPipe dualpipe.py DualPipe.step at 3da1bbe, its compute calls only, with
  // each phase turned into its direction (phase ^ is_in_second_half).
  EXPECT_EQ(orderText(stageOrder(PipelineSchedule::kDualPipe, 4, 2, 8, 0)),
            "F0 F1 F2 F0c1 B0c1 W0c1 F1c1 F3 B1c1 W1c1 F2c1 B0 W0 B2c1 W2c1 F3c1 B1 W1 B3c1 W3c1 B2 W2 B3 W3");
  EXPECT_EQ(orderText(stageOrder(PipelineSchedule::kDualPipe, 4, 2, 8, 1)),
            "F0 F0c1 F1 F1c1 F2 B0c1 W0c1 F2c1 B0 W0 F3 B1c1 W1c1 F3c1 B1 W1 B2c1 W2c1 B2 W2 B3c1 B3 W3c1 W3");
  EXPECT_EQ(orderText(stageOrder(PipelineSchedule::kDualPipe, 4, 2, 8, 3)),
            "F0c1 F1c1 F2c1 F0 B0 W0 F1 F3c1 B1 W1 F2 B0c1 W0c1 B2 W2 F3 B1c1 W1c1 B3 W3 B2c1 W2c1 B3c1 W3c1");
}

TEST(DualPipe, EachDirectionIsAPipelineOfItsOwn) {
  ParallelPlan plan = pipelinePlan(PipelineSchedule::kDualPipe, 4, 2);
  // The first direction starts on GPU 0 and ends on GPU 3, the second the other way.
  EXPECT_TRUE(plan.holdsEmbedding(0, 0));
  EXPECT_TRUE(plan.holdsOutput(3, 0));
  EXPECT_TRUE(plan.holdsEmbedding(3, 1));
  EXPECT_TRUE(plan.holdsOutput(0, 1));
  EXPECT_FALSE(plan.holdsOutput(0, 0));
  EXPECT_TRUE(plan.holdsEmbeddingOn(3) && plan.holdsOutputOn(3) && plan.holdsEmbeddingOn(0) && plan.holdsOutputOn(0));
  EXPECT_FALSE(plan.holdsEmbeddingOn(1) || plan.holdsOutputOn(2));
  // A second-direction forward on GPU 2 follows GPU 3's; its first forward has none before it.
  const auto upstream = upstreamSteps(plan, 2, {PassKind::kForward, 1, 1});
  ASSERT_EQ(upstream.size(), 1u);
  EXPECT_EQ(upstream.front().stage, 3);
  EXPECT_EQ(upstream.front().step, (PipelineStep{PassKind::kForward, 1, 1}));
  EXPECT_TRUE(upstreamSteps(plan, 3, {PassKind::kForward, 0, 1}).empty());
  // The first direction's last backward (GPU 3) needs only its own forward, not GPU 0's chunk 1.
  EXPECT_EQ(upstreamSteps(plan, 3, {PassKind::kBackward, 0, 0}).size(), 1u);
  // Layers: 1 + 3 + 3 + 3 split over the stages; each GPU holds its stage and the mirror one.
  plan.first_stage_layers = 1;
  plan.last_stage_layers = 3;
  EXPECT_EQ(plan.layersPerStage(10), (std::vector<int64_t>{4, 6, 6, 4}));
  EXPECT_EQ(plan.layersOfChunk(10, 0, 1), 3);  // the second direction's last stage
  EXPECT_EQ(plan.firstLayerOfChunk(10, 3, 1), 0);
  EXPECT_EQ(plan.firstLayerOfChunk(10, 0, 1), 7);
  EXPECT_EQ(plan.firstLayerOfChunk(10, 2, 0), 4);
  EXPECT_EQ(plan.unevenSplitText(10), "1 + 2 x 3 + 3");
}

TEST(DualPipe, LeavesLessBubbleThanOneFOneB) {
  // Passes of 2t per stage (F, B and W alike): every schedule's ideal is 6 m t per GPU.
  const sim::SimTime t = 1000;
  for (const int64_t p : {4, 8}) {
    const int64_t m = 4 * p;
    const sim::SimTime one_f_one_b =
        computeOnlyPipelineTime(pipelinePlan(PipelineSchedule::kOneFOneB, p), m, 2 * t, 2 * t, 2 * t) - 6 * m * t;
    const sim::SimTime dualpipe =
        computeOnlyPipelineTime(pipelinePlan(PipelineSchedule::kDualPipe, p, 2), m, 2 * t, 2 * t, 2 * t) - 6 * m * t;
    const sim::SimTime dualpipev =
        computeOnlyPipelineTime(pipelinePlan(PipelineSchedule::kDualPipeV, p, 2), m, t, t, t) - 6 * m * t;
    EXPECT_EQ(one_f_one_b, (p - 1) * 6 * t);
    EXPECT_GE(dualpipe, 0);
    EXPECT_LT(dualpipe, one_f_one_b / 2);
    std::cout << "bubble, p " << p << ", m " << m << ", 2t per stage pass: 1f1b " << one_f_one_b / t << "t, dualpipe "
              << dualpipe / t << "t, dualpipev " << dualpipev / t << "t\n";
  }
}

TEST(DualPipe, ChecksItsPlan) {
  auto error = [](const std::string& parallelism, int64_t batch) {
    const std::string yaml = "model: llama3-8b\ncluster: dgx-a100\nparallelism:\n" + parallelism +
                             "training: {seq_len: 4096, global_batch_size: " + std::to_string(batch) + "}\n";
    return errorText(loadExperimentNode(parseConfigText(yaml, "plan.yaml"), testPaths()));
  };
  EXPECT_EQ(error("  pp: 4\n  dp: 2\n  schedule: dualpipe\n", 64),
            "plan.yaml:4:3: parallelism.virtual_stages: dualpipe holds two model chunks per GPU (its stage of each "
            "direction); virtual_stages = 1, expected 2");
  EXPECT_EQ(error("  gpus: 8\n  pp: 8\n  dp: 1\n  virtual_stages: 2\n  schedule: dualpipe\n", 8),
            "plan.yaml:9:46: training.global_batch_size: dualpipe needs an even number of micro-batches, at least 2 x "
            "pp = 16 (half run each direction; dualpipe.py asserts it); global_batch_size / (dp x micro_batch_size) = "
            "8");
  EXPECT_EQ(error("  pp: 4\n  dp: 2\n  virtual_stages: 2\n  zero: 3\n  schedule: dualpipe\n", 64),
            "plan.yaml:7:9: parallelism.zero: dualpipe with zero: 3 is not modelled; use zero: 0, 1 or 2");
}

TEST(DualPipe, SimulatesTwoCopiesAndTheirGradientExchange) {
  SimulationOptions options = shippedSimulationOptions();
  options.iteration.symmetric = true;
  auto run = [&](const std::string& schedule, int64_t chunks) {
    return shippedExperiment(
        "model: llama2-70b\ncluster: dgx-h100\ntraining: {seq_len: 4096, global_batch_size: 128, micro_batch_size: "
        "1, precision: bf16}\nparallelism: {gpus: 128, tp: 8, pp: 8, dp: 2, zero: 1, sequence_parallel: true, "
        "recompute: selective, virtual_stages: " +
            std::to_string(chunks) + ", schedule: " + schedule + "}\n",
        {"cluster.nodes=16"});
  };
  const Experiment dualpipe = run("dualpipe", 2);
  auto both = simulateIteration(dualpipe, options);
  auto one_f_one_b = simulateIteration(run("1f1b", 1), options);
  ASSERT_TRUE(both.ok()) << both.error().toString();
  ASSERT_TRUE(one_f_one_b.ok()) << one_f_one_b.error().toString();
  // The same work per GPU, less of it idle.
  EXPECT_NEAR(both->breakdown.compute, one_f_one_b->breakdown.compute, 0.05 * one_f_one_b->breakdown.compute);
  EXPECT_LT(both->breakdown.pipeline_bubble, 0.6 * one_f_one_b->breakdown.pipeline_bubble);
  EXPECT_LT(both->iteration_time_s, one_f_one_b->iteration_time_s);
  // Two copies of the parameters: each GPU holds its stage and the mirror one, the ends both
  // embeddings and output layers.
  const MemoryReport memory = estimateMemory(dualpipe);
  const MemoryReport single = estimateMemory(run("1f1b", 1));
  EXPECT_NEAR(memory.stages[3].parameters.total(), 2.0 * single.stages[3].parameters.total(),
              1e-9 * single.stages[3].parameters.total());
  EXPECT_NEAR(memory.stages[0].parameters.total(), memory.stages[7].parameters.total(),
              1e-9 * memory.stages[0].parameters.total());
  std::cout << "dualpipe: " << both->iteration_time_s << " s, bubble " << both->breakdown.pipeline_bubble << " s, peak "
            << memory.peakBytes() / 1073741824.0 << " GiB (1f1b " << one_f_one_b->iteration_time_s << " s, bubble "
            << one_f_one_b->breakdown.pipeline_bubble << " s, peak " << single.peakBytes() / 1073741824.0 << " GiB)\n";
}

}  // namespace
}  // namespace trainsim::parallelism
