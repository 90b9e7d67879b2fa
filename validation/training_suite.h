// Predicted vs published end-to-end training throughput: the accuracy table of the
// iteration simulation (`trainsim validate training`). Each row of the suite's data files
// (validation/training_rows.h) gives an experiment, loaded as a user's experiment file is,
// which runs through simulateIteration and is compared like with like:
// SC21's hardware TFLOP/s with hardware_tflops_per_gpu, model-FLOPs sources with
// tflops_per_gpu, published iteration times with iteration_time_s.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/config_paths.h"
#include "base/expected.h"
#include "parallelism/experiment.h"
#include "parallelism/iteration_simulation.h"
#include "validation/training_rows.h"
#include "validation/unpublished_plan_choice.h"

namespace trainsim::validation {

struct TrainingSuiteOptions {
  bool include_slow = false;      // also run the rows marked slow
  std::vector<std::string> only;  // run just these row ids (empty: every row); slow or not
  // The parameters every row starts from; each row's software stack (training.stack) is
  // applied over them, then `over_stack` (a calibration, which wins over the stack).
  parallelism::SimulationOptions simulation;
  std::function<void(parallelism::SimulationOptions&)> over_stack;
};

struct TrainingRowComparison {
  TrainingRow row;
  // The row's experiment as its file gives it (unset when it failed to load; failure says why).
  std::optional<parallelism::Experiment> experiment;
  std::string gpu_key;     // the catalog key of the row's GPU (empty when its experiment failed to load)
  bool ran = false;        // false: a slow row left out, or the simulation failed (failure set)
  std::string failure;     // why the row could not be simulated
  double predicted = 0.0;  // in the source's metric
  double error = 0.0;      // predicted / published - 1
  // Where the row publishes its peak memory: the memory model's peak per GPU over the stages
  // (GiB) and its error against the published figure (predicted / published - 1).
  std::optional<double> predicted_memory_GiB;
  double memory_error = 0.0;
  parallelism::IterationResult result;
  // The micro-batch size and chunk count the row ran at: the published ones, or where the
  // source publishes them not, the fastest of the settings that fit (plan_chosen; the
  // candidates that fit in plan_fitting; validation/unpublished_plan_choice.h).
  PlanSetting plan;
  bool plan_chosen = false;
  std::vector<PlanSetting> plan_fitting;
  double wall_s = 0.0;  // loading + simulating the row
};

struct SourceAccuracy {
  TrainingSource source;
  int compared = 0;
  int skipped = 0;    // slow rows left out
  double mape = 0.0;  // mean |error| over the compared rows (0 when none)
  double bias = 0.0;  // mean signed error over the same rows
  // The same over the compared rows that publish their peak memory.
  int memory_compared = 0;
  double memory_mape = 0.0;
  double memory_bias = 0.0;
};

struct TrainingSuiteResult {
  std::vector<TrainingRowComparison> rows;  // every row of the suite (or of `only`), in order
  std::vector<SourceAccuracy> sources;      // every source with at least one row listed
  int compared = 0;
  int skipped_slow = 0;
  int failed = 0;
  double mape = 0.0;  // mean |error| over every compared row
  double wall_s = 0.0;
};

// The override that cuts the row's cluster preset down to its GPUs ("cluster.nodes=N", from
// the experiment's parallelism.gpus, which a row must give); none for a cluster given inline.
[[nodiscard]] std::optional<std::string> trainingClusterOverride(const TrainingRow& row);
// The row's experiment, loaded by the experiment loader a user's file goes through, with the
// cluster override and then `overrides` (a chosen plan setting, a layer more) applied.
[[nodiscard]] Expected<parallelism::Experiment> trainingExperiment(const TrainingRow& row, const ConfigPaths& paths,
                                                                   const std::vector<Override>& overrides = {});
// The row's experiment document as YAML (what `validate training --print-experiment` shows),
// with `overrides` applied; the cluster override is left to the reader.
[[nodiscard]] std::string trainingExperimentYaml(const TrainingRow& row, const std::vector<Override>& overrides = {});

// Runs the suite over `rows`. Errors only for an unknown id in `only`; a row whose experiment
// is rejected or whose simulation fails is reported in its `failure`.
[[nodiscard]] Expected<TrainingSuiteResult> runTrainingSuite(const TrainingRows& rows, const ConfigPaths& paths,
                                                             const TrainingSuiteOptions& options = {});
// The same over the rows of the config directory's data files (loadTrainingRows), whose
// errors it returns.
[[nodiscard]] Expected<TrainingSuiteResult> runTrainingSuite(const ConfigPaths& paths,
                                                             const TrainingSuiteOptions& options = {});

}  // namespace trainsim::validation
