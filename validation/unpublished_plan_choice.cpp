#include "validation/unpublished_plan_choice.h"

#include <fmt/format.h>

#include <optional>

#include "parallelism/memory_model.h"
#include "validation/training_suite.h"

namespace trainsim::validation {
namespace {

std::vector<int64_t> microBatchSizes(const TrainingRow& row, const parallelism::Experiment& experiment) {
  if (row.micro_batch_published) return {experiment.training.micro_batch_size};
  std::vector<int64_t> sizes;
  const int64_t dp = experiment.plan.dp;
  const int64_t global_batch_size = experiment.training.global_batch_size;
  if (dp <= 0 || global_batch_size % dp != 0) return sizes;
  const int64_t per_replica = global_batch_size / dp;
  for (int64_t size = 1; size <= per_replica; size *= 2) {
    if (per_replica % size == 0) sizes.push_back(size);
  }
  return sizes;
}

std::vector<int64_t> chunkCounts(const TrainingRow& row, const parallelism::Experiment& experiment) {
  if (row.virtual_stages_published) return {experiment.plan.virtual_stages};
  const int64_t pp = experiment.plan.pp;
  const int64_t layers = experiment.model.layers;
  if (pp <= 1 || layers % pp != 0) return {1};
  const int64_t per_stage = layers / pp;
  std::vector<int64_t> counts;
  for (int64_t count = 1; count <= per_stage; ++count) {
    if (per_stage % count == 0) counts.push_back(count);
  }
  return counts;
}

}  // namespace

bool hasUnpublishedPlanSettings(const TrainingRow& row) {
  return !row.micro_batch_published || !row.virtual_stages_published;
}

std::vector<PlanSetting> planCandidates(const TrainingRow& row, const parallelism::Experiment& experiment) {
  std::vector<PlanSetting> candidates;
  for (const int64_t size : microBatchSizes(row, experiment)) {
    for (const int64_t chunks : chunkCounts(row, experiment)) candidates.push_back({size, chunks});
  }
  return candidates;
}

std::vector<Override> planSettingOverrides(const PlanSetting& setting) {
  return {parseOverride(fmt::format("training.micro_batch_size={}", setting.micro_batch_size)),
          parseOverride(fmt::format("parallelism.virtual_stages={}", setting.virtual_stages))};
}

Expected<PlanChoice> chooseUnpublishedPlan(const TrainingRow& row, const ConfigPaths& paths,
                                           const parallelism::SimulationOptions& options) {
  return catchInputErrors([&]() -> PlanChoice {
    const parallelism::Experiment as_written = valueOrThrow(trainingExperiment(row, paths));
    PlanChoice choice;
    std::optional<parallelism::Experiment> first_loading;
    PlanSetting first_loading_setting;
    std::optional<parallelism::Experiment> fastest;
    double fastest_tokens_per_s = 0.0;
    // The candidates are ranked in symmetric mode (one data-parallel replica; the replicas
    // of these plans are identical), then the chosen one is simulated with `options`.
    parallelism::SimulationOptions ranking = options;
    ranking.iteration.symmetric = true;
    ranking.trace = nullptr;
    for (const PlanSetting& setting : planCandidates(row, as_written)) {
      auto experiment = trainingExperiment(row, paths, planSettingOverrides(setting));
      if (!experiment.ok()) continue;  // e.g. micro-batches not a multiple of pp when interleaving
      // As simulateIteration's memory report.
      const bool fits = parallelism::estimateMemory(*experiment, parallelism::memoryOptions(options)).fits();
      if (!first_loading) {
        first_loading = *experiment;
        first_loading_setting = setting;
      }
      if (!fits) continue;
      choice.fitting.push_back(setting);
      const double tokens_per_s = valueOrThrow(parallelism::simulateIteration(*experiment, ranking)).tokens_per_s;
      if (!fastest || tokens_per_s > fastest_tokens_per_s) {
        choice.chosen = setting;
        fastest = std::move(experiment).value();
        fastest_tokens_per_s = tokens_per_s;
      }
    }
    if (!fastest) {
      if (!first_loading) {
        throwInputError(
            "validate training", "",
            fmt::format("row {}: no candidate micro-batch size and chunk count gives a valid plan", row.id));
      }
      choice.chosen = first_loading_setting;
      fastest = std::move(first_loading);
    }
    choice.result = valueOrThrow(parallelism::simulateIteration(*fastest, options));
    return choice;
  });
}

std::string describePlanSetting(const PlanSetting& setting) {
  return fmt::format("micro-batch {}, {} chunk{}", setting.micro_batch_size, setting.virtual_stages,
                     setting.virtual_stages == 1 ? "" : "s");
}

}  // namespace trainsim::validation
