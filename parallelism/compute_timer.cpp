#include "parallelism/compute_timer.h"

#include <algorithm>

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
    // Each matmul of the op as its own kernel, the op's memory traffic (and its epilogues'
    // share of it) split evenly among them.
    double seconds = 0.0;
    const auto kernels = static_cast<double>(gemms.size());
    const auto precision = op.sixteen_bit_matmul ? sim::GemmPrecision::kSixteenBit : sim::GemmPrecision::kTraining;
    for (const GemmShape& shape : gemms) {
      // A GEMM split into chunks (tp_comm_overlap): the chunks that run at once share the SMs
      // like one GEMM of their rows together; the groups of them run one after another.
      const int64_t together = std::clamp<int64_t>(shape.concurrent_chunks, 1, std::max<int64_t>(shape.chunks, 1));
      const double groups = static_cast<double>(std::max<int64_t>(shape.chunks, 1)) / static_cast<double>(together);
      const int64_t rows = shape.chunks > 1 ? std::max<int64_t>(1, shape.m * together / shape.chunks) : shape.m;
      seconds +=
          groups * model_.gemmTime(sim::GemmShape{rows, shape.n, shape.k, shape.batch}, cost.bytes / kernels / groups,
                                   cost.epilogue_bytes / kernels / groups, precision);
    }
    // SMs held by an overlapped collective's kernels leave the GEMMs the rest.
    const double units = static_cast<double>(model_.computeUnits());
    if (cost.comm_compute_units > 0.0 && cost.comm_compute_units < units) {
      seconds *= units / (units - cost.comm_compute_units);
    }
    return seconds;
  }
  if (flops <= 0.0 && cost.bytes <= 0.0) return 0.0;
  return model_.elementwiseTime(cost.bytes, flops);
}

}  // namespace trainsim::parallelism
