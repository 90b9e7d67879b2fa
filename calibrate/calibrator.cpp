#include "calibrate/calibrator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "perf/compute_model.h"

namespace trainsim::calibrate {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Adds a curve's measured / simulated factors to the correction of its (op, layout); two
// curves of one layout are merged, a size measured twice gets the mean of its factors.
void addCorrection(std::vector<CollectiveCorrection>& corrections, const MeasuredCollective& curve,
                   const std::vector<double>& simulated_us) {
  auto it = std::find_if(corrections.begin(), corrections.end(), [&](const CollectiveCorrection& c) {
    return c.op == curve.op && c.group_size == curve.groupSize() && c.nodes == curve.nodes() &&
           c.gpus_per_node == curve.maxPerNode();
  });
  if (it == corrections.end()) {
    corrections.push_back({curve.op, curve.groupSize(), curve.nodes(), curve.maxPerNode(), {}});
    it = corrections.end() - 1;
  }
  std::map<double, std::vector<double>> factors;
  for (const auto& point : it->points) factors[point.bytes].push_back(point.factor);
  for (std::size_t i = 0; i < curve.samples.size(); ++i) {
    factors[curve.samples[i].bytes].push_back(curve.samples[i].time_us / simulated_us[i]);
  }
  it->points.clear();
  for (const auto& [bytes, values] : factors) {
    double log_sum = 0.0;
    for (double value : values) log_sum += std::log(value);
    it->points.push_back({bytes, std::exp(log_sum / static_cast<double>(values.size()))});
  }
}

// The one NCCL release the measured collectives give (none where no file says); files of
// different releases are an error: one calibration models one NCCL.
std::optional<double> measuredNcclRelease(const std::vector<MeasuredCollective>& collectives) {
  const MeasuredCollective* first = nullptr;
  for (const MeasuredCollective& curve : collectives) {
    if (!curve.nccl_version) continue;
    if (first == nullptr) {
      first = &curve;
    } else if (*curve.nccl_version != *first->nccl_version) {
      throwInputError(curve.where, "nccl_version",
                      fmt::format("the measurements come from two NCCL releases ({} in {}, {} in {}): calibrate "
                                  "each release apart",
                                  *first->nccl_version, first->source, *curve.nccl_version, curve.source));
    }
  }
  return first != nullptr ? first->nccl_version : std::nullopt;
}

}  // namespace

Expected<CalibrationResult> runCalibration(const topology::Cluster& cluster, const CalibrationInputs& inputs,
                                           const CalibrationOptions& options) {
  return catchInputErrors([&] {
    if (inputs.collectives.empty() && inputs.gemm.empty() && inputs.attention.empty() &&
        inputs.training_steps.empty()) {
      throwInputError("", "",
                      "nothing to calibrate from: give --nccl-tests logs, --harness results, --attention "
                      "benchmarks or --training-step measurements");
    }
    CalibrationResult result;
    Calibration& calibration = result.calibration;
    calibration.cluster = cluster.spec().name;
    calibration.gpu = cluster.spec().gpu.key;
    calibration.sources = inputs.sources;

    if (!inputs.collectives.empty()) {
      // The tuner runs the NCCL release the measurements ran (its choices depend on it:
      // PAT, perf/nccl_tuner.h), and the calibration keeps it for what is simulated with it.
      perf::CommunicationParameters start = options.communication_start;
      const std::optional<double> release = measuredNcclRelease(inputs.collectives);
      if (release) start.nccl_version = *release;
      CommunicationFit fit =
          valueOrThrow(fitCommunicationParameters(cluster, inputs.collectives, start, options.communication));
      if (release) calibration.communication.push_back({"nccl_version", *release, ""});
      for (const auto& value : fit.values)
        calibration.communication.push_back({value.name, value.after, value.gpu_key});
      calibration.communication_fit = CommunicationFitQuality{fit.points, fit.iterations, fit.rms_relative_error_before,
                                                              fit.rms_relative_error_after};
      for (const auto& prediction : fit.curves) {
        const MeasuredCollective& curve = *prediction.curve;
        CollectiveCurveRecord record;
        record.op = std::string(perf::collectiveOpName(curve.op));
        record.layout = curve.layout;
        record.group_size = curve.groupSize();
        record.nodes = curve.nodes();
        record.gpus_per_node = curve.maxPerNode();
        record.source = std::filesystem::path(curve.source).filename().string();
        auto summary = fitLatencyBandwidth(curve.samples, perf::busBandwidthFactor(curve.op, curve.groupSize()));
        if (!summary.ok()) {
          Error error = summary.error();
          error.where = curve.where;
          throw InputError(error);
        }
        record.fit = summary.value();
        double sum = 0.0;
        for (std::size_t i = 0; i < curve.samples.size(); ++i) {
          const double error = prediction.after_us[i] / curve.samples[i].time_us - 1.0;
          sum += error * error;
          if (curve.samples[i].bytes >= kMiB) {
            record.model_max_relative_error_from_1MiB =
                std::max(record.model_max_relative_error_from_1MiB, std::abs(error));
          }
        }
        record.model_rms_relative_error = std::sqrt(sum / static_cast<double>(curve.samples.size()));
        calibration.collectives.push_back(std::move(record));
        addCorrection(calibration.corrections, curve, prediction.after_us);
      }
      result.communication_fit = std::move(fit);
    }

    perf::ComputeParameters compute = options.compute_start;
    for (const auto& results : inputs.gemm) {
      GemmFit fit = valueOrThrow(fitGemm(cluster.spec().gpu, results, compute));
      compute = applyGemmFit(fit, compute);
      auto& out = calibration.compute;
      if (fit.ceiling_tflops) {
        std::erase_if(out.matmul_ceilings,
                      [&](const auto& row) { return row.gpu_key == fit.gpu_key && row.precision == fit.precision; });
        out.matmul_ceilings.push_back({fit.gpu_key, fit.precision, *fit.ceiling_tflops});
      }
      for (const auto& cls : fit.classes) {
        std::erase_if(out.gemm_efficiency, [&](const auto& row) {
          return row.gpu == fit.gpu_key && row.precision == fit.precision && row.shape_class == cls.shape_class;
        });
        out.gemm_efficiency.push_back({fit.gpu_key, fit.precision, cls.shape_class, cls.efficiency, cls.shapes});
      }
      if (fit.memory_efficiency) {
        std::erase_if(out.memory_efficiency, [&](const auto& row) { return row.gpu_key == fit.gpu_key; });
        out.memory_efficiency.push_back({fit.gpu_key, *fit.memory_efficiency});
      }
      result.gemm_fits.push_back(std::move(fit));
    }

    for (const auto& benchmark : inputs.attention) {
      result.attention_fits.push_back(valueOrThrow(fitAttention(benchmark)));
    }
    if (!result.attention_fits.empty()) {
      const topology::GpuSpec& gpu = cluster.spec().gpu;
      const int sms = gpu.compute_units > 0 ? gpu.compute_units : options.compute_start.fallback_compute_units;
      result.attention = calibrateAttention(result.attention_fits, calibration.gpu, sms,
                                            options.compute_start.attentionTileOverhead(gpu.key));
      // Measured at the clocks of the cluster's power limit, kept at the GPU's rated power (as
      // the GEMM rates, gemm_fit.cpp).
      const double clock = perf::powerLimitClockRatio(gpu, options.compute_start);
      result.attention->rate.forward_tflops /= clock;
      result.attention->rate.backward_tflops /= clock;
      calibration.compute.attention_rates.push_back(result.attention->rate);
      calibration.compute.attention_tile_overheads.push_back({calibration.gpu, result.attention->overhead});
    }

    if (!inputs.training_steps.empty()) {
      for (const auto& step : inputs.training_steps) {
        if (step.experiment.cluster.gpu.key != calibration.gpu) {
          throwInputError(step.source, "",
                          fmt::format("runs on {} GPUs, the calibrated cluster {} has {}",
                                      step.experiment.cluster.gpu.key, calibration.cluster, calibration.gpu));
        }
      }
      // Everything fitted above is in force for the steps, over each step's stack.
      parallelism::SimulationOptions defaults;
      defaults.communication = options.communication_start;
      defaults.compute = options.compute_start;
      defaults.iteration.flops = options.workload_start;
      defaults.memory = options.memory_start;
      TrainingStepFit fit = valueOrThrow(fitTrainingRateFraction(inputs.training_steps, defaults, calibration));
      calibration.compute.training_rate_fraction.push_back({fit.gpu_key, fit.fraction});
      calibration.training_step_fit = TrainingStepFitQuality{
          static_cast<int>(fit.steps.size()), fit.rms_relative_error_before, fit.rms_relative_error_after};
      result.training_step_fit = std::move(fit);
    }
    return result;
  });
}

}  // namespace trainsim::calibrate
