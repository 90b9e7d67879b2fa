// The numeric constants of the workload model (FlopsOptions, transformer_workload.h) and of the memory
// model (MemoryOptions, memory_model.h) by name: the keys of the `workload:` and `memory:`
// sections shared by the shipped defaults (configs/defaults/workload.yaml and memory.yaml,
// parallelism/default_model_constants.h), a calibration file (calib.yaml,
// calibrate/calibration_file.h) and a software stack or its stack_overrides
// (parallelism/software_stack.h); schema in docs/calibration.md. The key is the field's name.
// Reading is strict: an unknown key (with the closest known one suggested), a value of the
// wrong type or out of its range is an InputError at file:line:col.
//
// The per-experiment kernel choices among FlopsOptions' fields (fused_attention,
// fuse_gate_up, fused_pointwise, fused_cross_entropy, tp_comm_overlap, fp8_current_scaling,
// fp8_transposed_copies, main_grad_bytes, moe_dispatch_byte_scale, moe_sort_by_local_expert,
// moe_probs_fp32, fused_expert_mlp) are not named here: the
// experiment and its stack set them (kernelsFor, parallelism/experiment.h).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "base/config_node.h"
#include "parallelism/memory_model.h"
#include "parallelism/transformer_workload.h"
#include "perf/parameter_names.h"
#include "perf/parameter_sections.h"

namespace trainsim::parallelism {

using WorkloadConstantName = perf::ParameterName<FlopsOptions>;
using MemoryConstantName = perf::ParameterName<MemoryOptions>;

// Every named constant, in the order of the shipped defaults files.
[[nodiscard]] std::span<const WorkloadConstantName> workloadConstantNames();
[[nodiscard]] std::span<const MemoryConstantName> memoryConstantNames();

// The values a `workload:` or `memory:` section gives, in file order.
[[nodiscard]] std::vector<perf::ParameterValue> readWorkloadSection(const ConfigNode& section);
[[nodiscard]] std::vector<perf::ParameterValue> readMemorySection(const ConfigNode& section);

// Sets the values a section gives over `options`.
void applyWorkloadValues(std::span<const perf::ParameterValue> values, FlopsOptions& options);
void applyMemoryValues(std::span<const perf::ParameterValue> values, MemoryOptions& options);

// Every named constant's value in `options`, in the order of the names.
[[nodiscard]] std::vector<perf::ParameterValue> workloadValues(const FlopsOptions& options);
[[nodiscard]] std::vector<perf::ParameterValue> memoryValues(const MemoryOptions& options);

// The lines of a section below its key, indented by two spaces (perf::yamlNumber's numbers).
[[nodiscard]] std::string constantSectionYaml(std::span<const perf::ParameterValue> values);

}  // namespace trainsim::parallelism
