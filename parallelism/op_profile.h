// Where a GPU's compute time goes, op by op: for one pipeline stage, every op of its
// workloads (chunk_workload.h) timed by the compute model, summed over its layers, model
// chunks and the iteration's micro-batches, with the recomputed forward work counted
// apart, plus the optimizer step. It is the compute the event simulation runs on that
// stage, before communication waits and pipeline bubbles (`trainsim simulate --ops`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parallelism/experiment.h"
#include "parallelism/iteration_builder.h"

namespace trainsim::parallelism {

struct OpProfileRow {
  std::string name;  // the op's name in the workload ("mlp_fc1", "flash_attention", ...)
  OpKind kind = OpKind::kElementwise;
  // Seconds per iteration on one GPU of the stage.
  double forward_s = 0.0;
  double backward_s = 0.0;
  double recompute_s = 0.0;  // forward work rerun inside backward (recompute selective / full)
  double flops = 0.0;        // counted FLOPs of the three (SPEC conventions), per iteration

  [[nodiscard]] double total_s() const { return forward_s + backward_s + recompute_s; }
};

struct OpProfile {
  int64_t stage = 0;
  int64_t microbatches = 0;
  std::vector<OpProfileRow> rows;  // by decreasing total time, then name
  double optimizer_s = 0.0;        // the optimizer step (optimizer_step.h)

  [[nodiscard]] double total_s() const;
};

// The profile of pipeline stage `stage` of a resolved, valid experiment.
[[nodiscard]] OpProfile stageOpProfile(const Experiment& experiment, const OpTimer& timer,
                                       const IterationOptions& options, int64_t stage);
// The profile of the stage with the most compute time (the first such stage on ties).
[[nodiscard]] OpProfile busiestStageOpProfile(const Experiment& experiment, const OpTimer& timer,
                                              const IterationOptions& options);

}  // namespace trainsim::parallelism
