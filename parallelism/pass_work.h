// What one pass of a model chunk costs one GPU per micro-batch: the compute of its ops
// (recomputation included), the tensor/context/expert-parallel collectives its layers call,
// and what the collectives Transformer Engine runs beside the compute leave exposed.
//
// The iteration builder schedules this work as tasks and the sweep's screen
// (sweep/iteration_estimate.h) prices it in closed form; both take it from addPassWork, so
// that the simulation and the screen account a pass alike. Each times one call of a
// collective its own way (the builder: the tuner's estimate, or a flow simulation of the
// concurrent rings, pass_collective_timer.h; the screen: the busiest link when every group
// runs it), which is passed in.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "parallelism/chunk_workload.h"
#include "parallelism/experiment.h"
#include "parallelism/host_costs.h"
#include "parallelism/op_timer.h"
#include "parallelism/pipeline_schedule.h"
#include "parallelism/transformer_workload.h"
#include "perf/communication_parameters.h"

namespace trainsim::parallelism {

// One Communication of a part's workload over all the part's layers.
struct PassCollective {
  ParallelGroup group = ParallelGroup::kTensor;
  perf::CollectiveOp op = perf::CollectiveOp::kAllReduce;
  bool backward = false;
  // Summed over the layers: layers x count x the Communication's bytes, in layers x count
  // calls.
  double bytes = 0.0;
  int64_t count = 0;
  // Runs beside the pass's compute, from its start, instead of after it: a tensor-parallel
  // collective Transformer Engine binds to a GEMM (Communication::beside, bound only under
  // tp_comm_overlap) or a ring-attention exchange (Communication::beside_attention).
  bool beside_compute = false;
  // The forward's collective run again in the backward by activation recomputation.
  bool recomputed = false;
  // Beside the compute only where the pass has a partner: an expert-parallel all-to-all under
  // moe_a2a_overlap, which hides behind the other micro-batch's pass of a steady-state pair
  // (ParallelPlan::moe_a2a_overlap). The screen takes every pass as paired.
  bool needs_partner = false;
};

struct PassWork {
  double forward_s = 0.0;   // compute
  double backward_s = 0.0;  // compute, recomputation included
  // Of backward_s, the weight-gradient GEMMs (each weight GEMM op's second backward GEMM):
  // the W pass of a schedule that splits the backward (splitsWeightGradients). The embedding's
  // table gradient and the norms' weight gradients stay in the input-gradient pass.
  double weight_s = 0.0;
  // Kernels the host launches (kernelsOf, and one per collective call), recomputation
  // included: what host dispatch costs.
  double forward_kernels = 0.0;
  double backward_kernels = 0.0;
  double weight_kernels = 0.0;  // of backward_kernels, the weight-gradient GEMMs'
  // The host's time beyond those kernels' dispatch: library calls (Op::library_calls_*) and
  // the kernels the framework's C++ launches (Op::native_kernels_*).
  double forward_host_extra_s = 0.0;
  double backward_host_extra_s = 0.0;
  // With host dispatch, what the forward's host synchronisations (Op::host_sync_share) add:
  // the host cannot launch past a sync before the GPU has caught up, so between two syncs
  // the GPU runs no faster than the host launches (forwardHostWaitSeconds).
  double forward_host_wait_s = 0.0;
  // ... and the host's launch time that the synced segments' collectives cover (the builder
  // runs a pass's collectives after its launches; see forwardHostWaitSeconds).
  double forward_host_covered_s = 0.0;
  // Whether the forward has a host sync at all: the host then cannot launch the next pass
  // before the GPU has reached it (the builder holds its host stream on the forward's end).
  bool forward_host_syncs = false;
  // In the order of the parts' communications, each followed by its recomputed repeat.
  std::vector<PassCollective> collectives;
  // What the collectives beside the compute leave exposed beside their GEMMs and attention
  // steps (tp_overlap_exposure.h, ring_attention_exposure.h), run after the pass's compute:
  // one stretch per part and pass (the recomputed forward's on its own), in the order they
  // were added. Kept apart so that both consumers sum them in that order: the builder into
  // a task of their own (exposedSeconds), the screen onto the compute
  // (computeAndExposedSeconds).
  std::vector<double> forward_exposed;
  std::vector<double> backward_exposed;

  // kBackward: the whole backward (weight gradients included); kWeight: weight_s.
  [[nodiscard]] double computeSeconds(PassKind pass) const;
  // The stretches summed from 0, in order (none for kWeight).
  [[nodiscard]] double exposedSeconds(PassKind pass) const;
  // The compute plus the stretches, in order.
  [[nodiscard]] double computeAndExposedSeconds(PassKind pass) const;
};

// One call of a workload's collective (its own bytes, not the summed ones) on a group of its
// kind, in seconds.
using OneCallSeconds = std::function<double(const Communication&)>;

// What activation recomputation reruns of `part`: the plan's setting for the transformer
// layers, nothing for the embedding, output layer and loss (ChunkPart::recomputable).
[[nodiscard]] Recompute recomputeOf(const ChunkPart& part, const ParallelPlan& plan);

// Kernels an op launches in a pass: one per GEMM it runs (a backward's input- and
// weight-gradient GEMMs are two), else one (a fused or element-wise kernel), plus the op's
// extra kernels (Op::extra_kernels_forward / _backward).
[[nodiscard]] double kernelsOf(const Op& op, PassKind pass);

// The host's time for an op's pass beyond its kernels' dispatch: its library calls and its
// native kernels (Op::library_calls_*, Op::native_kernels_*).
[[nodiscard]] double hostExtraSeconds(const Op& op, PassKind pass, const HostCosts& host);

// The time the GPU waits for its host in one forward pass of `part` beyond its compute and
// the expert-parallel collectives between its ops: the ops from one host sync to the next
// (Op::host_sync_share) form a segment, and a segment lasts the longer of its kernels'
// launches (kernels x HostCosts::per_kernel_s, plus hostExtraSeconds) and its GPU time, because the host cannot
// run ahead across a sync. The pass then takes the sum over its segments, where without
// syncs it takes the longer of the two sums; times the share of the layers that sync. 0
// without a sync or without host dispatch.
// One sync per layer (a MoE block's): its share applies to the layer's segments. A
// recomputed forward's sync (full recomputation reruns the dispatch) is not counted, and an
// all-to-all paired under moe_a2a_overlap is taken as hidden on every step, where the builder
// pairs only the steady state's.
// A layer's segments run from its start to its sync and from its sync to its end; in truth
// the stretch from one layer's sync to the next layer's is one segment (the host launches
// the next attention while the GPU runs this layer's experts), which this takes as two:
// long by at most the smaller of the first part's GPU-over-host and the second part's
// host-over-GPU time. A collective runs in the segment it is issued in
// (Communication::issued_before_op); those beside the compute cost only their launches.
struct HostWait {
  bool syncs = false;  // the part has a host sync and the host is modelled
  double wait_s = 0.0;
  // Of the segments' launches, the time that ran while their collectives did: the builder,
  // which runs a pass's collectives after the pass's launches, takes it off the launches.
  double covered_s = 0.0;
};
[[nodiscard]] HostWait forwardHostWaitSeconds(const ChunkPart& part, const ParallelPlan& plan, const OpTimer& timer,
                                              const OneCallSeconds& one_call_seconds, const HostCosts& host);

// Adds `part` (its workload `repeats` times) to `work`; with host dispatch (host.modelled()),
// its forward host wait and its library calls' and native kernels' host time too.
void addPassWork(PassWork& work, const ChunkPart& part, const ParallelPlan& plan, const OpTimer& timer,
                 const OneCallSeconds& one_call_seconds, const perf::CommunicationParameters& communication,
                 const HostCosts& host = {});

// Every part of model chunk `chunk` of `stage` (chunkWorkloads), added in order.
[[nodiscard]] PassWork chunkPassWork(const Experiment& experiment, int64_t stage, int64_t chunk,
                                     const FlopsOptions& flops, const OpTimer& timer,
                                     const OneCallSeconds& one_call_seconds,
                                     const perf::CommunicationParameters& communication, const HostCosts& host = {});

}  // namespace trainsim::parallelism
