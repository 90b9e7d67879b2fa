#include "parallelism/software_stack.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "base/error.h"
#include "parallelism/memory_model.h"
#include "parallelism/model_constant_sections.h"

namespace trainsim::parallelism {
namespace {

TrainingDefaults readTrainingDefaults(const ConfigNode& section) {
  section.allowKeys({"dispatch", "flash_attention", "fused_cross_entropy", "fused_gate_up", "fused_pointwise",
                     "fused_expert_mlp", "compile_loss", "zero3", "retain_16bit_grads"});
  return readKernelChoices(section, TrainingDefaults{});
}

// The `compute:`, `communication:`, `workload:` and `memory:` sections of `node` (a stack
// file or stack_overrides).
StackParameters readParameters(const ConfigNode& node) {
  StackParameters parameters;
  parameters.from = node.source()->file;
  if (auto compute = node.optionalChild("compute")) parameters.compute = perf::readComputeSection(*compute);
  if (auto communication = node.optionalChild("communication")) {
    parameters.communication = perf::readCommunicationSection(*communication);
  }
  if (auto workload = node.optionalChild("workload")) parameters.workload = readWorkloadSection(*workload);
  if (auto memory = node.optionalChild("memory")) parameters.memory = readMemorySection(*memory);
  return parameters;
}

// training.stack_overrides: the four parameter sections, nothing else.
StackParameters readOverrides(const ConfigNode& overrides) {
  overrides.allowKeys({"compute", "communication", "workload", "memory"});
  return readParameters(overrides);
}

}  // namespace

SoftwareStack readSoftwareStackFile(const ConfigNode& root, const std::string& name) {
  if (!root.isMap()) root.failExpected("a software stack (a mapping with title, version, training, compute, ...)");
  root.allowKeys({"title", "version", "description", "training", "compute", "communication", "workload", "memory"});
  SoftwareStack stack;
  stack.name = name;
  stack.file = root.source()->file;
  stack.title = root.child("title").asString();
  stack.version = root.child("version").asString();
  (void)root.string("description", "");
  if (auto training = root.optionalChild("training")) stack.training = readTrainingDefaults(*training);
  stack.parameters.push_back(readParameters(root));
  return stack;
}

std::vector<std::string> stackPresetNames(const ConfigPaths& paths) {
  std::vector<std::string> names;
  std::error_code ignored;
  const std::filesystem::path directory = std::filesystem::path(paths.config_dir) / "stacks";
  for (const auto& entry : std::filesystem::directory_iterator(directory, ignored)) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<SoftwareStack> readSoftwareStack(const ConfigNode& training, const ConfigPaths& paths) {
  const auto name_node = training.optionalChild("stack");
  const auto overrides = training.optionalChild("stack_overrides");
  if (!name_node) return std::nullopt;
  const std::string name = name_node->asString();
  std::string path = referencedFilePath(*name_node);
  if (!looksLikePath(name)) {
    path = presetPath(paths, "stacks", name);
    std::error_code ignored;
    if (!std::filesystem::is_regular_file(path, ignored)) {
      name_node->failExpected(
          fmt::format("a software stack: one of {} or a file path", fmt::join(stackPresetNames(paths), ", ")));
    }
  }
  SoftwareStack stack = readSoftwareStackFile(loadConfigFile(path), name);
  if (overrides) stack.parameters.push_back(readOverrides(*overrides));
  return stack;
}

std::optional<StackParameters> readStacklessOverrides(const ConfigNode& training) {
  const auto overrides = training.optionalChild("stack_overrides");
  if (!overrides || training.optionalChild("stack")) return std::nullopt;
  // A stack's factor scales the fractions of the GPU types the stack does not list: without a
  // stack it would do nothing.
  if (const auto compute = overrides->optionalChild("compute")) {
    if (const auto factor = compute->optionalChild("training_rate_stack_factor")) {
      factor->fail(
          "training_rate_stack_factor scales a software stack's fractions; this experiment names no "
          "training.stack (set compute.training_rate_fraction for its GPU instead)");
    }
  }
  return readOverrides(*overrides);
}

const StackParameters* stackOverrides(const SoftwareStack& stack) {
  return stack.parameters.size() > 1 ? &stack.parameters.back() : nullptr;
}

std::vector<std::string> parameterKeys(const StackParameters& parameters) {
  std::vector<std::string> keys;
  const perf::ComputeSection& compute = parameters.compute;
  const bool tables[] = {!compute.matmul_ceilings.empty(),
                         !compute.memory_efficiency.empty(),
                         !compute.gemm_efficiency.empty(),
                         !compute.collective_sms.empty(),
                         !compute.attention_rates.empty(),
                         !compute.attention_tile_overheads.empty(),
                         !compute.training_rate_fraction.empty(),
                         !compute.tile_fixed_overhead.empty(),
                         !compute.gemm_epilogue_exposed.empty(),
                         compute.gemm_tiles.has_value(),
                         compute.collective_offload_vendors.has_value()};
  static_assert(std::size(tables) == perf::kComputeTableKeyCount, "one flag per compute table key");
  const auto table_keys = perf::computeTableKeys();
  for (std::size_t i = 0; i < table_keys.size(); ++i) {
    if (tables[i]) keys.push_back("compute." + std::string(table_keys[i]));
  }
  auto named = [&](std::string_view section, const std::vector<perf::ParameterValue>& values) {
    for (const auto& value : values) {
      std::string key = fmt::format("{}.{}", section, value.name);
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
    }
  };
  named("compute", compute.values);
  named("communication", parameters.communication);
  named("workload", parameters.workload);
  named("memory", parameters.memory);
  return keys;
}

std::optional<double> stackComputeValue(const SoftwareStack& stack, std::string_view name) {
  std::optional<double> result;
  for (const StackParameters& parameters : stack.parameters) {
    for (const perf::ParameterValue& value : parameters.compute.values) {
      if (value.name == name) result = value.value;
    }
  }
  return result;
}

void applyStackParameters(const StackParameters& parameters, perf::ComputeParameters& compute,
                          perf::CommunicationParameters& communication, FlopsOptions& workload, MemoryOptions& memory) {
  perf::applyComputeSection(parameters.compute, compute);
  perf::applyCommunicationValues(parameters.communication, communication);
  applyWorkloadValues(parameters.workload, workload);
  applyMemoryValues(parameters.memory, memory);
}

void applySoftwareStack(const SoftwareStack& stack, perf::ComputeParameters& compute,
                        perf::CommunicationParameters& communication, FlopsOptions& workload, MemoryOptions& memory) {
  for (const StackParameters& parameters : stack.parameters) {
    applyStackParameters(parameters, compute, communication, workload, memory);
  }
  // The GPU types the stack's tables do not list take their own fraction times the stack's
  // factor (perf::ComputeParameters::training_rate_stack_factor), once: the factor then reads 1.
  const double factor = compute.training_rate_stack_factor;
  if (factor == 1.0) return;
  auto listed = [&](const std::string& gpu_key) {
    return std::any_of(stack.parameters.begin(), stack.parameters.end(), [&](const StackParameters& parameters) {
      const auto& rows = parameters.compute.training_rate_fraction;
      return std::any_of(rows.begin(), rows.end(),
                         [&](const perf::MeasuredFraction& row) { return row.gpu_key == gpu_key; });
    });
  };
  for (perf::MeasuredFraction& row : compute.training_rate_fraction) {
    if (!listed(row.gpu_key)) row.fraction *= factor;
  }
  // A default the stack sets itself is the stack's own, as a row it lists is.
  if (!stackComputeValue(stack, "training_rate_fraction_default")) compute.training_rate_fraction_default *= factor;
  compute.training_rate_stack_factor = 1.0;
}

}  // namespace trainsim::parallelism
