// Software stacks (training.stack): what a training framework at a version does that the
// models need to know, as data in configs/stacks/<name>.yaml (schema in docs/stacks.md):
//  - `training:` the values of the experiment's kernel-choice keys the experiment leaves out
//    (how the host dispatches kernels, fused attention, fused cross-entropy, one fused
//    SwiGLU gate/up GEMM);
//  - `compute:`, `communication:`, `workload:` and `memory:` model parameters in the schema
//    of a calibration file (perf/parameter_sections.h, parallelism/model_constant_sections.h),
//    applied over the shipped defaults and under a user's calibration: the stack's attention
//    kernel rates, its in-step kernel-rate fraction, its host cost per launched kernel, ...
// An experiment's training.stack_overrides replaces any of the stack's compute,
// communication, workload and memory values (same schema), or without a stack the shipped
// defaults'; its training keys are overridden by setting them in the experiment's training
// section itself.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/config_node.h"
#include "base/config_paths.h"
#include "parallelism/training_spec.h"
#include "parallelism/transformer_workload.h"
#include "perf/communication_parameters.h"
#include "perf/compute_parameters.h"
#include "perf/parameter_sections.h"

namespace trainsim::parallelism {

struct MemoryOptions;  // memory_model.h, which includes this header through experiment.h

// Model parameters a stack file or an experiment's stack_overrides give, applied in order.
struct StackParameters {
  std::string from;  // the file they were read from
  perf::ComputeSection compute;
  std::vector<perf::ParameterValue> communication;
  std::vector<perf::ParameterValue> workload;  // FlopsOptions constants
  std::vector<perf::ParameterValue> memory;    // MemoryOptions constants
};

struct SoftwareStack {
  std::string name;  // as training.stack gives it: a preset name or a file path
  std::string file;  // the file it was read from
  std::string title;
  std::string version;  // the framework version its values are cited at
  TrainingDefaults training;
  std::vector<StackParameters> parameters;  // the stack file's, then the experiment's overrides
};

// The stack `training` names (its `stack` key: a preset of <config_dir>/stacks or a file
// path), with the section's `stack_overrides`; nullopt when the section names none. Throws
// InputError at the key (an unknown preset lists the shipped ones) or in the stack's file.
[[nodiscard]] std::optional<SoftwareStack> readSoftwareStack(const ConfigNode& training, const ConfigPaths& paths);

// The section's `stack_overrides` where it names no stack: model parameters over the shipped
// defaults (the run's own kernel rates, say), applied as a stack's are; nullopt otherwise.
[[nodiscard]] std::optional<StackParameters> readStacklessOverrides(const ConfigNode& training);

// Reads a stack document (tests, and readSoftwareStack); `name` is what training.stack said.
[[nodiscard]] SoftwareStack readSoftwareStackFile(const ConfigNode& root, const std::string& name);

// The shipped presets: the stems of <config_dir>/stacks/*.yaml, sorted.
[[nodiscard]] std::vector<std::string> stackPresetNames(const ConfigPaths& paths);

// The experiment's own `training.stack_overrides` within its stack (the last of `parameters`
// after the stack file's), or nullptr where it gives none.
[[nodiscard]] const StackParameters* stackOverrides(const SoftwareStack& stack);

// The parameters a set gives values to, as "section.key" (compute.memory_efficiency,
// communication.launch_overhead_us), in section order, each once.
[[nodiscard]] std::vector<std::string> parameterKeys(const StackParameters& parameters);

// The value the stack's last parameter set giving `compute.<name>` (a named scalar) sets, if any.
[[nodiscard]] std::optional<double> stackComputeValue(const SoftwareStack& stack, std::string_view name);

// One set of model parameters over `compute`, `communication`, `workload` and `memory`.
void applyStackParameters(const StackParameters& parameters, perf::ComputeParameters& compute,
                          perf::CommunicationParameters& communication, FlopsOptions& workload, MemoryOptions& memory);

// The stack's model parameters over `compute`, `communication`, `workload` and `memory`, in
// order; then the in-step fractions of the GPU types the stack does not list, times its
// training_rate_stack_factor.
void applySoftwareStack(const SoftwareStack& stack, perf::ComputeParameters& compute,
                        perf::CommunicationParameters& communication, FlopsOptions& workload, MemoryOptions& memory);

}  // namespace trainsim::parallelism
