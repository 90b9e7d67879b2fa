#include "validation/training_metric.h"

#include <array>

namespace trainsim::validation {

std::string_view trainingMetricName(TrainingMetric metric) {
  switch (metric) {
    case TrainingMetric::kHardwareTflopsPerGpu: return "hardware_tflops_per_gpu";
    case TrainingMetric::kModelTflopsPerGpu: return "tflops_per_gpu";
    case TrainingMetric::kIterationTime: return "iteration_time_s";
    case TrainingMetric::kTokensPerSecondPerGpu: return "tokens_per_s_per_gpu";
    case TrainingMetric::kLayerTime: return "layer_time_ms";
  }
  return "?";
}

std::string_view trainingMetricUnit(TrainingMetric metric) {
  switch (metric) {
    case TrainingMetric::kIterationTime: return "s";
    case TrainingMetric::kTokensPerSecondPerGpu: return "tokens/s";
    case TrainingMetric::kLayerTime: return "ms";
    default: return "TFLOP/s";
  }
}

std::optional<TrainingMetric> trainingMetricNamed(std::string_view name) {
  constexpr std::array kMetrics = {TrainingMetric::kHardwareTflopsPerGpu, TrainingMetric::kModelTflopsPerGpu,
                                   TrainingMetric::kIterationTime, TrainingMetric::kTokensPerSecondPerGpu,
                                   TrainingMetric::kLayerTime};
  for (const TrainingMetric metric : kMetrics) {
    if (trainingMetricName(metric) == name) return metric;
  }
  return std::nullopt;
}

bool isTimeMetric(TrainingMetric metric) {
  switch (metric) {
    case TrainingMetric::kIterationTime:
    case TrainingMetric::kLayerTime: return true;
    case TrainingMetric::kHardwareTflopsPerGpu:
    case TrainingMetric::kModelTflopsPerGpu:
    case TrainingMetric::kTokensPerSecondPerGpu: return false;
  }
  return false;
}

double stepTimeError(TrainingMetric metric, double metric_error) {
  return isTimeMetric(metric) ? metric_error : 1.0 / (1.0 + metric_error) - 1.0;
}

}  // namespace trainsim::validation
