#include "validate/training_suite.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>

#include "parallelism/experiment_loader.h"

namespace trainsim::validate {
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
double layerMilliseconds(const TrainingMeasurement& row, const parallelism::Experiment& experiment,
                         const parallelism::IterationResult& result, const ConfigPaths& paths,
                         const parallelism::SimulationOptions& options) {
  if (row.pp != 1 || row.dp != 1 || row.cp != 1 || result.microbatches != 1 || hasUnpublishedPlanSettings(row)) {
    throwInputError(
        "validate training", "",
        fmt::format("row {}: a layer_time_ms row needs pp 1, dp 1, cp 1 and one published micro-batch", row.id));
  }
  TrainingMeasurement longer = row;
  longer.layers += 1;
  const parallelism::Experiment longer_experiment = valueOrThrow(trainingExperiment(longer, paths));
  const parallelism::IterationResult longer_result =
      valueOrThrow(parallelism::simulateIteration(longer_experiment, options));
  const double added =
      passesSeconds(longer_experiment, longer_result, options) - passesSeconds(experiment, result, options);
  return 1e3 * added;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::string trainingExperimentYaml(const TrainingMeasurement& row) {
  std::string yaml = fmt::format("name: {}\n", row.id);
  yaml += fmt::format("description: \"{} ({})\"\n", row.model, row.source);
  yaml += "model:\n";
  yaml += fmt::format("  name: \"{}\"\n", row.model);
  yaml += fmt::format("  architecture: {}\n", row.architecture);
  yaml += fmt::format("  layers: {}\n", row.layers);
  yaml += fmt::format("  hidden_size: {}\n", row.hidden_size);
  yaml += fmt::format("  ffn_hidden_size: {}\n", row.ffn_hidden_size);
  yaml += fmt::format("  attention_heads: {}\n", row.attention_heads);
  if (row.kv_heads > 0) yaml += fmt::format("  kv_heads: {}\n", row.kv_heads);
  yaml += fmt::format("  vocab_size: {}\n", row.vocab_size);
  yaml += fmt::format("  tied_embeddings: {}\n", row.tied_embeddings);
  if (row.dropout >= 0.0) {
    yaml += fmt::format("  hidden_dropout: {}\n  attention_dropout: {}\n", row.dropout, row.dropout);
  }
  yaml += fmt::format("cluster: {}\n", row.cluster);
  yaml += "training:\n";
  yaml += fmt::format("  seq_len: {}\n", row.seq_len);
  yaml += fmt::format("  global_batch_size: {}\n", row.global_batch_size);
  yaml += fmt::format("  micro_batch_size: {}\n", row.micro_batch_size);
  yaml += fmt::format("  precision: {}\n", row.precision);
  if (!row.grad_reduce_precision.empty()) {
    yaml += fmt::format("  grad_reduce_precision: {}\n", row.grad_reduce_precision);
  }
  if (row.fp8_param_gather) yaml += "  fp8_param_gather: true\n";
  if (!row.fp8_recipe.empty()) yaml += fmt::format("  fp8_recipe: {}\n", row.fp8_recipe);
  yaml += "  optimizer: adam\n";
  if (!row.optimizer_state_precision.empty()) {
    yaml += fmt::format("  optimizer_state_precision: {}\n", row.optimizer_state_precision);
  }
  yaml += fmt::format("  flash_attention: {}\n", row.flash_attention);
  yaml += fmt::format("  fused_cross_entropy: {}\n", row.fused_cross_entropy);
  yaml += "parallelism:\n";
  yaml += fmt::format("  gpus: {}\n", row.gpus);
  yaml += fmt::format("  tp: {}\n", row.tp);
  yaml += fmt::format("  pp: {}\n", row.pp);
  yaml += fmt::format("  dp: {}\n", row.dp);
  yaml += fmt::format("  cp: {}\n", row.cp);
  yaml += fmt::format("  sequence_parallel: {}\n", row.sequence_parallel);
  yaml += fmt::format("  virtual_stages: {}\n", row.virtual_stages);
  if (row.first_stage_layers) yaml += fmt::format("  first_stage_layers: {}\n", *row.first_stage_layers);
  if (row.last_stage_layers) yaml += fmt::format("  last_stage_layers: {}\n", *row.last_stage_layers);
  yaml += "  schedule: 1f1b\n";
  yaml += fmt::format("  zero: {}\n", row.zero);
  yaml += fmt::format("  recompute: {}\n", row.recompute);
  yaml += fmt::format("  overlap_grad_reduce: {}\n", row.overlap_grad_reduce);
  yaml += fmt::format("  overlap_param_gather: {}\n", row.overlap_param_gather);
  yaml += fmt::format("  tp_comm_overlap: {}\n", row.tp_comm_overlap);
  if (!row.tp_comm_overlap_config.empty()) {
    yaml += fmt::format("  tp_comm_overlap_config: {}\n", row.tp_comm_overlap_config);
  }
  if (row.ddp_bucket_size) yaml += fmt::format("  ddp_bucket_size: {}\n", *row.ddp_bucket_size);
  return yaml;
}

std::string trainingClusterOverride(const TrainingMeasurement& row) {
  return fmt::format("cluster.nodes={}", (row.gpus + kGpusPerNode - 1) / kGpusPerNode);
}

Expected<parallelism::Experiment> trainingExperiment(const TrainingMeasurement& row, const ConfigPaths& paths) {
  return catchInputErrors([&]() -> parallelism::Experiment {
    ConfigNode root = parseConfigText(trainingExperimentYaml(row), "<validate training " + row.id + ">");
    return valueOrThrow(parallelism::loadExperimentNode(root, paths, {parseOverride(trainingClusterOverride(row))}));
  });
}

Expected<TrainingSuiteResult> runTrainingSuite(const ConfigPaths& paths, const TrainingSuiteOptions& options) {
  return catchInputErrors([&]() -> TrainingSuiteResult {
    const auto& rows = trainingMeasurements();
    for (const auto& id : options.only) {
      const bool known = std::any_of(rows.begin(), rows.end(), [&](const auto& row) { return row.id == id; });
      if (!known) throwInputError("validate training", "", "unknown row id \"" + id + "\"");
    }
    const auto suite_start = std::chrono::steady_clock::now();
    TrainingSuiteResult suite;
    for (const auto& row : rows) {
      const bool listed =
          options.only.empty() || std::find(options.only.begin(), options.only.end(), row.id) != options.only.end();
      if (!listed) continue;
      TrainingRowComparison comparison;
      comparison.row = &row;
      if (row.slow && !options.include_slow && options.only.empty()) {
        ++suite.skipped_slow;
        suite.rows.push_back(std::move(comparison));
        continue;
      }
      const auto start = std::chrono::steady_clock::now();
      const auto experiment = trainingExperiment(row, paths);
      comparison.plan = {row.micro_batch_size, row.virtual_stages};
      if (!experiment.ok()) {
        comparison.failure = experiment.error().toString();
      } else {
        comparison.gpu_key = experiment->cluster.gpu.key;
        try {
          if (!hasUnpublishedPlanSettings(row)) {
            auto result = parallelism::simulateIteration(*experiment, options.simulation);
            if (result.ok()) {
              comparison.result = std::move(result).value();
              comparison.ran = true;
            } else {
              comparison.failure = result.error().toString();
            }
          } else {
            auto choice = chooseUnpublishedPlan(row, paths, options.simulation);
            if (choice.ok()) {
              comparison.plan = choice->chosen;
              comparison.plan_chosen = true;
              comparison.plan_fitting = choice->fitting;
              comparison.result = std::move(choice->result);
              comparison.ran = true;
            } else {
              comparison.failure = choice.error().toString();
            }
          }
        } catch (const std::exception& e) {
          comparison.failure = std::string("simulation failed: ") + e.what();
        }
      }
      const TrainingMetric metric = trainingSource(row.source).metric;
      if (comparison.ran && metric == TrainingMetric::kLayerTime) {
        const auto milliseconds = catchInputErrors([&]() -> double {
          return layerMilliseconds(row, *experiment, comparison.result, paths, options.simulation);
        });
        if (milliseconds.ok()) {
          comparison.predicted = *milliseconds;
        } else {
          comparison.ran = false;
          comparison.failure = milliseconds.error().toString();
        }
      } else if (comparison.ran) {
        comparison.predicted = predictedMetric(metric, comparison.result, row.gpus);
      }
      comparison.wall_s = secondsSince(start);
      if (comparison.ran) {
        comparison.error = comparison.predicted / row.published - 1.0;
        if (!std::isfinite(comparison.error)) {
          comparison.ran = false;
          comparison.failure = fmt::format("non-finite prediction {}", comparison.predicted);
        }
      }
      if (!comparison.failure.empty()) ++suite.failed;
      suite.rows.push_back(std::move(comparison));
    }

    double total = 0.0;
    for (const auto& source : trainingSources()) {
      SourceAccuracy accuracy;
      accuracy.source = &source;
      double sum = 0.0;
      bool listed = false;
      for (const auto& comparison : suite.rows) {
        if (comparison.row->source != source.id) continue;
        listed = true;
        if (comparison.ran) {
          sum += std::fabs(comparison.error);
          ++accuracy.compared;
        } else if (comparison.failure.empty()) {
          ++accuracy.skipped;
        }
      }
      if (!listed) continue;
      accuracy.mape = accuracy.compared > 0 ? sum / accuracy.compared : 0.0;
      total += sum;
      suite.compared += accuracy.compared;
      suite.sources.push_back(accuracy);
    }
    suite.mape = suite.compared > 0 ? total / suite.compared : 0.0;
    suite.wall_s = secondsSince(suite_start);
    return suite;
  });
}

}  // namespace trainsim::validate
