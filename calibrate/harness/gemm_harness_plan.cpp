#include "calibrate/harness/gemm_harness_plan.h"

#include <fmt/format.h>

#include <optional>

#include "base/config_paths.h"
#include "calibrate/harness/size_sweep.h"
#include "parallelism/default_model_constants.h"
#include "parallelism/experiment_loader.h"

namespace trainsim::harness {

Expected<GemmHarnessPlan> planGemmHarness(const GemmHarnessOptions& options, const std::string& built_in_config_dir) {
  GemmHarnessPlan plan;
  const ConfigPaths paths{options.config_dir.empty() ? built_in_config_dir : options.config_dir};
  auto defaults = parallelism::defaultWorkloadOptions(paths);
  if (!defaults.ok()) return defaults.error();
  parallelism::FlopsOptions flops = *defaults;
  flops.fused_attention = !options.unfused_attention;
  std::optional<topology::Precision> training_precision;
  std::string precision_source;
  for (const std::string& reference : options.experiments) {
    auto experiment = parallelism::loadExperiment(reference, paths, options.overrides);
    if (!experiment.ok()) return experiment.error();
    const topology::Precision precision = experiment->training.precision;
    if (training_precision && *training_precision != precision && !options.precision) {
      return Error{ExitCode::kInvalidInput, "--experiment " + reference, "training.precision",
                   fmt::format("{} trains in {} but {} in {}: one results file holds one precision; give --precision",
                               reference, topology::precisionName(precision), precision_source,
                               topology::precisionName(*training_precision))};
    }
    if (!training_precision) {
      training_precision = precision;
      precision_source = reference;
    }
    appendDistinctShapes(plan.shapes, experimentGemmShapes(*experiment, flops));
  }
  plan.precision = options.precision.value_or(training_precision.value_or(topology::Precision::kBf16));
  if (options.reference_shapes) appendDistinctShapes(plan.shapes, referenceGemmShapes());
  if (options.memory_bandwidth) {
    auto sizes = sizeSweep(options.memory_min_bytes, options.memory_max_bytes, options.memory_step_factor);
    if (!sizes.ok()) return sizes.error();
    plan.memory_bytes = std::move(sizes).value();
  }
  return plan;
}

std::string describeGemmPlan(const GemmHarnessPlan& plan) {
  std::string text = fmt::format("precision: {}\n{} GEMM shapes (C[m x n] = A[m x k] B[k x n], batch times):\n",
                                 topology::precisionName(plan.precision), plan.shapes.size());
  text += fmt::format("{:>8} {:>8} {:>8} {:>6} {:>12}  {}\n", "m", "n", "k", "batch", "GFLOP", "source");
  for (const HarnessGemmShape& shape : plan.shapes) {
    const double gflop = 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) *
                         static_cast<double>(shape.k) * static_cast<double>(shape.batch) / 1e9;
    text += fmt::format("{:>8} {:>8} {:>8} {:>6} {:>12.3f}  {}\n", shape.m, shape.n, shape.k, shape.batch, gflop,
                        shape.source);
  }
  if (plan.memory_bytes.empty()) {
    text += "memory bandwidth: not measured\n";
  } else {
    text += "memory bandwidth: device-to-device copies of";
    for (const int64_t bytes : plan.memory_bytes) text += fmt::format(" {}", bytes);
    text += " bytes\n";
  }
  return text;
}

}  // namespace trainsim::harness
