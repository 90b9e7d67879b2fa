// Simulating one training iteration end to end: the `simulate` command's engine room.
#pragma once

#include <optional>

#include "base/expected.h"
#include "parallelism/experiment.h"
#include "parallelism/iteration_builder.h"
#include "parallelism/memory_model.h"
#include "sim/communication_parameters.h"
#include "sim/compute_parameters.h"
#include "sim/task_executor.h"
#include "sim/trace_recorder.h"

namespace trainsim::parallelism {

struct TimeBreakdown {
  double compute = 0.0;
  double tp_comm_exposed = 0.0;  // tensor-, context- and expert-parallel collectives (on the critical path)
  double dp_comm_exposed = 0.0;  // gradient reduction / parameter gather not hidden behind compute
  double pp_comm_exposed = 0.0;  // waiting for activations or gradients from a neighbouring stage
  double pipeline_bubble = 0.0;  // idle time the schedule leaves
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
  int64_t microbatches = 0;
  uint64_t tasks = 0;
  uint64_t events = 0;
};

struct SimulationOptions {
  sim::CommunicationParameters communication;
  sim::ComputeParameters compute;
  IterationOptions iteration;
  sim::TraceRecorder* trace = nullptr;  // records the iteration when set
};

[[nodiscard]] Expected<IterationResult> simulateIteration(const Experiment& experiment,
                                                          const SimulationOptions& options = {});

}  // namespace trainsim::parallelism
