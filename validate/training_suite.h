// Predicted vs published end-to-end training throughput: the accuracy table of the
// iteration simulation (`trainsim validate training`). Each row of training_measurements
// becomes an experiment, runs through simulateIteration, and is compared like with like:
// SC21's hardware TFLOP/s with hardware_tflops_per_gpu, model-FLOPs sources with
// tflops_per_gpu, published iteration times with iteration_time_s.
#pragma once

#include <string>
#include <vector>

#include "base/config_paths.h"
#include "base/expected.h"
#include "parallelism/experiment.h"
#include "parallelism/iteration_simulation.h"
#include "validate/training_measurements.h"
#include "validate/unpublished_plan_choice.h"

namespace trainsim::validate {

struct TrainingSuiteOptions {
  bool include_slow = false;      // also run the rows marked slow
  std::vector<std::string> only;  // run just these row ids (empty: every row); slow or not
  parallelism::SimulationOptions simulation;
};

struct TrainingRowComparison {
  const TrainingMeasurement* row = nullptr;
  std::string gpu_key;     // the catalog key of the row's GPU (empty when its experiment failed to load)
  bool ran = false;        // false: a slow row left out, or the simulation failed (failure set)
  std::string failure;     // why the row could not be simulated
  double predicted = 0.0;  // in the source's metric
  double error = 0.0;      // predicted / published - 1
  parallelism::IterationResult result;
  // The micro-batch size and chunk count the row ran at: the published ones, or where the
  // source publishes them not, the fastest of the settings that fit (plan_chosen; the
  // candidates that fit in plan_fitting; validate/unpublished_plan_choice.h).
  PlanSetting plan;
  bool plan_chosen = false;
  std::vector<PlanSetting> plan_fitting;
  double wall_s = 0.0;  // loading + simulating the row
};

struct SourceAccuracy {
  const TrainingSource* source = nullptr;
  int compared = 0;
  int skipped = 0;    // slow rows left out
  double mape = 0.0;  // mean |error| over the compared rows (0 when none)
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

// The experiment document a row describes (inline model, cluster preset, training, parallelism),
// and the override that cuts the cluster down to the row's GPUs ("cluster.nodes=N").
[[nodiscard]] std::string trainingExperimentYaml(const TrainingMeasurement& row);
[[nodiscard]] std::string trainingClusterOverride(const TrainingMeasurement& row);
[[nodiscard]] Expected<parallelism::Experiment> trainingExperiment(const TrainingMeasurement& row,
                                                                   const ConfigPaths& paths);

// Runs the suite. Errors only for an unknown id in `only`; a row whose experiment is
// rejected or whose simulation fails is reported in its `failure`.
[[nodiscard]] Expected<TrainingSuiteResult> runTrainingSuite(const ConfigPaths& paths,
                                                             const TrainingSuiteOptions& options = {});

}  // namespace trainsim::validate
