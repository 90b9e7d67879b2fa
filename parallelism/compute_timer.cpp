#include "parallelism/compute_timer.h"

#include <algorithm>
#include <cmath>

namespace trainsim::parallelism {

namespace {

// The problem of a fused attention kernel, from the score matmul its op records
// (WorkloadBuilder::coreAttention: queries x keys for each of micro-batch x heads pairs).
perf::AttentionShape fusedAttentionShape(const Op& op) {
  if (op.forward_gemms.empty()) return {};
  const GemmShape& scores = op.forward_gemms.front();
  return {static_cast<double>(scores.batch), static_cast<double>(scores.m), static_cast<double>(scores.n)};
}

}  // namespace

double ComputeTimer::seconds(const Op& op, PassKind pass) const {
  // The op's work in its counted kernels, then the gaps of the small kernels beyond them
  // (an unfused path's, the framework's C++ launches).
  const bool forward = pass == PassKind::kForward;
  const double beyond = forward ? op.extra_kernels_forward + op.native_kernels_forward
                                : op.extra_kernels_backward + op.native_kernels_backward;
  return workSeconds(op, pass) + model_.kernelGapsTime(beyond);
}

double ComputeTimer::workSeconds(const Op& op, PassKind pass) const {
  const bool backward = pass == PassKind::kBackward;
  const OpCost& cost = backward ? op.backward : op.forward;
  const auto& gemms = backward ? op.backward_gemms : op.forward_gemms;
  // The kernels' real work: flash attention skips the masked half and recomputes scores.
  const double flops = cost.executed_flops > 0.0 ? cost.executed_flops : cost.flops;
  // The fused (FlashAttention-style) kernel runs at the attention efficiency, not as GEMMs.
  if (op.kind == OpKind::kAttention && (gemms.empty() || op.name == "flash_attention")) {
    // The recomputation of a forward pass runs the forward kernel.
    return model_.attentionTime(flops, cost.bytes,
                                backward ? perf::AttentionPass::kBackward : perf::AttentionPass::kForward,
                                fusedAttentionShape(op));
  }
  if (!gemms.empty() && (op.kind == OpKind::kGemm || op.kind == OpKind::kAttention)) {
    double seconds = 0.0;
    for (double kernel : gemmKernels(op, pass)) seconds += kernel;
    return seconds;
  }
  if (flops <= 0.0 && cost.bytes <= 0.0) return 0.0;
  return model_.elementwiseTime(cost.bytes, flops);
}

double ComputeTimer::gemmSeconds(const Op& op, PassKind pass, std::size_t index) const {
  const bool fused_attention = op.kind == OpKind::kAttention && op.name == "flash_attention";
  if (op.kind != OpKind::kGemm && (op.kind != OpKind::kAttention || fused_attention)) {
    return OpTimer::gemmSeconds(op, pass, index);
  }
  const std::vector<double> kernels = gemmKernels(op, pass);
  return index < kernels.size() ? kernels[index] : 0.0;
}

std::vector<double> ComputeTimer::gemmKernels(const Op& op, PassKind pass) const {
  const bool backward = pass == PassKind::kBackward;
  const OpCost& cost = backward ? op.backward : op.forward;
  const auto& gemms = backward ? op.backward_gemms : op.forward_gemms;
  // Each matmul of the op as its own kernel, the op's memory traffic (and its epilogues'
  // share of it) split evenly among them.
  std::vector<double> seconds;
  seconds.reserve(gemms.size());
  const auto kernels = static_cast<double>(gemms.size());
  const auto precision = op.sixteen_bit_matmul ? perf::GemmPrecision::kSixteenBit : perf::GemmPrecision::kTraining;
  const int units = model_.computeUnits();
  for (const GemmShape& shape : gemms) {
    // SMs held by an overlapped collective's kernels leave the GEMM the rest: planned for
    // that many where Transformer Engine sets the SM margin, else planned for the whole GPU
    // and slowed in proportion (GemmShape::comm_sm_margin).
    const int held = std::clamp(static_cast<int>(std::lround(shape.comm_compute_units)), 0, units - 1);
    const int sms = held > 0 && shape.comm_sm_margin ? units - held : 0;
    const double stretch = held > 0 && !shape.comm_sm_margin ? static_cast<double>(units) / (units - held) : 1.0;
    // A GEMM split into chunks (tp_comm_overlap): the chunks that run at once share the SMs
    // like one GEMM of their rows together; the groups of them run one after another.
    const double groups = shape.chunkGroups();
    seconds.push_back(stretch * groups *
                      model_.gemmTime(perf::GemmShape{shape.concurrentRows(), shape.n, shape.k, shape.batch},
                                      cost.bytes / kernels / groups, cost.epilogue_bytes / kernels / groups, precision,
                                      sms));
  }
  return seconds;
}

}  // namespace trainsim::parallelism
