// The sweep's analytical screen: a closed-form estimate of one iteration's time, cheap
// enough to run on every plan that fits in memory, used only to decide which plans to
// event-simulate (and in what order). It prices the same work the iteration builder
// schedules, from the same models, without running a task graph:
//   - per model chunk (parallelism/chunk_workload.h, the builder's list), the work of its
//     passes as the builder accounts it (parallelism/pass_work.h): forward and backward time
//     of its layers (the ComputeModel of `simulate`, recomputation of the transformer layers
//     included) plus their tensor/context/expert-parallel collectives;
//   - the pipeline as m micro-batches of the slowest stage plus a (pp - 1) / v bubble, with
//     a pipeline send per chunk boundary and micro-batch in each direction;
//   - data parallelism: gradient reduction (all-reduce, or reduce-scatter with ZeRO) exposed
//     in full, or only beyond the last backward when it overlaps; the optimizer step; and
//     the ZeRO parameter all-gather (one bucket exposed when it overlaps);
//   - ZeRO-3: the parameter all-gather before every pass of every micro-batch and the
//     gradient reduce-scatter after every backward, against the passes they must precede;
//   - every collective at its latency (launch, base and step latencies, pipeline fill, from
//     the NCCL tuner's closed form, CollectiveBuilder::choose) plus its bytes over the busiest
//     link when all the groups of its kind in a pipeline stage run it at once, as the
//     simulation lays them out (same rings, routes and ECMP choices, same effective link
//     capacities as the flow network); the worst stage. Pipeline sends stay at the tuner's
//     estimate.
// What the load cannot show (a transfer slowed by one of another kind on the same links,
// groups drifting out of step) is left to the simulation.
#pragma once

#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "parallelism/chunk_workload.h"
#include "parallelism/experiment.h"
#include "parallelism/iteration_simulation.h"
#include "parallelism/op_timer.h"
#include "parallelism/pass_work.h"
#include "perf/compute_model.h"
#include "sim/task_graph.h"
#include "topology/cluster.h"
#include "topology/router.h"

namespace trainsim::sweep {

// One per thread and cluster: it caches routes and collective estimates.
class IterationEstimator {
 public:
  // Builds the cluster graph of `spec`; throws InputError when it cannot be built.
  IterationEstimator(const topology::ClusterSpec& spec, topology::Precision precision,
                     const parallelism::SimulationOptions& options);

  // Estimated iteration time in seconds of a resolved, valid plan on this cluster.
  [[nodiscard]] double iterationSeconds(const parallelism::Experiment& experiment);

  // What the screen prices for one pass of model chunk `chunk` of `stage`, part by part (its
  // transformer layers, then the embedding or output layer where the chunk has them), as
  // parallelism::addPassWork accounts it for the builder too; its one-call collective times
  // are the screen's own.
  [[nodiscard]] std::vector<parallelism::PassWork> chunkPassWork(const parallelism::Experiment& experiment,
                                                                 int64_t stage, int64_t chunk);

  // Which groups run a collective at the same time in the simulation (kPipeline: the send
  // between the first two stages, priced by the tuner alone).
  // kExpertTensor / kExpertData: the expert layers' tensor- and data-parallel groups.
  // Under hybrid sharding (training.zero3.replicas; parallelism/sharded_data_parallel.h):
  // kShard, the shard groups (consecutive members of each data-parallel group), and
  // kShardReplicas, the ranks holding the same shard, one per shard group.
  enum class GroupKind : uint8_t {
    kTensor,
    kContext,
    kExpert,
    kExpertTensor,
    kData,
    kExpertData,
    kPipeline,
    kShard,
    kShardReplicas
  };

 private:
  struct ChunkTimes;        // one pass of a chunk part: compute and collectives
  struct PipelineEstimate;  // the pipeline's passes of one iteration
  [[nodiscard]] ChunkTimes partTimes(const parallelism::ParallelPlan& plan, const parallelism::ChunkPart& part,
                                     const parallelism::OpTimer& timer);
  [[nodiscard]] PipelineEstimate pipelineEstimate(const parallelism::Experiment& experiment,
                                                  const parallelism::OpTimer& timer);
  [[nodiscard]] double pipelineSendSeconds(const parallelism::Experiment& experiment);
  [[nodiscard]] double dataParallelEnd(const parallelism::Experiment& experiment, const parallelism::OpTimer& timer,
                                       const PipelineEstimate& pipeline, const parallelism::StageParameters& stage,
                                       double seconds);
  // One part of a chunk's passes (parallelism/pass_work.h), its collectives' one-call times
  // from collectiveSeconds.
  [[nodiscard]] parallelism::PassWork partWork(const parallelism::ParallelPlan& plan,
                                               const parallelism::ChunkPart& part, const parallelism::OpTimer& timer);
  // The tuner's choice for one call, and its time without the bandwidth term (latencies
  // and pipeline fill).
  struct TunerEstimate {
    perf::CollectiveChoice choice;
    double fixed_s = 0.0;
  };
  // `ranks`: the kind's group of rank 0, which (tp, cp, dp, ep, etp, and for kShard and
  // kShardReplicas the shard groups `hybrid`) determine.
  [[nodiscard]] const TunerEstimate& tunerEstimate(const parallelism::ParallelPlan& plan, GroupKind kind,
                                                   perf::CollectiveOp op, const std::vector<int64_t>& ranks,
                                                   double bytes, int64_t hybrid = 1);
  // One call of `bytes` on `ranks` (the kind's group of rank 0) while every group of `kind`
  // in `plan` runs it too.
  [[nodiscard]] double collectiveSeconds(const parallelism::ParallelPlan& plan, GroupKind kind, perf::CollectiveOp op,
                                         const std::vector<int64_t>& ranks, double bytes, int64_t hybrid = 1);
  // Seconds per request byte on the busiest link when every group of `kind` runs `op` with `choice`.
  [[nodiscard]] double busiestLinkSecondsPerByte(const parallelism::ParallelPlan& plan, GroupKind kind,
                                                 perf::CollectiveOp op, const perf::CollectiveChoice& choice,
                                                 int64_t hybrid = 1);
  // Seconds the busiest link (or rate-capped flow) of `graph`'s flows needs for their bytes.
  [[nodiscard]] double busiestLink(const sim::TaskGraph& graph);

  std::unique_ptr<topology::Cluster> cluster_;
  std::unique_ptr<topology::Router> router_;
  perf::ComputeModel compute_;
  parallelism::SimulationOptions options_;  // a copy: callers pass options resolved for one experiment
  std::vector<double> link_capacity_Bps_;   // as the simulation's flow network
  std::vector<double> link_load_;           // busiestLink's scratch: bytes per link, all zero between calls
  std::vector<topology::LinkId> touched_links_;
  sim::TaskGraph scratch_graph_;  // CollectiveBuilder wants one; choose() adds nothing to it
  // (op, kind, tp, cp, dp, ep, etp, bytes, shard groups) -> the tuner's estimate for the kind's group of rank 0.
  std::map<std::tuple<int, int, int64_t, int64_t, int64_t, int64_t, int64_t, double, int64_t>, TunerEstimate>
      tuner_cache_;
  // (flow pattern, algorithm, channels, kind, tp, cp, replicas, pp or 0 when the groups stay
  // inside nodes, ep or 0, etp or 0, shard groups) -> seconds per byte with the Simple protocol.
  using LinkKey = std::tuple<int, int, int, int, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;
  std::map<LinkKey, double> link_cache_;
};

}  // namespace trainsim::sweep
