// ZeRO-3 in transformer blocks (training.zero3; parallelism/sharded_data_parallel.h): how the
// key is read and defaulted by a stack, which plans it allows, and what it does to the
// iteration and to memory.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "parallelism/compute_timer.h"
#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_builder.h"
#include "parallelism/iteration_simulation.h"
#include "parallelism/memory_model.h"
#include "parallelism/software_stack.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::parallelism {
namespace {

// Llama 3 8B (32 blocks) at tp 8 on DGX A100 nodes: each data-parallel ring has one GPU per
// node, so every gather and reduce-scatter crosses one HDR NIC. Sequences short enough that
// the collectives are not hidden behind the passes.
std::string fsdpRun(const std::string& training_extra, int pp = 1, int zero = 3) {
  return R"(
name: fsdp
model: llama3-8b
cluster: dgx-a100
training: {seq_len: 1024, global_batch_size: 8, micro_batch_size: 1, precision: bf16)" +
         training_extra + R"(}
parallelism: {gpus: )" +
         std::to_string(16 * pp) + ", tp: 8, dp: 2, pp: " + std::to_string(pp) + ", zero: " + std::to_string(zero) +
         R"(, recompute: none, overlap_grad_reduce: true, overlap_param_gather: true}
)";
}

Expected<Experiment> load(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  std::vector<Override> overrides{parseOverride("cluster.nodes=4")};
  for (const auto& set : sets) overrides.push_back(parseOverride(set));
  return loadExperimentNode(parseConfigText(yaml, "fsdp.yaml"), ConfigPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS}, overrides);
}

Experiment loaded(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  auto experiment = load(yaml, sets);
  if (!experiment.ok()) throw std::runtime_error(experiment.error().toString());
  return std::move(experiment).value();
}

IterationResult simulate(const Experiment& experiment) {
  SimulationOptions options = shippedSimulationOptions();
  applySoftwareStack(experiment, options);
  auto result = simulateIteration(experiment, options);
  if (!result.ok()) throw std::runtime_error(result.error().toString());
  return std::move(result).value();
}

TEST(ShardedBlocksTest, StacksSayHowTheyShardAndTheExperimentOverridesKeyByKey) {
  EXPECT_EQ(loaded(fsdpRun("")).training.zero3.unit, ShardingUnit::kBucket);
  const Experiment titan = loaded(fsdpRun(", stack: torchtitan"));
  EXPECT_EQ(titan.training.zero3.unit, ShardingUnit::kBlock);
  EXPECT_EQ(titan.training.zero3.reshard_after_forward, ReshardAfterForward::kUnlessPipelined);
  EXPECT_EQ(titan.training.zero3.prefetch, 1);
  EXPECT_EQ(loaded(fsdpRun(", stack: pytorch-fsdp")).training.zero3.unit, ShardingUnit::kBlock);
  EXPECT_EQ(loaded(fsdpRun(", stack: deepspeed")).training.zero3.unit, ShardingUnit::kBucket);
  // Only the key given changes; the stack's others stay.
  const Experiment deeper = loaded(fsdpRun(", stack: torchtitan, zero3: {prefetch: 2}"));
  EXPECT_EQ(deeper.training.zero3.unit, ShardingUnit::kBlock);
  EXPECT_EQ(deeper.training.zero3.prefetch, 2);
  EXPECT_EQ(loaded(fsdpRun(", stack: torchtitan"), {"training.zero3.unit=bucket"}).training.zero3.unit,
            ShardingUnit::kBucket);
}

TEST(ShardedBlocksTest, BadValuesNameTheKey) {
  const auto unit = load(fsdpRun(", zero3: {unit: layer}"));
  ASSERT_FALSE(unit.ok());
  EXPECT_NE(unit.error().toString().find("fsdp.yaml:5:"), std::string::npos) << unit.error().toString();
  EXPECT_NE(unit.error().toString().find("training.zero3.unit"), std::string::npos) << unit.error().toString();
  EXPECT_NE(unit.error().toString().find("bucket"), std::string::npos) << unit.error().toString();
  const auto prefetch = load(fsdpRun(", zero3: {prefetch: -1}"));
  ASSERT_FALSE(prefetch.ok());
  EXPECT_NE(prefetch.error().toString().find("training.zero3.prefetch"), std::string::npos);
  const auto unknown = load(fsdpRun(", zero3: {units: block}"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().toString().find("units"), std::string::npos);
}

TEST(ShardedBlocksTest, PipelineParallelismNeedsBlocksKeptForTheIteration) {
  const auto buckets = load(fsdpRun("", 2));
  ASSERT_FALSE(buckets.ok());
  EXPECT_NE(buckets.error().toString().find("training.zero3.unit: block"), std::string::npos)
      << buckets.error().toString();
  const auto always = load(fsdpRun(", zero3: {unit: block, reshard_after_forward: always}", 2));
  ASSERT_FALSE(always.ok());
  EXPECT_NE(always.error().toString().find("training.zero3.reshard_after_forward"), std::string::npos)
      << always.error().toString();
  EXPECT_TRUE(load(fsdpRun(", stack: torchtitan", 2)).ok());
}

// On this communication-bound plan both runtimes move the same bytes per micro-batch, the
// blocks in 32 calls per pass instead of one: they end within 5%. Keeping the forward's
// blocks for the backward drops the second gather: bf16 gathers move 2 bytes per parameter
// and the fp32 reduce-scatter 4, so 6 of the 8 bytes remain.
TEST(ShardedBlocksTest, BlocksMoveTheBucketsBytesAndKeepingThemSavesTheSecondGather) {
  const double buckets = simulate(loaded(fsdpRun(""))).iteration_time_s;
  const double blocks = simulate(loaded(fsdpRun(", zero3: {unit: block}"))).iteration_time_s;
  const double kept =
      simulate(loaded(fsdpRun(", zero3: {unit: block, reshard_after_forward: never}"))).iteration_time_s;
  EXPECT_NEAR(blocks / buckets, 1.0, 0.05);
  EXPECT_GT(kept / blocks, 0.72);
  EXPECT_LT(kept / blocks, 0.8);
}

// Gathering no block ahead exposes every gather; one ahead hides them behind the block
// computing.
TEST(ShardedBlocksTest, PrefetchHidesGathers) {
  const std::string longer = ", zero3: {unit: block, prefetch: ";
  auto run = [&](int prefetch) {
    return simulate(loaded(fsdpRun(longer + std::to_string(prefetch) + "}"), {"training.seq_len=8192"}));
  };
  const IterationResult none = run(0);
  const IterationResult one = run(1);
  EXPECT_GT(none.iteration_time_s, one.iteration_time_s * 1.02);
  EXPECT_GT(none.breakdown.dp_comm_exposed, one.breakdown.dp_comm_exposed);
}

// DeepSpeed's ZeRO-3 gathers and reduce-scatters each parameter tensor of a block on its own
// (training.zero3.gathers_per_block, reduce_scatters_per_block), through PyTorch's list-form
// collectives (list_collectives: a copy kernel per rank and call): on this communication-bound
// plan each adds to the step, and the per-rank copies grow with the ranks a call spans.
TEST(ShardedBlocksTest, CallsPerBlockAndListCollectivesAddTheirCosts) {
  const std::string four = ", gathers_per_block: 4, reduce_scatters_per_block: 4";
  auto run = [&](const std::string& zero3, const std::vector<std::string>& sets = {}) {
    return simulate(loaded(fsdpRun(", zero3: {unit: block" + zero3 + "}"), sets)).iteration_time_s;
  };
  const double one = run("");
  const double split = run(four);
  const double listed = run(four + ", list_collectives: true");
  EXPECT_GT(split, one * 1.001);
  EXPECT_GT(listed, split * 1.001);
  // The same plan over 32 GPUs a ring (tp 1, dp 32): the copies' share of the step grows.
  const std::vector<std::string> wide = {"parallelism.tp=1", "parallelism.dp=32", "parallelism.gpus=32",
                                         "parallelism.sequence_parallel=false", "training.global_batch_size=32"};
  EXPECT_GT(run(four + ", list_collectives: true", wide) / run(four, wide), listed / split);
}

// With the host modelled (training.dispatch), each list-form call also costs the host a Python
// view and a launched copy per rank (compute dispatch_eager_us + dispatch_native_kernel_us,
// 6.8 + 3.2 us), done with the device synchronized before the block computing next: on this
// plan at seq 8,192 (the passes bound by the GPU), 4 micro-batches x (32 forward gathers x 4
// calls + 31 backward gathers x (4 + 4 reduce-scatter calls)) x 2 ranks x 10 us = 30.1 ms,
// nearly all of it exposed (26.3 ms: a pass's last stall precedes no block of its own).
TEST(ShardedBlocksTest, ListCollectivesStallTheHostRankByRank) {
  const std::string zero3 = ", zero3: {unit: block, gathers_per_block: 4, reduce_scatters_per_block: 4";
  const std::vector<std::string> longer = {"training.seq_len=8192"};
  auto run = [&](const std::string& extra, const std::string& dispatch) {
    return simulate(loaded(fsdpRun(zero3 + extra + "}" + dispatch), longer)).iteration_time_s;
  };
  const double stalls = run(", list_collectives: true", ", dispatch: eager") - run("", ", dispatch: eager");
  const double copies = run(", list_collectives: true", "") - run("", "");
  const double host = 4.0 * (32.0 * 4.0 + 31.0 * 8.0) * 2.0 * 10e-6;
  EXPECT_GT(stalls - copies, 0.8 * host);
  EXPECT_LT(stalls - copies, 1.05 * host);
}

TEST(ShardedBlocksTest, CallsPerBlockAndListCollectivesNeedBlocks) {
  const auto zero = load(fsdpRun(", zero3: {unit: block, gathers_per_block: 0}"));
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().toString().find("training.zero3.gathers_per_block"), std::string::npos)
      << zero.error().toString();
  for (const std::string key : {"gathers_per_block: 4", "reduce_scatters_per_block: 4",
                                "persistent_gathers_per_block: 8", "list_collectives: true"}) {
    const auto buckets = load(fsdpRun(", zero3: {" + key + "}"));
    ASSERT_FALSE(buckets.ok()) << key;
    EXPECT_NE(buckets.error().toString().find("training.zero3.unit: block"), std::string::npos)
        << buckets.error().toString();
  }
  const auto list = load(fsdpRun(", zero3: {unit: block, list_collectives: maybe}"));
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.error().toString().find("training.zero3.list_collectives"), std::string::npos)
      << list.error().toString();
}

// Memory per GPU in blocks: the fp32 master shard with the optimizer and no 16-bit copy of
// the shard; the block computing and the one prefetched gathered in bf16; fp32 sharded
// gradients.
TEST(ShardedBlocksTest, MemoryHoldsTheGatheredBlocksOnly) {
  const Experiment experiment = loaded(fsdpRun(", zero3: {unit: block}"));
  const MemoryReport report = estimateMemory(experiment);
  const StageMemory& stage = report.stages.front();
  const double block = stage.parameters.largest_layer;
  // The block computing, the one gathered ahead and the root module's (embedding, output).
  EXPECT_GT(stage.parameters.outside_layers, 0.0);
  EXPECT_NEAR(stage.weights, (2.0 * block + stage.parameters.outside_layers) * 2.0, 1.0);
  const double sharded_gradients = stage.parameters.total() * 4.0 / 2.0;
  EXPECT_NEAR(stage.gradients, sharded_gradients, 1.0);
  // Adam's two fp32 moments and the fp32 master weights, sharded over dp 2.
  EXPECT_NEAR(stage.optimizer, stage.parameters.total() * 12.0 / 2.0, 1.0);
  // With bf16 reduction the sharded gradients are still cast to the fp32 master's type, and
  // the optimizer keeps no fp32 copy of them (Megatron's distributed optimizer does).
  const StageMemory bf16 =
      estimateMemory(loaded(fsdpRun(", zero3: {unit: block}, grad_reduce_precision: bf16"))).stages.front();
  EXPECT_NEAR(bf16.gradients, sharded_gradients, 1.0);
  EXPECT_NEAR(bf16.optimizer, stage.optimizer, 1.0);
  const StageMemory megatron =
      estimateMemory(loaded(fsdpRun(", grad_reduce_precision: bf16"), {"parallelism.zero=1"})).stages.front();
  EXPECT_NEAR(megatron.optimizer, stage.parameters.total() * 16.0 / 2.0, 1.0);
  const Experiment kept = loaded(fsdpRun(", zero3: {unit: block, reshard_after_forward: never}"));
  EXPECT_NEAR(estimateMemory(kept).stages.front().weights, stage.parameters.total() * 2.0, 1.0);
}

// With pipeline parallelism a stage keeps its gathered parameters (bf16) and its unsharded
// gradients (fp32, accumulated over the micro-batches) for the whole iteration, and
// reduce-scatters them after its last backward into the sharded ones (which do not exist
// before).
TEST(ShardedBlocksTest, PipelinedStagesKeepParametersAndGradientsUnsharded) {
  const Experiment experiment = loaded(fsdpRun(", stack: torchtitan", 2));
  const MemoryReport report = estimateMemory(experiment);
  for (const StageMemory& stage : report.stages) {
    const double parameters = stage.parameters.total();
    EXPECT_NEAR(stage.weights, parameters * 2.0, 1.0);
    EXPECT_NEAR(stage.gradients, parameters * 4.0, 1.0);
  }
  const IterationResult result = simulate(experiment);
  EXPECT_GT(result.iteration_time_s, 0.0);
  // The same plan at ZeRO-1 (gathers after the step, reduction bucketed under the last
  // backward) moves the same bytes: within 25%.
  const double zero1 = simulate(loaded(fsdpRun(", stack: torchtitan", 2, 1))).iteration_time_s;
  EXPECT_NEAR(result.iteration_time_s / zero1, 1.0, 0.25);
}

// Hybrid sharding (training.zero3.replicas; sharded_data_parallel.h): Llama 3 8B at dp 32
// (tp 1) on four DGX A100 nodes whose NICs are slowed to 25 Gb/s, so the network bounds the
// plan; `replicas` shard groups of 32 / replicas consecutive ranks.
std::string hsdpRun(int replicas, const std::string& extra = "") {
  return R"(
name: hsdp
model: llama3-8b
cluster: dgx-a100
training: {seq_len: 2048, global_batch_size: 32, micro_batch_size: 1, precision: bf16, stack: pytorch-fsdp,
           zero3: {replicas: )" +
         std::to_string(replicas) + "}" + extra + R"(}
parallelism: {gpus: 32, tp: 1, dp: 32, pp: 1, zero: 3, recompute: full}
)";
}

const std::vector<std::string> kSlowNics{"cluster.inter_node.nic_bandwidth_Gbps=25"};

TEST(ShardedBlocksTest, ReplicasNeedBlocksADivisorOfDpAndNoPipeline) {
  EXPECT_EQ(loaded(hsdpRun(4)).training.zero3.replicas, 4);
  EXPECT_EQ(loaded(fsdpRun(", stack: torchtitan")).training.zero3.replicas, 1);
  auto expectRefused = [](const Expected<Experiment>& experiment, const std::string& words) {
    ASSERT_FALSE(experiment.ok());
    const std::string message = experiment.error().toString();
    EXPECT_NE(message.find("training.zero3.replicas"), std::string::npos) << message;
    EXPECT_NE(message.find(words), std::string::npos) << message;
  };
  const auto zero = load(hsdpRun(0));
  expectRefused(zero, "positive");
  EXPECT_NE(zero.error().toString().find("fsdp.yaml:6:"), std::string::npos) << zero.error().toString();
  const auto indivisible = load(hsdpRun(3));
  expectRefused(indivisible, "does not divide dp = 32");
  EXPECT_NE(indivisible.error().toString().find("fsdp.yaml:6:"), std::string::npos) << indivisible.error().toString();
  expectRefused(load(hsdpRun(32)), "shard groups of one rank");
  expectRefused(load(hsdpRun(4), {"training.zero3.unit=bucket"}), "training.zero3.unit: block");
  expectRefused(load(hsdpRun(4), {"parallelism.zero=1"}), "parallelism.zero: 3");
  expectRefused(
      load(hsdpRun(4), {"parallelism.pp=2", "parallelism.dp=16", "training.zero3.reshard_after_forward=never"}),
      "pipeline parallelism (pp = 2) is not modelled");
}

// Parameters, gradients and optimizer states sharded over the shard group, not dp.
TEST(ShardedBlocksTest, HybridShardingShardsStatesOverTheShardGroup) {
  const StageMemory full = estimateMemory(loaded(hsdpRun(1))).stages.front();
  const StageMemory hybrid = estimateMemory(loaded(hsdpRun(4))).stages.front();
  const double parameters = full.parameters.total();
  EXPECT_NEAR(full.optimizer, parameters * 12.0 / 32.0, 1.0);
  EXPECT_NEAR(hybrid.optimizer, parameters * 12.0 / 8.0, 1.0);
  EXPECT_NEAR(full.gradients, parameters * 4.0 / 32.0, 1.0);
  EXPECT_NEAR(hybrid.gradients, parameters * 4.0 / 8.0, 1.0);
  // The gathered blocks are whole either way.
  EXPECT_NEAR(hybrid.weights, full.weights, 1.0);
  EXPECT_NEAR(hybrid.communication_buffers, full.communication_buffers, 1.0);
}

// The data-parallel bytes each iteration puts on the InfiniBand links, from the iteration graph.
double networkBytes(const Experiment& experiment) {
  SimulationOptions options = shippedSimulationOptions();
  applySoftwareStack(experiment, options);
  const auto cluster = valueOrThrow(topology::Cluster::build(experiment.cluster));
  topology::Router router(cluster);
  const auto compute =
      valueOrThrow(perf::ComputeModel::create(experiment.cluster.gpu, experiment.training.precision, options.compute));
  const ComputeTimer timer(compute);
  IterationBuilder builder(experiment, cluster, router, options.communication, timer, options.iteration);
  const IterationGraph built = builder.build();
  const sim::TaskGraph& graph = built.graph;
  double bytes = 0.0;
  for (sim::TaskId task = 0; task < graph.taskCount(); ++task) {
    if (graph.kind(task) != sim::TaskKind::kFlow) continue;
    const auto links = graph.routeLinks(graph.route(task));
    const auto multiplicity = graph.routeMultiplicity(graph.route(task));
    for (std::size_t i = 0; i < links.size(); ++i) {
      // Bytes leaving a node: on the NIC-to-switch cables of the sending side.
      const topology::Link& link = cluster.link(links[i]);
      if (link.type == topology::LinkType::kInfiniBand &&
          cluster.device(link.from).kind == topology::DeviceKind::kNic) {
        bytes += graph.flowBytes(task) * (multiplicity.empty() ? 1.0 : multiplicity[i]);
      }
    }
  }
  return bytes;
}

// Full sharding gathers each block twice and reduce-scatters it once over all 32 GPUs: every
// one crosses the NICs (a ring over four nodes sends each node's share out once, about the
// block's bytes per node and call: 3 x 2 bytes per parameter and node). Hybrid sharding keeps
// the gathers and reduce-scatters on NVLink and sends only the all-reduce of each 1/8 gradient
// shard across the nodes (2 x 3/4 of the block's 2 bytes per parameter and node): about half.
// With the NICs bounding the plan, hybrid sharding is faster; replicas 16 (shard groups of 2
// GPUs) moves the same all-reduce bytes in more, smaller calls.
TEST(ShardedBlocksTest, HybridShardingKeepsGathersInTheNodeAndAllReducesAcross) {
  const Experiment full = loaded(hsdpRun(1, ", grad_reduce_precision: bf16"), kSlowNics);
  const Experiment hybrid = loaded(hsdpRun(4, ", grad_reduce_precision: bf16"), kSlowNics);
  const double full_bytes = networkBytes(full);
  const double hybrid_bytes = networkBytes(hybrid);
  EXPECT_GT(hybrid_bytes, 0.0);
  EXPECT_NEAR(hybrid_bytes / full_bytes, 0.5, 0.1) << hybrid_bytes << " " << full_bytes;
  const double full_time = simulate(full).iteration_time_s;
  const double hybrid_time = simulate(hybrid).iteration_time_s;
  EXPECT_LT(hybrid_time, 0.8 * full_time) << hybrid_time << " " << full_time;
}

// replicas 1 is full sharding: the same iteration as without the key.
TEST(ShardedBlocksTest, OneReplicaIsFullSharding) {
  const IterationResult unset = simulate(loaded(fsdpRun(", zero3: {unit: block}")));
  const IterationResult one = simulate(loaded(fsdpRun(", zero3: {unit: block, replicas: 1}")));
  EXPECT_EQ(unset.iteration_time_s, one.iteration_time_s);
  EXPECT_EQ(unset.tasks, one.tasks);
}

TEST(ShardedBlocksTest, SameInputSameResult) {
  const Experiment experiment = loaded(fsdpRun(", stack: torchtitan"));
  EXPECT_EQ(simulate(experiment).iteration_time_s, simulate(experiment).iteration_time_s);
}

}  // namespace
}  // namespace trainsim::parallelism
