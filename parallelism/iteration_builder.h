// Builds the task graph of one training iteration: per-rank compute streams running the
// pipeline schedule's passes, tensor/context/expert-parallel collectives inside each pass,
// pipeline sends between stages, data-parallel gradient reduction (bucketed and overlapped
// with the last backward when asked), ZeRO parameter gathers, and the optimizer step.
//
// Granularity: one compute task per (rank, pass, micro-batch, model chunk) holding all its
// layers; the tensor-parallel collectives of those layers run as one collective per kind
// with their summed bytes, followed by the fixed latency of the other (count - 1) calls.
// Megatron runs these collectives on the compute stream (they are not overlapped), so the
// pass takes compute + communication either way; what is lost is only the interleaving
// order inside a pass. Under tp_comm_overlap the collectives Transformer Engine runs beside
// its GEMMs start with the pass instead, and what each leaves exposed beside its own GEMM
// (tp_overlap_exposure.h) runs after the pass's compute. ZeRO-3 gathers each chunk's parameters before every pass
// (prefetched one pass ahead) and reduce-scatters every micro-batch's gradients.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "parallelism/chunk_workload.h"
#include "parallelism/experiment.h"
#include "parallelism/flops_model.h"
#include "parallelism/gradient_buckets.h"
#include "parallelism/optimizer_step.h"
#include "parallelism/pipeline_schedule.h"
#include "parallelism/rank_layout.h"
#include "sim/collective_builder.h"
#include "sim/task_graph.h"
#include "topology/cluster.h"
#include "topology/router.h"

namespace trainsim::parallelism {

// How long an op of the workload takes on one GPU: the compute model.
class OpTimer {
 public:
  virtual ~OpTimer() = default;
  [[nodiscard]] virtual double seconds(const Op& op, PassKind pass) const = 0;
  // One of the op's GEMM kernels: forward_gemms[index] or backward_gemms[index]. By default
  // the op's time shared evenly among them.
  [[nodiscard]] virtual double gemmSeconds(const Op& op, PassKind pass, std::size_t index) const;
  // A memory-bound kernel moving `bytes` (the optimizer step).
  [[nodiscard]] virtual double memoryBoundSeconds(double bytes) const = 0;
  // Share of the GPU's compute an overlapped data-parallel collective takes while it runs
  // (its kernel's SMs); 0: none.
  [[nodiscard]] virtual double collectiveComputeShare() const { return 0.0; }
};

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
                   const sim::CommunicationParameters& communication, const OpTimer& timer,
                   IterationOptions options = {});

  // The whole iteration's graph over every rank of the plan.
  [[nodiscard]] IterationGraph build();

 private:
  struct PassWork {
    double forward_s = 0.0;
    double backward_s = 0.0;  // including recomputation
    // Per parallel group and collective op: summed bytes and call count, forward / backward.
    struct Comm {
      ParallelGroup group;
      sim::CollectiveOp op;
      bool backward;
      double bytes;
      int64_t count;
      // Beside a GEMM under tp_comm_overlap (Communication::beside) or beside the attention
      // steps (Communication::beside_attention): issued as the pass starts instead of after
      // its compute.
      bool overlapped = false;
    };
    std::vector<Comm> comms;
    // What the overlapped collectives add to their GEMMs (tp_overlap_exposure.h), run after
    // the pass's compute.
    double forward_exposed_s = 0.0;
    double backward_exposed_s = 0.0;
  };
  [[nodiscard]] PassWork chunkWork(int64_t stage, int64_t chunk) const;
  void addWorkload(PassWork& work, const ChunkPart& part) const;
  // One call of a tensor- or context-parallel collective on a group of its kind, cached.
  [[nodiscard]] double groupCollectiveSeconds(const Communication& comm) const;
  // A tensor-parallel group's call alone: the tuner's closed-form estimate (the groups are
  // symmetric and, inside a node, do not share links).
  [[nodiscard]] double tensorCollectiveSeconds(const Communication& comm) const;
  // A ring-attention exchange as every context-parallel group of the first stage runs it at
  // once, simulated on the flow network: rings that cross nodes share the NICs and the
  // fabric, which the tuner's estimate for one group alone does not see.
  [[nodiscard]] double concurrentContextSeconds(const Communication& comm) const;
  sim::TaskId addCollective(IterationGraph& result, sim::CollectiveOp op, const std::vector<int64_t>& ranks,
                            double bytes, int64_t count, std::vector<sim::TaskId> dependencies, TaskCategory category);

  const Experiment& experiment_;
  const topology::Cluster& cluster_;
  topology::Router& router_;
  const sim::CommunicationParameters& communication_;
  const OpTimer& timer_;
  IterationOptions options_;
  RankLayout layout_;
  std::vector<int64_t> layers_per_stage_;
  // Collective choices and zero-byte latencies, per (op, group size, bytes, category):
  // groups of one kind are symmetric, so the tuner runs once per kind.
  using CollectiveKey = std::tuple<int, std::size_t, double, int>;
  std::map<CollectiveKey, sim::CollectiveChoice> choices_;
  std::map<CollectiveKey, double> empty_latency_;
  mutable std::map<std::tuple<int, int, double>, double> group_collective_seconds_;
  mutable std::vector<double> context_capacities_;  // effective link capacities, for concurrentContextSeconds
};

}  // namespace trainsim::parallelism
