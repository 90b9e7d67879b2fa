#include "parallelism/pass_work.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "base/units.h"
#include "parallelism/parallel_group_members.h"
#include "parallelism/ring_attention_exposure.h"
#include "parallelism/tp_overlap_exposure.h"

namespace trainsim::parallelism {
namespace {

double sumInOrder(double start, const std::vector<double>& stretches) {
  for (const double stretch : stretches) start += stretch;
  return start;
}

// An expert-parallel all-to-all that hides behind the other micro-batch's pass under
// moe_a2a_overlap (ParallelPlan::moe_a2a_overlap).
bool pairedAllToAll(const Communication& comm, const ParallelPlan& plan) {
  return plan.moe_a2a_overlap && comm.group == ParallelGroup::kExpert && comm.op == perf::CollectiveOp::kAllToAll;
}

}  // namespace

double PassWork::computeSeconds(PassKind pass) const {
  switch (pass) {
    case PassKind::kForward: return forward_s;
    case PassKind::kBackward: return backward_s;
    case PassKind::kWeight: return weight_s;
  }
  return 0.0;
}

double PassWork::exposedSeconds(PassKind pass) const {
  if (pass == PassKind::kWeight) return 0.0;
  return sumInOrder(0.0, pass == PassKind::kForward ? forward_exposed : backward_exposed);
}

double PassWork::computeAndExposedSeconds(PassKind pass) const {
  if (pass == PassKind::kWeight) return weight_s;
  return sumInOrder(computeSeconds(pass), pass == PassKind::kForward ? forward_exposed : backward_exposed);
}

Recompute recomputeOf(const ChunkPart& part, const ParallelPlan& plan) {
  return part.recomputable && !part.beyond_recompute_layers ? plan.recompute : Recompute::kNone;
}

double kernelsOf(const Op& op, PassKind pass) {
  const bool forward = pass == PassKind::kForward;
  const std::size_t gemms = forward ? op.forward_gemms.size() : op.backward_gemms.size();
  return static_cast<double>(std::max<std::size_t>(gemms, 1)) +
         (forward ? op.extra_kernels_forward : op.extra_kernels_backward);
}

double hostExtraSeconds(const Op& op, PassKind pass, const HostCosts& host) {
  const bool forward = pass == PassKind::kForward;
  return (forward ? op.library_calls_forward : op.library_calls_backward) * host.per_library_call_s +
         (forward ? op.native_kernels_forward : op.native_kernels_backward) * host.per_native_kernel_s;
}

HostWait forwardHostWaitSeconds(const ChunkPart& part, const ParallelPlan& plan, const OpTimer& timer,
                                const OneCallSeconds& one_call_seconds, const HostCosts& host) {
  const Workload& workload = part.workload;
  if (!host.modelled() ||
      std::none_of(workload.ops.begin(), workload.ops.end(), [](const Op& op) { return op.host_sync_share > 0.0; })) {
    return {};
  }
  // Per segment of one layer (before the first sync, then after each): the host's launches,
  // the GPU's compute and its collectives.
  std::vector<double> launches(1, 0.0);
  std::vector<double> compute(1, 0.0);
  std::vector<double> collectives(1, 0.0);
  std::vector<std::size_t> segment_of_op;
  double share = 0.0;
  for (const Op& op : workload.ops) {
    if (op.host_sync_share > 0.0) {
      launches.push_back(0.0);
      compute.push_back(0.0);
      collectives.push_back(0.0);
      share = std::max(share, op.host_sync_share);
    }
    segment_of_op.push_back(launches.size() - 1);
    launches.back() +=
        kernelsOf(op, PassKind::kForward) * host.per_kernel_s + hostExtraSeconds(op, PassKind::kForward, host);
    compute.back() += timer.seconds(op, PassKind::kForward);
  }
  for (const Communication& comm : workload.communications) {
    if (comm.backward || groupSize(comm.group, plan) < 2) continue;
    const std::size_t segment =
        comm.issued_before_op < segment_of_op.size() ? segment_of_op[comm.issued_before_op] : launches.size() - 1;
    const auto count = static_cast<double>(comm.count);
    launches[segment] += count * host.per_kernel_s;
    if (!comm.beside.has_value() && !comm.beside_attention && !pairedAllToAll(comm, plan)) {
      collectives[segment] += count * one_call_seconds(comm);
    }
  }
  HostWait result;
  result.syncs = true;
  for (std::size_t i = 0; i < launches.size(); ++i) {
    result.wait_s += std::max(0.0, launches[i] - compute[i] - collectives[i]);
    result.covered_s += std::clamp(launches[i] - compute[i], 0.0, collectives[i]);
  }
  result.wait_s *= part.repeats * share;
  result.covered_s *= part.repeats * share;
  return result;
}

void addPassWork(PassWork& work, const ChunkPart& part, const ParallelPlan& plan, const OpTimer& timer,
                 const OneCallSeconds& one_call_seconds, const perf::CommunicationParameters& communication,
                 const HostCosts& host) {
  const HostWait host_wait = forwardHostWaitSeconds(part, plan, timer, one_call_seconds, host);
  work.forward_host_wait_s += host_wait.wait_s;
  work.forward_host_covered_s += host_wait.covered_s;
  work.forward_host_syncs = work.forward_host_syncs || host_wait.syncs;
  const Workload& workload = part.workload;
  const double layers = part.repeats;
  const Recompute recompute = recomputeOf(part, plan);
  for (const Op& op : workload.ops) {
    const double forward = timer.seconds(op, PassKind::kForward);
    work.forward_s += layers * forward;
    work.backward_s += layers * timer.seconds(op, PassKind::kBackward);
    if (op.kind == OpKind::kGemm && op.backward_gemms.size() == 2) {
      work.weight_s += layers * timer.gemmSeconds(op, PassKind::kBackward, 1);
      work.weight_kernels += layers;
    }
    work.forward_kernels += layers * kernelsOf(op, PassKind::kForward);
    work.backward_kernels += layers * kernelsOf(op, PassKind::kBackward);
    work.forward_host_extra_s += layers * hostExtraSeconds(op, PassKind::kForward, host);
    work.backward_host_extra_s += layers * hostExtraSeconds(op, PassKind::kBackward, host);
    if (const double rerun = rerunShare(op, recompute, plan.recompute_modules); rerun > 0.0) {
      work.backward_s += layers * rerun * forward;
      // A partly rerun GEMM op stands for whole matmuls (the key projection of the QKV's three).
      work.backward_kernels += layers * kernelsOf(op, PassKind::kForward);
      work.backward_host_extra_s += layers * hostExtraSeconds(op, PassKind::kForward, host);
    }
  }
  for (const Communication& comm : workload.communications) {
    // The workload binds a GEMM only to tensor-parallel collectives and marks only
    // context-parallel exchanges as beside the attention (transformer_workload.cpp:
    // tensorParallelBlock, ringExchange).
    assert(!comm.beside || comm.group == ParallelGroup::kTensor);
    assert(!comm.beside_attention || comm.group == ParallelGroup::kContext);
    const bool paired = pairedAllToAll(comm, plan);
    const bool beside_compute = comm.beside.has_value() || comm.beside_attention || paired;
    const double bytes = layers * comm.bytes * static_cast<double>(comm.count);
    const auto count = static_cast<int64_t>(std::llround(layers)) * comm.count;
    work.collectives.push_back({comm.group, comm.op, comm.backward, bytes, count, beside_compute, false, paired});
    // Each call is a kernel the host launches too (an NCCL kernel, or a userbuffers copy).
    (comm.backward ? work.backward_kernels : work.forward_kernels) += static_cast<double>(count);
    // Full recomputation repeats the forward's tensor-parallel collectives in the backward;
    // full and selective with the core attention both rerun it, and with it its ring
    // exchanges. selective_op keeps the attention's output and reruns the tensor-parallel
    // collectives whose outputs feed the rerun ops (Communication::op_checkpoint_rerun);
    // selective, those of its modules (a dense MLP's, the shared experts').
    const bool selective = recompute == Recompute::kSelective;
    const bool core_attention = selective && (plan.recompute_modules & recompute_module::kCoreAttention) != 0;
    const bool tensor_rerun = recompute == Recompute::kFull ||
                              (recompute == Recompute::kSelectiveOp && comm.op_checkpoint_rerun) ||
                              (selective && (comm.recompute_module & plan.recompute_modules) != 0);
    const bool recomputed =
        (tensor_rerun && comm.group == ParallelGroup::kTensor) ||
        ((recompute == Recompute::kFull || core_attention) && comm.group == ParallelGroup::kContext);
    if (recomputed && !comm.backward) {
      work.collectives.push_back({comm.group, comm.op, true, bytes, count, beside_compute, true, paired});
      work.backward_kernels += static_cast<double>(count);
    }
  }
  // A copy SM of Transformer Engine's userbuffers moves data at one NCCL channel's rate
  // (CommunicationParameters::channel_bandwidth_GBps).
  const double sm_copy_Bps = units::gigabytesPerSecond(communication.channel_bandwidth_GBps);
  const OverlapExposure tensor = tpOverlapExposure(workload, timer, one_call_seconds, sm_copy_Bps);
  const OverlapExposure ring = ringAttentionExposure(workload, timer, plan.cp, one_call_seconds);
  work.forward_exposed.push_back(layers * (tensor.forward_s + ring.forward_s));
  work.backward_exposed.push_back(layers * (tensor.backward_s + ring.backward_s));
  // ... and the recomputed forward's collectives beside the recomputed GEMMs and attention.
  if (recompute == Recompute::kFull) work.backward_exposed.push_back(layers * (tensor.forward_s + ring.forward_s));
  if (recompute == Recompute::kSelective && (plan.recompute_modules & recompute_module::kCoreAttention) != 0) {
    work.backward_exposed.push_back(layers * ring.forward_s);
  }
}

PassWork chunkPassWork(const Experiment& experiment, int64_t stage, int64_t chunk, const FlopsOptions& flops,
                       const OpTimer& timer, const OneCallSeconds& one_call_seconds,
                       const perf::CommunicationParameters& communication, const HostCosts& host) {
  PassWork work;
  for (const ChunkPart& part : chunkWorkloads(experiment, stage, chunk, flops)) {
    addPassWork(work, part, experiment.plan, timer, one_call_seconds, communication, host);
  }
  return work;
}

}  // namespace trainsim::parallelism
