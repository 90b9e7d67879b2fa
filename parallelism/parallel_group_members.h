// The GPUs of a pass collective's group (ParallelGroup): who they are for a rank, and how
// many there are for a plan. One place for the builder, the screen and the pass accounting.
#pragma once

#include <cstdint>
#include <vector>

#include "parallelism/parallel_plan.h"
#include "parallelism/rank_layout.h"
#include "parallelism/transformer_workload.h"

namespace trainsim::parallelism {

// The ranks of `group` that `coordinate` belongs to; empty for the pipeline, whose
// collectives are point to point.
[[nodiscard]] std::vector<int64_t> groupMembers(const RankLayout& layout, ParallelGroup group,
                                                const RankCoordinate& coordinate);

// GPUs in a group of `group`. A workload lists some collectives whatever the degree, and a
// group of one moves nothing.
[[nodiscard]] int64_t groupSize(ParallelGroup group, const ParallelPlan& plan);

}  // namespace trainsim::parallelism
