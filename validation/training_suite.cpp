#include "validation/training_suite.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>

#include "base/config_text.h"
#include "base/units.h"
#include "parallelism/experiment_loader.h"
#include "validation/wall_time.h"

namespace trainsim::validation {
namespace {

// Every DGX node of the presets the suite uses holds 8 GPUs.
constexpr int64_t kGpusPerNode = 8;

double predictedMetric(TrainingMetric metric, const parallelism::IterationResult& result, int64_t gpus) {
  switch (metric) {
    case TrainingMetric::kHardwareTflopsPerGpu: return result.hardware_tflops_per_gpu;
    case TrainingMetric::kModelTflopsPerGpu: return result.tflops_per_gpu;
    case TrainingMetric::kIterationTime: return result.iteration_time_s;
    case TrainingMetric::kTokensPerSecondPerGpu: return result.tokens_per_s / static_cast<double>(gpus);
    case TrainingMetric::kLayerTime: break;  // two simulations: layerMilliseconds
  }
  return 0.0;
}

// The iteration time of `experiment` less its optimizer step: what its passes take.
double passesSeconds(const parallelism::Experiment& experiment, const parallelism::IterationResult& result,
                     const parallelism::SimulationOptions& options) {
  return result.iteration_time_s - valueOrThrow(parallelism::computeOpProfile(experiment, options)).optimizer_s;
}

// TrainingMetric::kLayerTime: the marginal cost of a transformer layer, milliseconds. The
// row's embedding, output layer and loss cancel in the difference; so would any per-layer
// cost outside a layer's passes, which is why the row must run one micro-batch on one
// pipeline stage without data parallelism (no bubble, no gradient reduction).
double layerMilliseconds(const TrainingRow& row, const parallelism::Experiment& experiment,
                         const parallelism::IterationResult& result, const ConfigPaths& paths,
                         const parallelism::SimulationOptions& options) {
  const parallelism::ParallelPlan& plan = experiment.plan;
  if (plan.pp != 1 || plan.dp != 1 || plan.cp != 1 || result.microbatches != 1 || hasUnpublishedPlanSettings(row)) {
    throwInputError(
        "validate training", "",
        fmt::format("row {}: a layer_time_ms row needs pp 1, dp 1, cp 1 and one published micro-batch", row.id));
  }
  const Override one_more = parseOverride(fmt::format("model.layers={}", experiment.model.layers + 1));
  const parallelism::Experiment longer_experiment = valueOrThrow(trainingExperiment(row, paths, {one_more}));
  const parallelism::IterationResult longer_result =
      valueOrThrow(parallelism::simulateIteration(longer_experiment, options));
  const double added =
      passesSeconds(longer_experiment, longer_result, options) - passesSeconds(experiment, result, options);
  return 1e3 * added;
}

// Simulates a row whose experiment loaded: as published, or at the fastest unpublished plan
// setting that fits. Sets ran, result and the plan fields, or failure.
void simulateRow(const ConfigPaths& paths, const parallelism::SimulationOptions& options,
                 TrainingRowComparison& comparison) {
  const TrainingRow& row = comparison.row;
  try {
    if (!hasUnpublishedPlanSettings(row)) {
      auto result = parallelism::simulateIteration(*comparison.experiment, options);
      if (result.ok()) {
        comparison.result = std::move(result).value();
        comparison.ran = true;
      } else {
        comparison.failure = result.error().toString();
      }
      return;
    }
    auto choice = chooseUnpublishedPlan(row, paths, options);
    if (choice.ok()) {
      comparison.plan = choice->chosen;
      comparison.plan_chosen = true;
      comparison.plan_fitting = choice->fitting;
      comparison.result = std::move(choice->result);
      comparison.ran = true;
    } else {
      comparison.failure = choice.error().toString();
    }
  } catch (const std::exception& e) {
    comparison.failure = std::string("simulation failed: ") + e.what();
  }
}

// The figure the row's source publishes, from its simulation; error against the published one.
void comparePrediction(TrainingMetric metric, const ConfigPaths& paths, const parallelism::SimulationOptions& options,
                       TrainingRowComparison& comparison) {
  const TrainingRow& row = comparison.row;
  if (!comparison.ran) return;
  if (metric == TrainingMetric::kLayerTime) {
    const auto milliseconds = catchInputErrors(
        [&]() -> double { return layerMilliseconds(row, *comparison.experiment, comparison.result, paths, options); });
    if (!milliseconds.ok()) {
      comparison.ran = false;
      comparison.failure = milliseconds.error().toString();
      return;
    }
    comparison.predicted = *milliseconds;
  } else {
    comparison.predicted = predictedMetric(metric, comparison.result, comparison.experiment->plan.gpus);
  }
  comparison.error = comparison.predicted / row.published - 1.0;
  if (!std::isfinite(comparison.error)) {
    comparison.ran = false;
    comparison.failure = fmt::format("non-finite prediction {}", comparison.predicted);
    return;
  }
  if (row.published_memory_GiB) {
    comparison.predicted_memory_GiB = comparison.result.memory.peakBytes() / units::kGiB;
    comparison.memory_error = *comparison.predicted_memory_GiB / *row.published_memory_GiB - 1.0;
  }
}

// Mean |error| and mean signed error per source with rows listed; mean |error| over every compared row.
void summarize(const TrainingRows& rows, TrainingSuiteResult& suite) {
  double total = 0.0;
  for (const auto& source : rows.sources) {
    SourceAccuracy accuracy;
    accuracy.source = source;
    double sum = 0.0;
    double signed_sum = 0.0;
    bool listed = false;
    for (const auto& comparison : suite.rows) {
      if (comparison.row.source != source.id) continue;
      listed = true;
      if (comparison.ran) {
        sum += std::fabs(comparison.error);
        signed_sum += comparison.error;
        ++accuracy.compared;
        if (comparison.predicted_memory_GiB) {
          accuracy.memory_mape += std::fabs(comparison.memory_error);
          accuracy.memory_bias += comparison.memory_error;
          ++accuracy.memory_compared;
        }
      } else if (comparison.failure.empty()) {
        ++accuracy.skipped;
      }
    }
    if (!listed) continue;
    accuracy.mape = accuracy.compared > 0 ? sum / accuracy.compared : 0.0;
    if (accuracy.memory_compared > 0) {
      accuracy.memory_mape /= accuracy.memory_compared;
      accuracy.memory_bias /= accuracy.memory_compared;
    }
    accuracy.bias = accuracy.compared > 0 ? signed_sum / accuracy.compared : 0.0;
    total += sum;
    suite.compared += accuracy.compared;
    suite.sources.push_back(accuracy);
  }
  suite.mape = suite.compared > 0 ? total / suite.compared : 0.0;
}

// "cluster.nodes=N" for the GPUs an experiment document gives (parallelism.gpus) when it names a
// cluster preset; none when it describes its cluster inline (nodes and all, as a torus's must).
std::optional<std::string> clusterOverride(const ConfigNode& experiment) {
  if (experiment.child("cluster").isMap()) return std::nullopt;
  const int64_t gpus = experiment.child("parallelism").child("gpus").asPositiveInteger();
  return fmt::format("cluster.nodes={}", (gpus + kGpusPerNode - 1) / kGpusPerNode);
}

}  // namespace

std::optional<std::string> trainingClusterOverride(const TrainingRow& row) {
  return clusterOverride(row.experimentNode());
}

Expected<parallelism::Experiment> trainingExperiment(const TrainingRow& row, const ConfigPaths& paths,
                                                     const std::vector<Override>& overrides) {
  return catchInputErrors([&]() -> parallelism::Experiment {
    ConfigNode root = row.experimentNode();
    std::vector<Override> all;
    if (auto cluster = clusterOverride(root)) all.push_back(parseOverride(*cluster));
    all.insert(all.end(), overrides.begin(), overrides.end());
    return valueOrThrow(parallelism::loadExperimentNode(std::move(root), paths, all));
  });
}

std::string trainingExperimentYaml(const TrainingRow& row, const std::vector<Override>& overrides) {
  ConfigNode root = row.experimentNode();
  for (const auto& override_value : overrides) applyOverride(root, override_value);
  return configText(root);
}

Expected<TrainingSuiteResult> runTrainingSuite(const TrainingRows& rows, const ConfigPaths& paths,
                                               const TrainingSuiteOptions& options) {
  return catchInputErrors([&]() -> TrainingSuiteResult {
    for (const auto& id : options.only) {
      if (rows.find(id) == nullptr) throwInputError("validate training", "", "unknown row id \"" + id + "\"");
    }
    const auto suite_start = std::chrono::steady_clock::now();
    TrainingSuiteResult suite;
    for (const auto& row : rows.rows) {
      const bool listed =
          options.only.empty() || std::find(options.only.begin(), options.only.end(), row.id) != options.only.end();
      if (!listed) continue;
      TrainingRowComparison comparison;
      comparison.row = row;
      const auto start = std::chrono::steady_clock::now();
      // Loaded for every listed row, a slow one too: the tables show each row's plan.
      auto experiment = trainingExperiment(row, paths);
      if (experiment.ok()) {
        comparison.experiment = std::move(experiment).value();
        comparison.gpu_key = comparison.experiment->cluster.gpu.key;
        comparison.plan = {comparison.experiment->training.micro_batch_size,
                           comparison.experiment->plan.virtual_stages};
      } else {
        comparison.failure = experiment.error().toString();
      }
      if (row.slow && !options.include_slow && options.only.empty() && comparison.failure.empty()) {
        ++suite.skipped_slow;
        suite.rows.push_back(std::move(comparison));
        continue;
      }
      parallelism::SimulationOptions row_options = options.simulation;
      if (comparison.experiment) parallelism::applySoftwareStack(*comparison.experiment, row_options);
      if (options.over_stack) options.over_stack(row_options);
      if (comparison.experiment) simulateRow(paths, row_options, comparison);
      comparePrediction(rows.source(row.source).metric, paths, row_options, comparison);
      comparison.wall_s = secondsSince(start);
      if (!comparison.failure.empty()) ++suite.failed;
      suite.rows.push_back(std::move(comparison));
    }
    summarize(rows, suite);
    suite.wall_s = secondsSince(suite_start);
    return suite;
  });
}

Expected<TrainingSuiteResult> runTrainingSuite(const ConfigPaths& paths, const TrainingSuiteOptions& options) {
  TRAINSIM_ASSIGN_OR_RETURN(const TrainingRows rows, loadTrainingRows(paths));
  return runTrainingSuite(rows, paths, options);
}

}  // namespace trainsim::validation
