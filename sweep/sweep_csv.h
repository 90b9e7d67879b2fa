// `trainsim sweep --csv FILE`: one row per plan, in the JSON's order (best first).
// Columns (docs/sweep.md): rank, status, cluster, gpus, tp, pp, dp, cp, ep, virtual_stages,
// micro_batch_size, microbatches, sequence_parallel, zero, recompute, estimated_iteration_time_s,
// iteration_time_s, tokens_per_s, mfu, peak_memory_bytes, capacity_bytes, time_to_train_s,
// gpu_hours, cost_usd, pareto, reason. Empty cells where a value does not apply.
#pragma once

#include <ostream>

#include "sweep/sweep.h"

namespace trainsim::sweep {

void writeSweepCsv(std::ostream& out, const SweepResult& sweep);

}  // namespace trainsim::sweep
