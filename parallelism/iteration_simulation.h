// Simulating one training iteration end to end: the `simulate` command's engine room.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/config_paths.h"
#include "base/expected.h"
#include "parallelism/experiment.h"
#include "parallelism/iteration_builder.h"
#include "parallelism/memory_model.h"
#include "parallelism/op_profile.h"
#include "perf/communication_parameters.h"
#include "perf/compute_parameters.h"
#include "sim/task_executor.h"
#include "sim/trace_recorder.h"

namespace trainsim::parallelism {

struct TimeBreakdown {
  double compute = 0.0;
  double tp_comm_exposed = 0.0;  // tensor-, context- and expert-parallel collectives (on the critical path)
  double dp_comm_exposed = 0.0;  // gradient reduction / parameter gather not hidden behind compute
  double pp_comm_exposed = 0.0;  // waiting for activations or gradients from a neighbouring stage
  double pipeline_bubble = 0.0;  // idle time the schedule leaves
  // Waiting for the host to launch the kernels (training.dispatch; 0 when not modelled).
  double host_dispatch_exposed = 0.0;
};

// Simulating `microbatches` micro-batches by simulating `first` and `second` and extending
// the difference linearly: the steady state of a pipeline schedule repeats, so the cost of a
// simulation need not grow with gradient accumulation.
struct MicrobatchExtrapolation {
  int64_t microbatches = 0;
  int64_t first = 0;
  int64_t second = 0;
};

struct IterationResult {
  double iteration_time_s = 0.0;
  double tokens_per_s = 0.0;
  double model_flops = 0.0;
  double hardware_flops = 0.0;
  double tflops_per_gpu = 0.0;
  double hardware_tflops_per_gpu = 0.0;
  double mfu = 0.0;
  double hfu = 0.0;
  std::optional<double> time_to_train_s;
  std::optional<double> gpu_hours;
  std::optional<double> cost_usd;
  MemoryReport memory;
  TimeBreakdown breakdown;  // of the rank that finishes last
  // Per pipeline stage (index = stage): of the stage's simulated rank whose optimizer step
  // ends last, each adding up to the iteration time; the critical rank's stage holds
  // `breakdown`. A stage whose step ends before the critical rank's counts the wait as bubble.
  std::vector<TimeBreakdown> stage_breakdowns;
  int64_t microbatches = 0;
  uint64_t tasks = 0;                                    // simulated (over both runs when extrapolated)
  uint64_t events = 0;                                   // likewise
  std::optional<MicrobatchExtrapolation> extrapolation;  // set when the time was extrapolated
};

// What a simulation runs with. The models' parameters come empty: take them from
// defaultSimulationOptions (the shipped defaults) or set them.
struct SimulationOptions {
  perf::CommunicationParameters communication;
  perf::ComputeParameters compute;
  // iteration.flops holds the workload model's constants (FlopsOptions).
  IterationOptions iteration;
  // The memory model's constants; its `kernels` are iteration.flops (memoryOptions).
  MemoryOptions memory;
  sim::TraceRecorder* trace = nullptr;  // records the iteration when set (every micro-batch then)
  // Simulate every micro-batch instead of extrapolating the steady state (see
  // microbatchExtrapolation): slower, for checking the extrapolation.
  bool every_microbatch = false;
  // When positive, the memory budget (GiB) of the fallback to every micro-batch: where the
  // steady-state line does not hold, the full run is estimated first (iteration_memory.h)
  // and refused (InvalidInput at sim::kMemoryBudgetOption) when over it. `simulate` and
  // `sweep` check the extrapolated run against the same budget before they start.
  double memory_budget_GiB = 0.0;
  // The software stack whose parameters the models' parameters hold (applySoftwareStack;
  // "" for none). simulateIteration refuses an experiment of another stack.
  std::string stack;
  // Whether they hold an experiment's stack_overrides given without a stack
  // (Experiment::parameter_overrides); simulateIteration refuses a mismatch.
  bool stackless_overrides = false;
  // Threads for the steady state's first three simulations (simulateIteration): with 2, the
  // third (the line's check) runs beside the first two; with 3 or more, all three at once.
  // The result does not depend on it; the memory held does (estimateIterationMemory).
  int threads = 1;
};

// The models' shipped defaults in `paths` (perf/default_parameters.h,
// parallelism/default_model_constants.h), every other option at its default; an error when a
// defaults file is malformed.
[[nodiscard]] Expected<SimulationOptions> defaultSimulationOptions(const ConfigPaths& paths);

// The memory model's options of a simulation: its memory constants with its workload's kernels
// (estimateMemory applies the experiment's kernel choices).
[[nodiscard]] MemoryOptions memoryOptions(const SimulationOptions& options);

// The experiment's software stack (training.stack, with its stack_overrides; without a
// stack, the stack_overrides alone) applied over `options`' parameters: call it on the
// shipped defaults, before a calibration, which then wins over the stack.
void applySoftwareStack(const Experiment& experiment, SimulationOptions& options);

// `options` as an iteration of `experiment` runs with them: with training.dispatch set, the
// host's cost per kernel of that mode (ComputeParameters::dispatch_*_us) is the iteration's
// and the GPU's gap between kernels (dispatch_kernel_gap_us) replaces launch_overhead_us.
// simulateIteration, computeOpProfile and the sweep's screen apply it themselves.
[[nodiscard]] SimulationOptions withHostDispatch(const Experiment& experiment, SimulationOptions options);

// Whether (and from which micro-batch counts) an iteration of `microbatches` is
// extrapolated; nullopt when it is simulated in full.
[[nodiscard]] std::optional<MicrobatchExtrapolation> microbatchExtrapolation(const ParallelPlan& plan,
                                                                             int64_t microbatches);

// The micro-batch counts of the steady-state simulations that `threads` threads hold at
// once, at the peak (SimulationOptions::threads): the check's alone on one thread, beside
// the second's on two, all three on three or more.
[[nodiscard]] std::vector<int64_t> steadyStateRunsAtOnce(const MicrobatchExtrapolation& extrapolation, int threads);

[[nodiscard]] Expected<IterationResult> simulateIteration(const Experiment& experiment,
                                                          const SimulationOptions& options);

// The op-by-op compute of the busiest pipeline stage (op_profile.h), timed by the same
// compute model as simulateIteration with these options.
[[nodiscard]] Expected<OpProfile> computeOpProfile(const Experiment& experiment, const SimulationOptions& options);

}  // namespace trainsim::parallelism
