// Slow GPUs in a synchronous step: which of a job's GPUs are slow, drawn with a seed from the
// cluster's straggler distribution (topology::Stragglers), as per-rank compute scales for an
// event-level simulation of the step (parallelism::IterationOptions::rank_compute_scale).
#pragma once

#include <cstdint>
#include <vector>

#include "topology/reliability_spec.h"

namespace trainsim::goodput {

struct StragglerDraw {
  std::vector<double> rank_compute_scale;  // one per rank: 1, or the slowdown
  int64_t slow_gpus = 0;
};

// Each of `gpus` ranks is slow with probability stragglers.fraction, independently.
[[nodiscard]] StragglerDraw drawStragglers(int64_t gpus, const topology::Stragglers& stragglers, uint64_t seed);

}  // namespace trainsim::goodput
