// Builds the task graph of one training iteration: per-rank compute streams running the
// pipeline schedule's passes, tensor/context/expert-parallel collectives inside each pass,
// pipeline sends between stages, data-parallel gradient reduction (bucketed and overlapped
// with the last backward when asked), ZeRO parameter gathers, and the optimizer step. It
// only describes the iteration; IterationSimulation's engine runs it.
//
// Granularity: one compute task per (rank, pass, micro-batch, model chunk) holding all its
// layers; the tensor-parallel collectives of those layers run as one collective per kind
// with their summed bytes, followed by the fixed latency of the other (count - 1) calls.
// Megatron runs these collectives on the compute stream (they are not overlapped), so the
// pass takes compute + communication either way; what is lost is only the interleaving
// order inside a pass. Under tp_comm_overlap the collectives Transformer Engine runs beside
// its GEMMs start with the pass instead, and what each leaves exposed beside its own GEMM
// (tp_overlap_exposure.h) runs after the pass's compute. ZeRO-3 gathers each chunk's
// parameters before every pass (prefetched one pass ahead) and reduce-scatters every
// micro-batch's gradients.
//
// What a pass costs (compute, collectives, exposure) comes from pass_work.h, which the
// sweep's screen prices too. build() adds the graph in phases (iteration_builder.cpp; the
// data-parallel ones in iteration_builder_data_parallel.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "parallelism/chunk_workload.h"
#include "parallelism/experiment.h"
#include "parallelism/gradient_buckets.h"
#include "parallelism/iteration_features.h"
#include "parallelism/memory_model.h"
#include "parallelism/op_timer.h"
#include "parallelism/optimizer_step.h"
#include "parallelism/pass_collective_timer.h"
#include "parallelism/pass_work.h"
#include "parallelism/pipeline_schedule.h"
#include "parallelism/rank_layout.h"
#include "parallelism/transformer_workload.h"
#include "perf/collective_builder.h"
#include "sim/task_graph.h"
#include "topology/cluster.h"
#include "topology/router.h"

namespace trainsim::parallelism {

struct IterationOptions {
  FlopsOptions flops;
  // Megatron-Core's gradient buckets: max(40M, 1M x dp) parameters (gradient_buckets.h).
  GradientBuckets grad_buckets;
  // Bytes per parameter of the reduced gradients. Unset: the main gradients' element size
  // (MicroBatchShard::mainGradientBytes: fp32 for bf16 training, 2 bytes for fp16).
  std::optional<double> grad_reduce_bytes_per_parameter;
  // The optimizer step's memory traffic per parameter (optimizer_step.h).
  OptimizerStepOptions optimizer_step;
  // Symmetric mode: data-parallel replicas are identical, so only replica 0 runs its
  // compute, tensor- and pipeline-parallel work; the data-parallel collectives still span
  // every replica's GPUs (so their network traffic and contention are simulated), assuming
  // the other replicas reach them at the same time as replica 0.
  bool symmetric = false;
  // The host's time to launch the work (training.dispatch, withHostDispatch); not modelled
  // when per_kernel_s is 0. Each rank's host launches its passes' kernels in schedule order on
  // a stream of its own; a pass starts once its first kernel is launched and ends no earlier
  // than its last one is.
  HostCosts host;
  // Per rank, how many times longer its compute takes (slow GPUs, goodput/stragglers.h);
  // empty: every rank at the compute model's rate. Not with `symmetric`, whose replicas
  // would be taken as identical.
  std::vector<double> rank_compute_scale;
};

// Task tags, to tell where time goes.
enum class TaskCategory : uint32_t {
  kOther = 0,
  kCompute,
  kTensorComm,
  kContextComm,
  kExpertComm,
  kPipelineComm,
  kDataComm,
  kOptimizer,
  kHostDispatch,
};

// "compute", "tp_comm", ... for traces.
[[nodiscard]] std::string taskCategoryName(uint32_t tag);

struct RankTasks {
  bool simulated = true;  // false for the replicas symmetric mode leaves out
  sim::StreamId compute_stream = 0;
  // Per schedule step, in the rank's order: the pass's compute task and its last task
  // (compute, or the pass's collectives).
  std::vector<PipelineStep> steps;
  std::vector<sim::TaskId> step_compute;
  std::vector<sim::TaskId> step_compute_last;  // the pass's last compute task (several with gradient buckets)
  std::vector<sim::TaskId> step_end;
  std::vector<sim::TaskId> step_input;          // the pipeline send the pass waits for (kNoTask if none)
  std::vector<sim::TaskId> step_gather;         // the ZeRO parameter all-gather the pass waits for (kNoTask if none)
  std::vector<sim::SimTime> step_compute_time;  // the pass's compute time (its parts together)
  // With host dispatch: the host stream, and per step the launch of the pass's first kernel
  // and the zero-length task that ends the pass no earlier than its last kernel's launch.
  sim::StreamId host_stream = sim::kNoStream;
  std::vector<sim::TaskId> step_launch_first;
  std::vector<sim::TaskId> step_launched;
  // The forward's wait on its host at syncs (PassWork::forward_host_wait_s); kNoTask if none.
  std::vector<sim::TaskId> step_host_wait;
  sim::TaskId optimizer = sim::kNoTask;
  sim::TaskId last_backward_end = sim::kNoTask;
};

struct IterationGraph {
  sim::TaskGraph graph;
  std::vector<RankTasks> ranks;
  int64_t microbatches = 0;
};

class IterationBuilder {
 public:
  IterationBuilder(const Experiment& experiment, const topology::Cluster& cluster, topology::Router& router,
                   const perf::CommunicationParameters& communication, const OpTimer& timer,
                   IterationOptions options = {});

  // The whole iteration's graph over every rank of the plan.
  [[nodiscard]] IterationGraph build();

  // What one pass of model chunk `chunk` of `stage` costs (pass_work.h), as build() schedules
  // it: the collectives beside the compute timed by PassCollectiveTimer.
  [[nodiscard]] PassWork passWork(int64_t stage, int64_t chunk) const;

 private:
  // One model chunk's pass as the graph holds it: its PassWork with the collectives of a
  // kind merged into one call (see the file comment) and the exposed stretches summed.
  struct ChunkPass {
    double forward_s = 0.0;
    double backward_s = 0.0;  // including recomputation; less weight_s where the schedule splits it
    double weight_s = 0.0;    // the weight-gradient pass (0 unless the schedule splits the backward)
    double forward_host_extra_s = 0.0;
    double backward_host_extra_s = 0.0;
    double forward_kernels = 0.0;
    double backward_kernels = 0.0;
    double weight_kernels = 0.0;
    // Per parallel group and collective op: summed bytes and call count, forward / backward.
    struct Comm {
      ParallelGroup group;
      perf::CollectiveOp op;
      bool backward;
      double bytes;
      int64_t count;
      bool beside_compute;  // PassCollective::beside_compute: issued as the pass starts
      bool needs_partner;   // PassCollective::needs_partner: beside only on a paired step
    };
    std::vector<Comm> comms;
    double forward_host_wait_s = 0.0;     // PassWork::forward_host_wait_s
    double forward_host_covered_s = 0.0;  // PassWork::forward_host_covered_s
    bool forward_host_syncs = false;      // PassWork::forward_host_syncs
    // What the collectives beside the compute leave exposed, run after the pass's compute.
    double forward_exposed_s = 0.0;
    double backward_exposed_s = 0.0;
  };
  // One pipeline stage: its chunks' passes, the order it runs them in (stageOrder) and, per
  // chunk, the step of its last backward (where the chunk's gradients become final: its last
  // weight-gradient pass where the schedule splits the backward).
  struct StageSchedule {
    std::vector<ChunkPass> chunks;
    std::vector<PipelineStep> order;
    StepIndex index;
    std::vector<std::size_t> last_backward;
    // Per step of `order`: whether it has a partner under moe_a2a_overlap (pairedSteps).
    std::vector<bool> paired;
  };
  // Compute tasks a pass is split into, [rank][chunk][bucket]: the last backward of a chunk
  // per gradient bucket when the reduction overlaps it, its first forward per parameter
  // bucket when the ZeRO gathers overlap it.
  struct BucketTasks {
    std::vector<std::vector<std::vector<sim::TaskId>>> gradient;
    std::vector<std::vector<std::vector<sim::TaskId>>> gather;
    // With sharded blocks, [rank][step][block]: the compute of each block of the passes
    // split into blocks (shardedBlocks), in the order they run; empty for the others.
    std::vector<std::vector<std::vector<sim::TaskId>>> blocks;
  };
  // A data-parallel group and the parameters of one model chunk on each of its GPUs that it
  // reduces (and ZeRO-gathers): the dense ones over RankLayout::dataGroup, the experts' over
  // expertDataGroup where they have groups of their own (replicaShares). Both split into the
  // chunk's gradient buckets, and run on their own communicators.
  struct ReplicaGroup {
    std::vector<int64_t> ranks;
    double chunk_parameters = 0.0;
  };
  // A chunk's pass as the builder adds it: its compute, kernels and merged collectives.
  // `split_weights`: the schedule runs the weight gradients as passes of their own.
  [[nodiscard]] static ChunkPass chunkPass(const PassWork& work, bool split_weights);

  // The phases of build(), in order (each says what it adds and why where it is defined).
  [[nodiscard]] std::vector<StageSchedule> scheduleStages() const;
  BucketTasks addComputePasses(IterationGraph& result, const std::vector<StageSchedule>& stages);
  void addPassCollectives(IterationGraph& result, const std::vector<StageSchedule>& stages);
  static void orderPassesAfterCollectives(IterationGraph& result);
  void addPipelineSends(IterationGraph& result, const std::vector<StageSchedule>& stages);
  [[nodiscard]] std::vector<std::vector<sim::TaskId>> addGradientReductions(IterationGraph& result,
                                                                            const std::vector<StageSchedule>& stages,
                                                                            const BucketTasks& buckets);
  void addOptimizerSteps(IterationGraph& result, const std::vector<std::vector<sim::TaskId>>& reductions);
  void addCopyGradientExchanges(IterationGraph& result, const std::vector<StageSchedule>& stages,
                                std::vector<std::vector<sim::TaskId>>& reductions);
  void addParameterGathers(IterationGraph& result, const std::vector<StageSchedule>& stages,
                           const BucketTasks& buckets);
  // Phases 5 and 7 with sharded blocks (iteration_builder_sharded_blocks.cpp).
  [[nodiscard]] std::vector<std::vector<sim::TaskId>> addShardedBlockCollectives(
      IterationGraph& result, const std::vector<StageSchedule>& stages, const BucketTasks& buckets);

  // Parts of the phases.
  void addPassCompute(sim::TaskGraph& graph, RankTasks& rank, double compute_scale, const StageSchedule& schedule,
                      int64_t stage, std::size_t step, std::vector<std::vector<sim::TaskId>>& gradient_buckets,
                      std::vector<std::vector<sim::TaskId>>& gather_buckets,
                      std::vector<std::vector<sim::TaskId>>& block_parts) const;
  void addGroupCollective(IterationGraph& result, int64_t rank, std::size_t step, const ChunkPass::Comm& comm,
                          bool beside_compute);
  void addChunkReductions(IterationGraph& result, const std::vector<StageSchedule>& stages, const BucketTasks& buckets,
                          const ReplicaGroup& replicas, int64_t stage, perf::CollectiveOp reduce, double grad_bytes,
                          std::vector<std::vector<sim::TaskId>>& reductions);
  void addChunkGathers(IterationGraph& result, const std::vector<StageSchedule>& stages, const BucketTasks& buckets,
                       const ReplicaGroup& replicas, int64_t stage, double bytes_per_parameter);
  [[nodiscard]] sim::TaskId addZero3Reductions(IterationGraph& result, const StageSchedule& schedule, int64_t chunk,
                                               const std::vector<int64_t>& group, perf::CollectiveOp reduce,
                                               double bytes);
  [[nodiscard]] sim::TaskId addBucketedGather(IterationGraph& result, const std::vector<int64_t>& group, int64_t chunk,
                                              int64_t count, double bytes, sim::TaskId& previous,
                                              const BucketTasks& buckets);
  void addZero3PassGathers(IterationGraph& result, const StageSchedule& schedule, int64_t chunk,
                           const std::vector<int64_t>& group, sim::TaskId gather, double bytes);
  void addBlockCollectives(IterationGraph& result, const StageSchedule& schedule, const BucketTasks& buckets,
                           const ReplicaGroup& replicas, int64_t stage,
                           std::vector<std::vector<sim::TaskId>>& reductions);
  // With sharded blocks: how many blocks step `step` of `schedule` on `stage` is split into
  // (the chunk's transformer layers), or 0 when the pass neither gathers nor reduces by block.
  [[nodiscard]] int64_t shardedBlocks(const StageSchedule& schedule, int64_t stage, std::size_t step) const;

  // Symmetric mode simulates replica 0, or as many replicas as make whole expert groups.
  [[nodiscard]] bool simulated(int64_t rank) const;
  // `rank`'s group of a tensor/context/expert-parallel kind (empty for kPipeline).
  [[nodiscard]] std::vector<int64_t> groupOf(ParallelGroup group, int64_t rank) const;
  // Parameters of one model chunk of `stage` on one GPU, for gradient reduction and the
  // optimizer, and the gradient buckets they are reduced (and gathered) in.
  [[nodiscard]] double chunkParameters(int64_t stage) const;
  [[nodiscard]] int64_t bucketCount(int64_t stage) const;
  // The groups of more than one GPU whose first rank is `rank`.
  [[nodiscard]] std::vector<ReplicaGroup> replicaGroupsLedBy(int64_t rank) const;
  // A data-parallel collective's NCCL kernel holds some of each member GPU's SMs while it
  // runs: what the GPU computes meanwhile runs on the rest.
  void contendWithCompute(IterationGraph& result, sim::TaskId collective, const std::vector<int64_t>& group) const;
  // The options of a task tagged `category`, on `stream` (kNoStream: none).
  [[nodiscard]] static sim::TaskOptions tagged(TaskCategory category, sim::StreamId stream = sim::kNoStream);
  // `count` calls of one collective: the first as flows, the others' fixed latency after it.
  // Returns the task that ends them all; `calls`, where given, receives every task that runs
  // a call (the first's group and the others' latency), for what must hold through them.
  sim::TaskId addCollective(IterationGraph& result, perf::CollectiveOp op, const std::vector<int64_t>& ranks,
                            double bytes, int64_t count, std::vector<sim::TaskId> dependencies, TaskCategory category,
                            std::vector<sim::TaskId>* calls = nullptr);

  const Experiment& experiment_;
  const topology::Cluster& cluster_;
  topology::Router& router_;
  const perf::CommunicationParameters& communication_;
  const OpTimer& timer_;
  IterationOptions options_;
  RankLayout layout_;
  std::vector<int64_t> layers_per_stage_;
  std::vector<StageParameters> stage_parameters_;  // per stage, on one GPU
  IterationFeatures features_;
  PassCollectiveTimer pass_collectives_;
  // Collective choices and zero-byte latencies, per (op, group size, bytes, category, nodes,
  // most GPUs on one node): groups of one kind are symmetric, so the tuner runs once per kind
  // and placement (two groups of a category, dense and expert data-parallel, can be of one
  // size but spread over different nodes).
  using CollectiveKey = std::tuple<int, std::size_t, double, int, int, int>;
  std::map<CollectiveKey, perf::CollectiveChoice> choices_;
  std::map<CollectiveKey, double> empty_latency_;
  // The collective builder of the graph being built (it keeps the routes of each group's
  // collectives, reused by every call); made for the graph it builds into.
  std::unique_ptr<perf::CollectiveBuilder> collectives_;
  const sim::TaskGraph* collectives_graph_ = nullptr;
};

}  // namespace trainsim::parallelism
