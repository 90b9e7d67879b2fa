// The OpTimer of the workload builder backed by sim's ComputeModel: each op of the
// transformer workload becomes GEMM, attention or memory-bound kernels.
#pragma once

#include <vector>

#include "parallelism/op_timer.h"
#include "perf/compute_model.h"

namespace trainsim::parallelism {

class ComputeTimer : public OpTimer {
 public:
  explicit ComputeTimer(const perf::ComputeModel& model) : model_(model) {}
  [[nodiscard]] double seconds(const Op& op, PassKind pass) const override;
  [[nodiscard]] double gemmSeconds(const Op& op, PassKind pass, std::size_t index) const override;
  [[nodiscard]] double memoryBoundSeconds(double bytes) const override { return model_.elementwiseTime(bytes); }
  [[nodiscard]] double collectiveComputeShare() const override { return model_.collectiveComputeShare(); }

 private:
  // The op's time in the kernels it counts (one per GEMM, else one), without the gaps of the
  // kernels beyond them.
  [[nodiscard]] double workSeconds(const Op& op, PassKind pass) const;
  // The op's GEMM kernels one by one (when it runs as GEMMs: OpKind kGemm, or unfused
  // attention), each slowed by the SMs a collective overlapped with it holds.
  [[nodiscard]] std::vector<double> gemmKernels(const Op& op, PassKind pass) const;

  const perf::ComputeModel& model_;
};

}  // namespace trainsim::parallelism
