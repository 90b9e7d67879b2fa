#include "cli/experiment_json.h"

#include <fmt/format.h>

#include <cmath>

namespace trainsim::cli {

nlohmann::ordered_json optionalNumber(const std::optional<double>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json parallelismJson(const parallelism::Experiment& experiment) {
  const auto& plan = experiment.plan;
  nlohmann::ordered_json json = {{"dp", plan.dp},
                                 {"tp", plan.tp},
                                 {"pp", plan.pp},
                                 {"cp", plan.cp},
                                 {"ep", plan.ep},
                                 {"virtual_stages", plan.virtual_stages},
                                 {"schedule", parallelism::scheduleName(plan.schedule)},
                                 {"microbatches", plan.microbatches(experiment.training)}};
  // An uneven pipeline split only: the layers of every stage follow from these two.
  if (plan.first_stage_layers) json["first_stage_layers"] = *plan.first_stage_layers;
  if (plan.last_stage_layers) json["last_stage_layers"] = *plan.last_stage_layers;
  // A mixture-of-experts model only: the expert layers' tensor- and data-parallel degrees.
  if (experiment.model.moe) {
    json["etp"] = plan.expertTensorParallel();
    json["edp"] = plan.expertDataParallel();
  }
  return json;
}

nlohmann::ordered_json memoryJson(const parallelism::MemoryReport& report) {
  const auto& peak = report.peak();
  return {{"peak_bytes_per_gpu", std::llround(report.peakBytes())},
          {"capacity_bytes", std::llround(report.capacity_bytes)},
          {"fits", report.fits()},
          {"weights", std::llround(peak.weights)},
          {"gradients", std::llround(peak.gradients)},
          {"optimizer", std::llround(peak.optimizer)},
          {"activations", std::llround(peak.activations)},
          {"other", std::llround(peak.other())}};
}

std::vector<std::string> stackOverrideKeys(const parallelism::Experiment& experiment) {
  if (experiment.parameter_overrides) return parallelism::parameterKeys(*experiment.parameter_overrides);
  if (experiment.stack) {
    if (const auto* overrides = parallelism::stackOverrides(*experiment.stack)) {
      return parallelism::parameterKeys(*overrides);
    }
  }
  return {};
}

std::optional<validation::ExpectedError> expectedErrorFor(const parallelism::Experiment& experiment,
                                                          const ConfigPaths& paths) {
  const validation::ExpectedErrorTable table = valueOrThrow(validation::loadExpectedErrorTable(paths));
  return validation::expectedError(table, experiment.training.stack, experiment.cluster.gpu.key,
                                   experiment.model.isMoe());
}

nlohmann::ordered_json expectedErrorJson(const std::optional<validation::ExpectedError>& error) {
  if (!error) return nullptr;
  return {{"mape", error->mape},
          {"bias", error->bias},
          {"sources", error->sources},
          {"rows", error->rows},
          {"basis", error->basis}};
}

std::string expectedErrorText(const std::optional<validation::ExpectedError>& error) {
  if (!error) return "expected error      unknown: no published run of this stack or GPU in the validation suite\n";
  return fmt::format(
      "expected error      iteration time +-{:.1f}% (bias {:+.1f}%; {}, {} run{} from {} source{}: {})\n",
      100.0 * error->mape, 100.0 * error->bias, error->never_fitted ? "out of sample" : "each source held out",
      error->rows, error->rows == 1 ? "" : "s", error->sources, error->sources == 1 ? "" : "s", error->basis);
}

}  // namespace trainsim::cli
