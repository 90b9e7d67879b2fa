// Uneven splits of a V placement (zbv, dualpipev): first_stage_layers and last_stage_layers
// are the layers of the first and the last model chunk (the embedding's and the loss's, both
// on the first GPU), possibly none, and the other 2 pp - 2 chunks share the rest evenly. What
// the plan places where, what checkPlan refuses, and a simulated run of Qi et al.'s ZB-V
// settings (arXiv:2401.10241 §6), whose ends hold no transformer layer.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_simulation.h"
#include "parallelism/memory_model.h"
#include "tests/parallelism/test_support.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::parallelism {
namespace {

using testing::errorText;
using testing::shippedExperiment;
using testing::testPaths;

ParallelPlan vPlan(int64_t pp, std::optional<int64_t> first, std::optional<int64_t> last) {
  ParallelPlan plan;
  plan.pp = pp;
  plan.virtual_stages = 2;
  plan.schedule = PipelineSchedule::kDualPipeV;
  plan.first_stage_layers = first;
  plan.last_stage_layers = last;
  return plan;
}

TEST(VPlacementSplit, TheEndsAreTheFirstGpusTwoChunks) {
  // DeepSeek-V3's 61 layers on 16 GPUs in a V: one layer with the embedding, none with the
  // loss, two in each of the other 30 chunks.
  const ParallelPlan plan = vPlan(16, 1, 0);
  std::vector<int64_t> chunks(32, 2);
  chunks.front() = 1;
  chunks.back() = 0;
  EXPECT_EQ(plan.layersPerVChunk(61), chunks);
  const std::vector<int64_t> stages = plan.layersPerStage(61);
  EXPECT_EQ(stages.front(), 1);
  for (std::size_t stage = 1; stage < stages.size(); ++stage) EXPECT_EQ(stages[stage], 4) << stage;
  EXPECT_EQ(plan.layersOfChunk(61, 0, 0), 1);
  EXPECT_EQ(plan.layersOfChunk(61, 0, 1), 0);
  EXPECT_EQ(plan.layersOfChunk(61, 15, 1), 2);
  // Virtual stage 16 (the last GPU's second chunk) follows 1 + 15 x 2 layers.
  EXPECT_EQ(plan.firstLayerOfChunk(61, 15, 1), 31);
  EXPECT_EQ(plan.firstLayerOfChunk(61, 1, 1), 1 + 29 * 2);
  EXPECT_EQ(plan.unevenSplitText(61), "V: 1 + 30 x 2 + 0");
  // Only one end given: the other chunks share the rest.
  const ParallelPlan first_only = vPlan(4, 3, std::nullopt);
  EXPECT_EQ(first_only.layersPerVChunk(31), (std::vector<int64_t>{3, 4, 4, 4, 4, 4, 4, 4}));
  EXPECT_EQ(first_only.layersPerStage(31), (std::vector<int64_t>{7, 8, 8, 8}));
}

std::string vExperiment(const std::string& schedule, int64_t layers, const std::string& split) {
  return "model: {name: gpt-v, architecture: gpt, layers: " + std::to_string(layers) +
         ", hidden_size: 2048, attention_heads: 16, vocab_size: 51200}\ncluster: dgx-a100\n"
         "training: {seq_len: 1024, global_batch_size: 32, micro_batch_size: 1}\n"
         "parallelism:\n  gpus: 8\n  pp: 8\n  dp: 1\n  virtual_stages: " +
         std::string(schedule == "1f1b" ? "1" : "2") + "\n  schedule: " + schedule + "\n" + split;
}

TEST(VPlacementSplit, ChecksTheSplitOfTheChunks) {
  auto error = [](const std::string& yaml) {
    return errorText(loadExperimentNode(parseConfigText(yaml, "plan.yaml"), testPaths()));
  };
  // 30 layers over 16 chunks: an even V needs the ends given.
  EXPECT_EQ(error(vExperiment("zbv", 30, "")),
            "plan.yaml:6:7: parallelism.pp: zbv places 16 model chunks (2 x pp = 8) in a V; they do not split "
            "layers = 30 evenly: set first_stage_layers / last_stage_layers, the layers of the first and the last "
            "chunk");
  EXPECT_EQ(error(vExperiment("zbv", 30, "  first_stage_layers: 1\n  last_stage_layers: 0\n")),
            "plan.yaml:10:23: parallelism.first_stage_layers: the 29 layers left after first and last chunks of 1 "
            "layers do not split evenly over the other 14 model chunks in zbv's V (first_stage_layers and "
            "last_stage_layers are the layers of its first and last model chunk, both on the first GPU); make "
            "layers minus their sum a multiple of 14");
  EXPECT_EQ(error(vExperiment("dualpipev", 12, "  first_stage_layers: 0\n  last_stage_layers: 0\n")),
            "plan.yaml:10:23: parallelism.first_stage_layers: first and last chunks of 0 layers leave 12 of the 12 "
            "layers for the 14 other model chunks in dualpipev's V (first_stage_layers and last_stage_layers are "
            "the layers of its first and last model chunk, both on the first GPU); each needs at least one layer");
  // Without a V a stage needs a layer.
  EXPECT_EQ(error(vExperiment("1f1b", 30, "  first_stage_layers: 0\n")),
            "plan.yaml:10:23: parallelism.first_stage_layers: first_stage_layers = 0 leaves a pipeline stage "
            "without transformer layers; expected a positive integer (only zbv's and dualpipev's first and last "
            "model chunks may hold none)");
  EXPECT_EQ(error(vExperiment("zbv", 30, "  first_stage_layers: -1\n")),
            "plan.yaml:10:23: parallelism.first_stage_layers: expected an integer >= 0, found \"-1\"");
  auto accepted = loadExperimentNode(
      parseConfigText(vExperiment("zbv", 30, "  first_stage_layers: 0\n  last_stage_layers: 2\n"), "plan.yaml"),
      testPaths());
  ASSERT_TRUE(accepted.ok()) << accepted.error().toString();
  EXPECT_EQ(accepted->plan.layersPerStage(30), (std::vector<int64_t>{2, 4, 4, 4, 4, 4, 4, 4}));
}

// Qi et al.'s 6.2B model (30 layers, hidden 4,096) on 16 A100s, micro-batch 6, 48
// micro-batches: ZB-V's ends hold no layer, 1F1B's one layer fewer than the middle stages.
Experiment qiRun(const std::string& schedule) {
  const bool v = schedule == "zbv";
  return shippedExperiment(
      "model: {name: gpt-6.2b, architecture: gpt, layers: 30, hidden_size: 4096, attention_heads: 32, "
      "vocab_size: 51200}\ncluster: dgx-a100\ntraining: {seq_len: 1024, global_batch_size: 288, micro_batch_size: "
      "6, precision: fp16}\nparallelism: {gpus: 16, tp: 1, pp: 16, dp: 1, recompute: none, schedule: " +
          schedule + ", virtual_stages: " + (v ? "2" : "1") + ", first_stage_layers: " + (v ? "0" : "1") +
          ", last_stage_layers: " + (v ? "0" : "1") + "}\n",
      {"cluster.nodes=2"});
}

TEST(VPlacementSplit, SimulatesZbvWithLayerlessEnds) {
  SimulationOptions options = shippedSimulationOptions();
  options.iteration.symmetric = true;
  const Experiment zbv = qiRun("zbv");
  auto v = simulateIteration(zbv, options);
  auto one_f_one_b = simulateIteration(qiRun("1f1b"), options);
  ASSERT_TRUE(v.ok()) << v.error().toString();
  ASSERT_TRUE(one_f_one_b.ok()) << one_f_one_b.error().toString();
  // The same layers per GPU but on the first; the V's first GPU runs only the embedding and
  // the output layer, and the bubble shrinks.
  EXPECT_LT(v->iteration_time_s, one_f_one_b->iteration_time_s);
  EXPECT_LT(v->breakdown.pipeline_bubble, 0.5 * one_f_one_b->breakdown.pipeline_bubble);
  const MemoryReport memory = estimateMemory(zbv);
  EXPECT_EQ(memory.stages[0].layers, 0);
  EXPECT_EQ(memory.stages[1].layers, 2);
  EXPECT_GT(memory.stages[0].parameters.outside_layers, 1.9 * memory.stages[1].parameters.outside_layers);
}

}  // namespace
}  // namespace trainsim::parallelism
