#include "parallelism/compute_timer.h"

#include <algorithm>
#include <cmath>

namespace trainsim::parallelism {

double ComputeTimer::seconds(const Op& op, PassKind pass) const {
  const bool backward = pass == PassKind::kBackward;
  const OpCost& cost = backward ? op.backward : op.forward;
  const auto& gemms = backward ? op.backward_gemms : op.forward_gemms;
  // The kernels' real work: flash attention skips the masked half and recomputes scores.
  const double flops = cost.executed_flops > 0.0 ? cost.executed_flops : cost.flops;
  // The fused (FlashAttention-style) kernel runs at the attention efficiency, not as GEMMs.
  if (op.kind == OpKind::kAttention && (gemms.empty() || op.name == "flash_attention")) {
    return model_.attentionTime(flops, cost.bytes);
  }
  if (!gemms.empty() && (op.kind == OpKind::kGemm || op.kind == OpKind::kAttention)) {
    const GemmKernels kernels = gemmKernels(op, pass);
    double seconds = 0.0;
    for (double kernel : kernels.seconds) seconds += kernel;
    return seconds * kernels.stretch;
  }
  if (flops <= 0.0 && cost.bytes <= 0.0) return 0.0;
  return model_.elementwiseTime(cost.bytes, flops);
}

double ComputeTimer::gemmSeconds(const Op& op, PassKind pass, std::size_t index) const {
  const bool fused_attention = op.kind == OpKind::kAttention && op.name == "flash_attention";
  if (op.kind != OpKind::kGemm && (op.kind != OpKind::kAttention || fused_attention)) {
    return OpTimer::gemmSeconds(op, pass, index);
  }
  const GemmKernels kernels = gemmKernels(op, pass);
  return index < kernels.seconds.size() ? kernels.seconds[index] * kernels.stretch : 0.0;
}

ComputeTimer::GemmKernels ComputeTimer::gemmKernels(const Op& op, PassKind pass) const {
  const bool backward = pass == PassKind::kBackward;
  const OpCost& cost = backward ? op.backward : op.forward;
  const auto& gemms = backward ? op.backward_gemms : op.forward_gemms;
  // Each matmul of the op as its own kernel, the op's memory traffic (and its epilogues'
  // share of it) split evenly among them.
  GemmKernels result;
  result.seconds.reserve(gemms.size());
  const auto kernels = static_cast<double>(gemms.size());
  const auto precision = op.sixteen_bit_matmul ? sim::GemmPrecision::kSixteenBit : sim::GemmPrecision::kTraining;
  // SMs held by an overlapped collective's kernels leave the GEMMs the rest: planned for
  // that many where Transformer Engine sets the SM margin, else planned for the whole GPU
  // and slowed in proportion (OpCost::comm_sm_margin).
  const int units = model_.computeUnits();
  const int held = std::clamp(static_cast<int>(std::lround(cost.comm_compute_units)), 0, units - 1);
  const int sms = held > 0 && cost.comm_sm_margin ? units - held : 0;
  result.stretch = held > 0 && !cost.comm_sm_margin ? static_cast<double>(units) / (units - held) : 1.0;
  for (const GemmShape& shape : gemms) {
    // A GEMM split into chunks (tp_comm_overlap): the chunks that run at once share the SMs
    // like one GEMM of their rows together; the groups of them run one after another.
    const double groups = shape.chunkGroups();
    result.seconds.push_back(groups *
                             model_.gemmTime(sim::GemmShape{shape.concurrentRows(), shape.n, shape.k, shape.batch},
                                             cost.bytes / kernels / groups, cost.epilogue_bytes / kernels / groups,
                                             precision, sms));
  }
  return result;
}

}  // namespace trainsim::parallelism
