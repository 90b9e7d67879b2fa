#include "validate/unpublished_plan_choice.h"

#include <fmt/format.h>

#include <optional>

#include "parallelism/memory_model.h"
#include "validate/training_suite.h"

namespace trainsim::validate {
namespace {

std::vector<int64_t> microBatchSizes(const TrainingMeasurement& row) {
  if (row.micro_batch_published) return {row.micro_batch_size};
  std::vector<int64_t> sizes;
  if (row.dp <= 0 || row.global_batch_size % row.dp != 0) return sizes;
  const int64_t per_replica = row.global_batch_size / row.dp;
  for (int64_t size = 1; size <= per_replica; size *= 2) {
    if (per_replica % size == 0) sizes.push_back(size);
  }
  return sizes;
}

std::vector<int64_t> chunkCounts(const TrainingMeasurement& row) {
  if (row.virtual_stages_published) return {row.virtual_stages};
  if (row.pp <= 1 || row.layers % row.pp != 0) return {1};
  const int64_t per_stage = row.layers / row.pp;
  std::vector<int64_t> counts;
  for (int64_t count = 1; count <= per_stage; ++count) {
    if (per_stage % count == 0) counts.push_back(count);
  }
  return counts;
}

}  // namespace

bool hasUnpublishedPlanSettings(const TrainingMeasurement& row) {
  return !row.micro_batch_published || !row.virtual_stages_published;
}

std::vector<PlanSetting> planCandidates(const TrainingMeasurement& row) {
  std::vector<PlanSetting> candidates;
  for (const int64_t size : microBatchSizes(row)) {
    for (const int64_t chunks : chunkCounts(row)) candidates.push_back({size, chunks});
  }
  return candidates;
}

TrainingMeasurement withPlanSetting(const TrainingMeasurement& row, const PlanSetting& setting) {
  TrainingMeasurement set = row;
  set.micro_batch_size = setting.micro_batch_size;
  set.virtual_stages = setting.virtual_stages;
  return set;
}

Expected<PlanChoice> chooseUnpublishedPlan(const TrainingMeasurement& row, const ConfigPaths& paths,
                                           const parallelism::SimulationOptions& options) {
  return catchInputErrors([&]() -> PlanChoice {
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
    for (const PlanSetting& setting : planCandidates(row)) {
      auto experiment = trainingExperiment(withPlanSetting(row, setting), paths);
      if (!experiment.ok()) continue;  // e.g. micro-batches not a multiple of pp when interleaving
      parallelism::MemoryOptions memory_options;
      memory_options.kernels = options.iteration.flops;  // as simulateIteration's memory report
      const bool fits = parallelism::estimateMemory(*experiment, memory_options).fits();
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

}  // namespace trainsim::validate
