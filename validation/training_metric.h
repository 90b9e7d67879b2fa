// What a published training measurement reports, and therefore what the simulated iteration
// is compared with (`trainsim validate training`). Each source of the suite publishes one
// metric (configs/validation/training/<source>.yaml, `metric:`).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace trainsim::validation {

enum class TrainingMetric : uint8_t {
  // TFLOP/s per GPU counting the recomputed forward pass (SC21's formula: 96 B s l h^2 (1 +
  // s/6h + V/16lh) with full recompute): compared with IterationResult::hardware_tflops_per_gpu.
  kHardwareTflopsPerGpu,
  // TFLOP/s per GPU of model FLOPs only (no recomputation; the MFU numerator): compared with
  // IterationResult::tflops_per_gpu.
  kModelTflopsPerGpu,
  // Seconds per optimizer step: compared with IterationResult::iteration_time_s.
  kIterationTime,
  // Tokens per second per GPU (the whole job's tokens/s over its GPUs): compared with
  // IterationResult::tokens_per_s / gpus. Free of FLOP-counting conventions (Megatron-Bridge
  // counts causal attention at half the FLOPs; this suite's model FLOPs count it in full).
  kTokensPerSecondPerGpu,
  // Milliseconds one transformer layer takes on one GPU for one micro-batch, forward and
  // backward together (recomputation and the layer's tensor-parallel collectives included),
  // as a per-layer profile measures it. Compared with the marginal cost of a layer: the
  // row's experiment simulated at its layer count and at one layer more, the difference of
  // the two iteration times less their optimizer steps (validation/training_suite.cpp).
  // Rows of this metric run one micro-batch on one pipeline stage without data parallelism.
  kLayerTime,
};

// "hardware_tflops_per_gpu", "tflops_per_gpu", "iteration_time_s", "tokens_per_s_per_gpu" or
// "layer_time_ms": the name a source file gives its metric, and the JSON output's.
[[nodiscard]] std::string_view trainingMetricName(TrainingMetric metric);
[[nodiscard]] std::string_view trainingMetricUnit(TrainingMetric metric);  // "TFLOP/s", "s", "tokens/s" or "ms"
// The metric of that name; nullopt for any other text.
[[nodiscard]] std::optional<TrainingMetric> trainingMetricNamed(std::string_view name);

// Whether the metric is a time (iteration or layer time) rather than a throughput.
[[nodiscard]] bool isTimeMetric(TrainingMetric metric);

// A row's error in its metric (predicted / published - 1) as the error of the predicted step
// time (positive: predicted slower than it ran): the same for the time metrics, 1 / (1 +
// error) - 1 for the throughputs (TFLOP/s, tokens/s), which are inversely proportional to it.
[[nodiscard]] double stepTimeError(TrainingMetric metric, double metric_error);

}  // namespace trainsim::validation
