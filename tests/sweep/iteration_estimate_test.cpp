// The sweep's analytical screen (sweep/iteration_estimate.h) against the event simulation on
// small plans whose communication crosses nodes with one or two GPUs of a group per node:
// context parallelism (ring attention send/recv) and ZeRO-3 (parameter all-gather before
// every pass, gradient reduce-scatter after every backward). The screen used to price such
// groups with every NIC of the node and ZeRO-3 with one gather and one reduce-scatter per
// iteration (simulated / estimated 1.3 to 1.9 on these plans, up to 14 on GPT-3 175B).
#include "sweep/iteration_estimate.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_simulation.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::sweep {
namespace {

// Two DGX A100 nodes (one HDR NIC per GPU), 16 GPUs, pp 1, micro-batch 1.
parallelism::Experiment experimentOf(const std::string& model, int64_t seq_len, const std::vector<std::string>& sets) {
  const std::string yaml = "model: " + model + R"(
cluster: dgx-a100
training:
  seq_len: )" + std::to_string(seq_len) +
                           R"(
  global_batch_size: 8
  micro_batch_size: 1
  precision: bf16
parallelism: {gpus: 16, tp: 8, pp: 1, dp: 2, cp: 1, sequence_parallel: true, recompute: none}
)";
  std::vector<Override> overrides{parseOverride("cluster.nodes=2")};
  for (const auto& set : sets) overrides.push_back(parseOverride(set));
  auto experiment = parallelism::loadExperimentNode(parseConfigText(yaml, "test.yaml"),
                                                    ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS}, overrides);
  if (!experiment.ok()) throw std::runtime_error(experiment.error().toString());
  return std::move(experiment).value();
}

// Simulated / estimated iteration time, in the sweep's (symmetric) mode.
double screenRatio(const parallelism::Experiment& experiment) {
  parallelism::SimulationOptions options = shippedSimulationOptions();
  options.iteration.symmetric = true;
  // As the sweep builds its screen: with the experiment's host dispatch (none unless it sets one).
  IterationEstimator estimator(experiment.cluster, experiment.training.precision,
                               parallelism::withHostDispatch(experiment, options));
  const double estimate = estimator.iterationSeconds(experiment);
  auto simulated = parallelism::simulateIteration(experiment, options);
  if (!simulated.ok()) throw std::runtime_error(simulated.error().toString());
  EXPECT_GT(estimate, 0.0);
  return simulated->iteration_time_s / estimate;
}

// cp 4 x tp 4: each context-parallel ring has two GPUs per node and crosses the network on
// one NIC per GPU (was 1.69 before the screen priced the busiest link; up to 1.3 was allowed
// while the simulation ran a pass's tensor-parallel collectives after the ring on the GPUs
// that were not first in their context-parallel group). Since the ring exchanges run beside
// the attention steps (1.00): 0.71 while the simulation timed their exposure by one ring
// alone, which spreads over the node's NICs, and the screen by all rings at once.
TEST(IterationEstimateTest, ContextParallelRingAcrossNodes) {
  const double ratio = screenRatio(experimentOf(
      "gpt-1.7b", 8192, {"parallelism.tp=4", "parallelism.cp=4", "parallelism.dp=1", "training.global_batch_size=16"}));
  EXPECT_GT(ratio, 0.95);
  EXPECT_LT(ratio, 1.05);
}

// pp 12 over 24 layers (two per stage) with the 51,200-word output layer on the last stage,
// about twice as slow as the others: the fill and drain run at each stage's own time, not
// the slowest one's (was 0.79).
TEST(IterationEstimateTest, UnbalancedPipelineStages) {
  const double ratio =
      screenRatio(experimentOf("gpt-1.7b", 2048,
                               {"parallelism.gpus=12", "parallelism.tp=1", "parallelism.pp=12", "parallelism.dp=1",
                                "parallelism.sequence_parallel=false", "training.global_batch_size=16"}));
  EXPECT_GT(ratio, 0.9);
  EXPECT_LT(ratio, 1.1);
}

// pp 7 over 24 layers split 2 + 5 x 4 + 2, two chunks per stage (1 + 1 at the ends, 2 + 2
// in the middle): the screen prices each chunk by its own layer count (1.24 while it priced
// every chunk as the first stage's one-layer first chunk). What remains (1.16): the screen
// takes the slowest stage's sum over its chunks, while the interleaved schedule moves each
// group of pp micro-batches through one chunk of every stage in turn, so a chunk that is
// slow on one stage (the last stage's second: a layer plus the output layer) holds up the
// others. The same plan with one chunk is estimated at 0.99, and an even 28-layer split at
// 1.00 with 1, 2 or 4 chunks.
TEST(IterationEstimateTest, UnevenPipelineSplitWithChunks) {
  const double ratio = screenRatio(experimentOf(
      "gpt-1.7b", 2048,
      {"parallelism.gpus=7", "parallelism.tp=1", "parallelism.pp=7", "parallelism.dp=1",
       "parallelism.sequence_parallel=false", "parallelism.first_stage_layers=2", "parallelism.last_stage_layers=2",
       "parallelism.virtual_stages=2", "training.global_batch_size=14"}));
  EXPECT_GT(ratio, 0.9);
  EXPECT_LT(ratio, 1.2);
}

// cp 2 x tp 8: one GPU of each ring per node (was 1.31; 0.99).
TEST(IterationEstimateTest, ContextParallelRingOneGpuPerNode) {
  const double ratio = screenRatio(
      experimentOf("gpt-1.7b", 8192, {"parallelism.cp=2", "parallelism.dp=1", "training.global_batch_size=16"}));
  EXPECT_GT(ratio, 0.9);
  EXPECT_LT(ratio, 1.2);
}

// ZeRO-3 over dp 2 x tp 8 (one GPU of each data-parallel ring per node): 8 parameter
// all-gathers and 4 reduce-scatters of 0.9 GB per iteration, slower than the passes they
// precede (was 1.85).
TEST(IterationEstimateTest, ZeroThreeGathersBeforeEveryPass) {
  const double ratio = screenRatio(experimentOf("gpt-7.5b", 2048, {"parallelism.zero=3"}));
  EXPECT_GT(ratio, 0.9);
  EXPECT_LT(ratio, 1.1);
}

// The same plan at dp 4 x tp 4 (two GPUs of each ring per node; was 1.52).
TEST(IterationEstimateTest, ZeroThreeTwoGpusPerNode) {
  const double ratio =
      screenRatio(experimentOf("gpt-7.5b", 2048, {"parallelism.zero=3", "parallelism.tp=4", "parallelism.dp=4"}));
  EXPECT_GT(ratio, 0.9);
  EXPECT_LT(ratio, 1.1);
}

// The same ZeRO-3 plan on H100s in FP8 with FP8 weights: every gather moves 1 byte per
// parameter in both the screen and the simulation (MicroBatchShard::parameterGatherBytes).
TEST(IterationEstimateTest, ZeroThreeGathersFp8Weights) {
  const double ratio = screenRatio(experimentOf(
      "gpt-7.5b", 2048,
      {"parallelism.zero=3", "cluster.gpu=h100-sxm", "training.precision=fp8", "training.fp8_param_gather=true"}));
  EXPECT_GT(ratio, 0.9);
  EXPECT_LT(ratio, 1.1);
}

// ZeRO-3 in transformer blocks (PyTorch FSDP, training.zero3.unit: block) on the same plan:
// each block's gather beside the block before it, its reduce-scatter after it (1.04).
TEST(IterationEstimateTest, ZeroThreeInBlocks) {
  const double ratio = screenRatio(experimentOf("gpt-7.5b", 2048, {"parallelism.zero=3", "training.zero3.unit=block"}));
  EXPECT_GT(ratio, 0.9);
  EXPECT_LT(ratio, 1.1);
}

// In blocks as DeepSpeed's ZeRO-3 of 2021 issues them (training.zero3.gathers_per_block 4,
// reduce_scatters_per_block 12, persistent_gathers_per_block 8, list_collectives: a call per
// parameter tensor, the small ones gathered once an iteration, a copy kernel
// and, on the eager host, a view and a launch per rank and call, which stall the compute) at
// dp 64 over eight nodes: the screen adds the calls' latencies, the copies (the gathers' and
// the reduce-scatters' chains side by side) and the host's stalls as the simulation does
// (0.98; 0.76 when the screen added the copies up as link time).
TEST(IterationEstimateTest, ZeroThreeInBlocksCallByCallWithListCollectives) {
  const std::vector<std::string> plan = {"parallelism.zero=3",  "training.zero3.unit=block",
                                         "parallelism.gpus=64", "parallelism.tp=1",
                                         "parallelism.dp=64",   "parallelism.sequence_parallel=false",
                                         "cluster.nodes=8",     "training.global_batch_size=64"};
  std::vector<std::string> deepspeed = plan;
  deepspeed.insert(deepspeed.end(),
                   {"training.zero3.gathers_per_block=4", "training.zero3.reduce_scatters_per_block=12",
                    "training.zero3.persistent_gathers_per_block=8", "training.zero3.list_collectives=true",
                    "training.dispatch=eager"});
  const double ratio = screenRatio(experimentOf("gpt-1.7b", 8192, deepspeed));
  EXPECT_GT(ratio, 0.9);
  EXPECT_LT(ratio, 1.1);
}

// Hybrid sharding (training.zero3.replicas 4: shard groups of one node's 8 GPUs) at dp 32 on
// four DGX A100 nodes with 50 Gb/s NICs: each block gathered and reduce-scattered over NVLink,
// its gradient shard all-reduced across the nodes.
TEST(IterationEstimateTest, ZeroThreeInBlocksHybridSharded) {
  const double ratio = screenRatio(experimentOf(
      "gpt-1.7b", 2048,
      {"parallelism.zero=3", "training.zero3.unit=block", "training.zero3.replicas=4", "parallelism.gpus=32",
       "parallelism.tp=1", "parallelism.dp=32", "parallelism.sequence_parallel=false", "cluster.nodes=4",
       "cluster.inter_node.nic_bandwidth_Gbps=50", "training.global_batch_size=32"}));
  EXPECT_GT(ratio, 0.95);
  EXPECT_LT(ratio, 1.05);
}

// In blocks with pipeline parallelism: gathered under each chunk's first forward, reduced
// after its last backward (1.01).
TEST(IterationEstimateTest, ZeroThreeInBlocksPipelined) {
  const double ratio = screenRatio(
      experimentOf("gpt-7.5b", 2048,
                   {"parallelism.zero=3", "training.zero3.unit=block", "training.zero3.reshard_after_forward=never",
                    "parallelism.gpus=32", "parallelism.pp=2", "cluster.nodes=4", "training.global_batch_size=16"}));
  EXPECT_GT(ratio, 0.9);
  EXPECT_LT(ratio, 1.1);
}

// Full recomputation of 3 of each chunk's 6 layers (parallelism.recompute_num_layers) on pp 2
// x 2 chunks: the screen prices each chunk from its own parts, the recomputed and the kept
// layers apart, and its estimate falls between no and full recomputation (0.950; the same
// plan without recomputation 0.960, with all of it 0.981: each part's tensor-parallel
// collectives are priced as one call with the part's bytes, so two parts pay one more
// call's fixed cost than one).
TEST(IterationEstimateTest, PartialRecomputationPerChunk) {
  const std::vector<std::string> plan{"parallelism.gpus=32", "parallelism.pp=2", "parallelism.virtual_stages=2",
                                      "cluster.nodes=4", "training.global_batch_size=16"};
  auto with = [&](std::vector<std::string> sets) {
    sets.insert(sets.begin(), plan.begin(), plan.end());
    return experimentOf("gpt-7.5b", 2048, sets);
  };
  const parallelism::Experiment partial = with({"parallelism.recompute=full", "parallelism.recompute_num_layers=3"});
  const double ratio = screenRatio(partial);
  EXPECT_GT(ratio, 0.93);
  EXPECT_LT(ratio, 1.05);
  parallelism::SimulationOptions options = shippedSimulationOptions();
  options.iteration.symmetric = true;
  IterationEstimator estimator(partial.cluster, partial.training.precision, options);
  const double none = estimator.iterationSeconds(with({}));
  const double full = estimator.iterationSeconds(with({"parallelism.recompute=full"}));
  const double half = estimator.iterationSeconds(partial);
  EXPECT_LT(none, half);
  EXPECT_LT(half, full);
}

// ZeRO-1 at dp 2 x tp 8: the gradient reduce-scatter and parameter all-gather on one NIC per
// GPU (was 1.08).
TEST(IterationEstimateTest, DataParallelRingOneGpuPerNode) {
  const double ratio = screenRatio(experimentOf("gpt-18b", 2048, {"parallelism.zero=1"}));
  EXPECT_GT(ratio, 0.95);
  EXPECT_LT(ratio, 1.05);
}

// GPT 1.7B at dp 16 (tp 1) with both overlaps: the backward and the first forward run beside
// the reduce-scatters and gathers, on the SMs those leave (ComputeParameters::collective_sms).
// 1.038 while the screen left that out.
TEST(IterationEstimateTest, OverlappedDataParallelCollectivesSlowTheComputeBesideThem) {
  const double ratio = screenRatio(
      experimentOf("gpt-1.7b", 2048,
                   {"parallelism.tp=1", "parallelism.dp=16", "training.global_batch_size=32", "parallelism.zero=1",
                    "parallelism.overlap_grad_reduce=true", "parallelism.overlap_param_gather=true"}));
  EXPECT_GT(ratio, 0.97);
  EXPECT_LT(ratio, 1.03);
}

// DeepSeek-V3 on 1,024 H100 (the shipped experiment: tp 2, pp 8, vp 4, ep 64 over 8 nodes)
// with the expert all-to-alls overlapped with the partner pass (moe_a2a_overlap). The screen
// takes every pass as paired, where the simulation pairs only the steady state's, so it stays
// below the simulation; it prices the SMs those all-to-alls hold as the simulation's
// contention does (1.31 when it did not).
TEST(IterationEstimateTest, OverlappedAllToAllsSlowTheComputeBesideThem) {
  auto experiment = parallelism::loadExperiment("deepseek-v3-h100", ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS},
                                                {parseOverride("parallelism.moe_a2a_overlap=true")});
  ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
  const double ratio = screenRatio(*experiment);
  EXPECT_GT(ratio, 1.0);
  EXPECT_LT(ratio, 1.25);
}

}  // namespace
}  // namespace trainsim::sweep
