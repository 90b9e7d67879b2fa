// The memory simulateIteration needs for an experiment, estimated from the plan before the
// cluster or any task is built (sim/memory_budget.h), so that `simulate` refuses at once a
// plan it cannot represent within its budget. Counted as IterationBuilder builds them: each
// simulated GPU's passes (host launches, start marker, compute, bucketed parts, exposed
// stretch, pipeline sends), the tensor-, context- and expert-parallel collectives of every
// pass (merged by kind as the builder merges them, once per group), the data-parallel
// gradient reductions and ZeRO parameter gathers of every data-parallel group (which span
// every replica, in symmetric mode too), and the dependencies between them, each
// collective at the most flows its algorithm may expand into (perf/collective_flow_bound.h),
// and one collective of each kind per group running at once. The largest graph is the
// steady-state extrapolation's third run where it applies, else the full micro-batch count
// (SimulationOptions::every_microbatch: the estimate simulateIteration checks before it
// falls back to every micro-batch, when the line does not hold).
#pragma once

#include "parallelism/experiment.h"
#include "parallelism/iteration_simulation.h"
#include "sim/memory_budget.h"

namespace trainsim::parallelism {

[[nodiscard]] Expected<sim::MemoryEstimate> estimateIterationMemory(const Experiment& experiment,
                                                                    const SimulationOptions& options);

}  // namespace trainsim::parallelism
