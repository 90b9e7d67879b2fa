// How long an op of a workload (transformer_workload.h) takes on one GPU: the compute model the
// iteration builder, the per-pass accounting (pass_work.h) and the sweep's screen time
// passes with. ComputeTimer (compute_timer.h) backs it with sim's ComputeModel.
#pragma once

#include <cstddef>

#include "parallelism/pipeline_schedule.h"
#include "parallelism/transformer_workload.h"

namespace trainsim::parallelism {

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

}  // namespace trainsim::parallelism
