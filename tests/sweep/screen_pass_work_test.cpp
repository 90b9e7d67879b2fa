// The sweep's screen (sweep/iteration_estimate.h) and the iteration builder account a pass
// of a model chunk with the same function (parallelism/pass_work.h): for plans that exercise
// each part of it (recomputation, tp_comm_overlap, ring attention, experts, uneven and
// interleaved pipeline stages), the compute and the collectives the screen prices for every
// chunk are the builder's, and the builder's graph runs that compute. Only the one-call
// times of the collectives differ, by design: each side times them its own way.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "parallelism/compute_timer.h"
#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_builder.h"
#include "parallelism/iteration_simulation.h"
#include "parallelism/pass_work.h"
#include "sweep/iteration_estimate.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::sweep {
namespace {

using parallelism::PassKind;
using parallelism::PassWork;

// Two DGX A100 nodes, 16 GPUs, micro-batch 1, no data-parallel overlaps (so that no pass is
// split into buckets).
parallelism::Experiment experimentOf(const std::string& model, const std::vector<std::string>& sets) {
  const std::string yaml = "model: " + model + R"(
cluster: dgx-a100
training:
  seq_len: 4096
  global_batch_size: 16
  micro_batch_size: 1
  precision: bf16
parallelism: {gpus: 16, tp: 8, pp: 1, dp: 2, cp: 1, sequence_parallel: true, recompute: none}
)";
  std::vector<Override> overrides{parseOverride("cluster.nodes=2"),
                                  parseOverride("parallelism.overlap_grad_reduce=false"),
                                  parseOverride("parallelism.overlap_param_gather=false")};
  for (const auto& set : sets) overrides.push_back(parseOverride(set));
  auto experiment = parallelism::loadExperimentNode(parseConfigText(yaml, "test.yaml"),
                                                    ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS}, overrides);
  if (!experiment.ok()) throw std::runtime_error(experiment.error().toString());
  return std::move(experiment).value();
}

// `first_chunk`: the builder's work of the first chunk, for the tests to check what it holds.
void expectSamePassWork(const parallelism::Experiment& experiment, PassWork& first_chunk) {
  const parallelism::SimulationOptions options = shippedSimulationOptions();
  const auto cluster = valueOrThrow(topology::Cluster::build(experiment.cluster));
  topology::Router router(cluster);
  const auto compute =
      valueOrThrow(perf::ComputeModel::create(experiment.cluster.gpu, experiment.training.precision, options.compute));
  const parallelism::ComputeTimer timer(compute);
  parallelism::IterationBuilder builder(experiment, cluster, router, options.communication, timer, options.iteration);
  IterationEstimator estimator(experiment.cluster, experiment.training.precision, options);
  const auto& plan = experiment.plan;
  std::vector<std::vector<PassWork>> built(static_cast<std::size_t>(plan.pp));
  for (int64_t stage = 0; stage < plan.pp; ++stage) {
    for (int64_t chunk = 0; chunk < plan.virtual_stages; ++chunk) {
      SCOPED_TRACE("stage " + std::to_string(stage) + ", chunk " + std::to_string(chunk));
      const PassWork pass = builder.passWork(stage, chunk);
      built[static_cast<std::size_t>(stage)].push_back(pass);
      if (stage == 0 && chunk == 0) first_chunk = pass;
      // The screen prices the chunk part by part; the builder holds the parts together.
      PassWork screened;
      for (const PassWork& part : estimator.chunkPassWork(experiment, stage, chunk)) {
        screened.forward_s += part.forward_s;
        screened.backward_s += part.backward_s;
        screened.collectives.insert(screened.collectives.end(), part.collectives.begin(), part.collectives.end());
        screened.forward_exposed.insert(screened.forward_exposed.end(), part.forward_exposed.begin(),
                                        part.forward_exposed.end());
        screened.backward_exposed.insert(screened.backward_exposed.end(), part.backward_exposed.begin(),
                                         part.backward_exposed.end());
      }
      EXPECT_GT(pass.forward_s, 0.0);
      EXPECT_DOUBLE_EQ(screened.forward_s, pass.forward_s);
      EXPECT_DOUBLE_EQ(screened.backward_s, pass.backward_s);
      ASSERT_EQ(screened.collectives.size(), pass.collectives.size());
      for (std::size_t i = 0; i < pass.collectives.size(); ++i) {
        const parallelism::PassCollective& a = screened.collectives[i];
        const parallelism::PassCollective& b = pass.collectives[i];
        EXPECT_EQ(a.group, b.group);
        EXPECT_EQ(a.op, b.op);
        EXPECT_EQ(a.backward, b.backward);
        EXPECT_EQ(a.bytes, b.bytes);
        EXPECT_EQ(a.count, b.count);
        EXPECT_EQ(a.beside_compute, b.beside_compute);
        EXPECT_EQ(a.recomputed, b.recomputed);
      }
      EXPECT_EQ(screened.forward_exposed.size(), pass.forward_exposed.size());
      EXPECT_EQ(screened.backward_exposed.size(), pass.backward_exposed.size());
    }
  }
  // The graph's passes run that compute: every pass of rank 0 (stage 0) and of the first rank
  // of the last stage.
  const parallelism::IterationGraph graph = builder.build();
  const parallelism::RankLayout layout(plan);
  for (int64_t stage : {int64_t{0}, plan.pp - 1}) {
    const parallelism::RankTasks& rank = graph.ranks[static_cast<std::size_t>(layout.rank({0, 0, 0, stage}))];
    ASSERT_EQ(rank.steps.size(), rank.step_compute_time.size());
    for (std::size_t i = 0; i < rank.steps.size(); ++i) {
      const PassWork& pass = built[static_cast<std::size_t>(stage)][static_cast<std::size_t>(rank.steps[i].chunk)];
      EXPECT_EQ(rank.step_compute_time[i], sim::secondsToSimTime(pass.computeSeconds(rank.steps[i].pass)));
    }
  }
}

bool holds(const PassWork& work, parallelism::ParallelGroup group, bool beside_compute, bool recomputed) {
  for (const parallelism::PassCollective& call : work.collectives) {
    if (call.group == group && call.beside_compute == beside_compute && call.recomputed == recomputed) return true;
  }
  return false;
}

TEST(ScreenPassWorkTest, FullRecomputeWithTensorParallelOverlap) {
  const auto experiment = experimentOf("gpt-1.7b", {"parallelism.recompute=full", "parallelism.tp_comm_overlap=true"});
  ASSERT_TRUE(experiment.plan.tp_comm_overlap);
  PassWork work;
  expectSamePassWork(experiment, work);
  EXPECT_TRUE(holds(work, parallelism::ParallelGroup::kTensor, true, true));
  EXPECT_GT(work.exposedSeconds(PassKind::kBackward), 0.0);
}

TEST(ScreenPassWorkTest, RingAttentionWithSelectiveRecompute) {
  PassWork work;
  expectSamePassWork(
      experimentOf("gpt-1.7b", {"parallelism.cp=2", "parallelism.dp=1", "parallelism.recompute=selective"}), work);
  EXPECT_TRUE(holds(work, parallelism::ParallelGroup::kContext, true, true));
}

TEST(ScreenPassWorkTest, ExpertParallelism) {
  PassWork work;
  expectSamePassWork(experimentOf("mixtral-8x7b", {"parallelism.tp=2", "parallelism.dp=8", "parallelism.ep=8"}), work);
  EXPECT_TRUE(holds(work, parallelism::ParallelGroup::kExpert, false, false));
}

TEST(ScreenPassWorkTest, UnevenInterleavedPipeline) {
  PassWork work;
  expectSamePassWork(experimentOf("gpt-1.7b", {"parallelism.gpus=14", "parallelism.tp=2", "parallelism.pp=7",
                                               "parallelism.dp=1", "parallelism.first_stage_layers=2",
                                               "parallelism.last_stage_layers=2", "parallelism.virtual_stages=2",
                                               "parallelism.recompute=full", "training.global_batch_size=14"}),
                     work);
  EXPECT_TRUE(holds(work, parallelism::ParallelGroup::kTensor, false, true));
}

// DeepSeek-V3 over two stages: stage 0 holds the three dense layers and 28 MoE layers, the
// last stage MoE layers and the MTP module; each chunk is priced from its own kinds of layer.
TEST(ScreenPassWorkTest, DenseFirstLayersAndMultiTokenPrediction) {
  const auto experiment =
      experimentOf("deepseek-v3", {"parallelism.pp=2", "parallelism.first_stage_layers=31", "parallelism.dp=1",
                                   "parallelism.ep=8", "parallelism.etp=1", "training.global_batch_size=16"});
  ASSERT_GT(experiment.model.mtp_layers, 0);
  PassWork work;
  expectSamePassWork(experiment, work);
  EXPECT_TRUE(holds(work, parallelism::ParallelGroup::kExpert, false, false));
}

}  // namespace
}  // namespace trainsim::sweep
