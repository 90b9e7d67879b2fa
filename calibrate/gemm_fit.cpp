#include "calibrate/gemm_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "calibrate/gemm_traffic.h"
#include "calibrate/robust_statistics.h"
#include "perf/compute_model.h"

namespace trainsim::calibrate {
namespace {

// Memory-bandwidth rows at least this big enter the memory efficiency (see gemm_fit.h).
constexpr double kMinStreamBytes = 256.0 * 1024.0 * 1024.0;
// The launch overhead is taken off a measured GEMM time down to at most this fraction of it.
constexpr double kMinNetTimeFraction = 0.5;

}  // namespace

perf::ComputeParameters applyGemmFit(const GemmFit& fit, perf::ComputeParameters start) {
  if (fit.ceiling_tflops) {
    std::erase_if(start.matmul_ceilings, [&](const perf::MeasuredRate& row) {
      return row.gpu_key == fit.gpu_key && row.precision == fit.precision;
    });
    start.matmul_ceilings.push_back({fit.gpu_key, fit.precision, *fit.ceiling_tflops});
  }
  for (const auto& cls : fit.classes) {
    std::erase_if(start.gemm_shape_efficiency, [&](const perf::GemmShapeEfficiency& row) {
      return row.gpu_key == fit.gpu_key && row.precision == fit.precision && row.shape_class == cls.shape_class;
    });
    start.gemm_shape_efficiency.push_back({fit.gpu_key, fit.precision, cls.shape_class, cls.efficiency});
  }
  if (fit.memory_efficiency) {
    std::erase_if(start.memory_efficiency,
                  [&](const perf::MeasuredFraction& row) { return row.gpu_key == fit.gpu_key; });
    start.memory_efficiency.push_back({fit.gpu_key, *fit.memory_efficiency});
  }
  return start;
}

Expected<GemmFit> fitGemm(const topology::GpuSpec& gpu, const GemmResults& results,
                          const perf::ComputeParameters& start) {
  const auto peak = gpu.peakTflops(results.precision);
  if (!peak || !(*peak > 0.0)) {
    return Error{ExitCode::kInvalidInput, results.source, "precision",
                 fmt::format("the cluster's GPU {} has no {} peak rate to measure the GEMMs against", gpu.key,
                             topology::precisionName(results.precision))};
  }
  GemmFit fit;
  fit.gpu_key = gpu.key;
  fit.precision = results.precision;
  fit.peak_tflops = *peak;
  // The GEMMs ran at the clocks of the cluster's power limit; the rates are kept as they hold
  // at the GPU's rated power (GpuSpec::rates_power_W), which the model scales back down.
  const double clock = perf::powerLimitClockRatio(gpu, start);

  if (!results.gemm.empty()) {
    double best = 0.0;
    for (const auto& sample : results.gemm) best = std::max(best, sample.tflops);
    if (best > *peak) {
      fit.warnings.push_back(
          fmt::format("{}: {:.1f} TFLOP/s measured is above the {} catalog peak of {:.1f}; kept "
                      "at the peak (is --cluster's GPU the one measured?)",
                      results.source, best, gpu.key, *peak));
      best = *peak;
    }
    fit.ceiling_tflops = std::min(*peak, best / clock);
    // Per class, the FLOPs and the net time of its shapes, each run once.
    struct ClassSums {
      double flops = 0.0;
      double seconds = 0.0;
      int shapes = 0;
    };
    std::map<std::string, ClassSums> by_class;
    for (const auto& sample : results.gemm) {
      const perf::GemmShape shape{sample.m, sample.n, sample.k, sample.batch};
      const double net_us = std::max(sample.time_us - start.launch_overhead_us, kMinNetTimeFraction * sample.time_us);
      ClassSums& sums = by_class[perf::gemmShapeClass(shape)];
      sums.flops += shape.flops();
      sums.seconds += net_us * 1e-6;
      ++sums.shapes;
    }
    for (const auto& [name, sums] : by_class) {
      fit.classes.push_back({name, std::min(1.0, sums.flops / sums.seconds / (*peak * 1e12) / clock), sums.shapes});
    }
  }
  if (!results.memory.empty()) {
    std::vector<double> rates;
    for (const auto& sample : results.memory) {
      if (sample.bytes >= kMinStreamBytes) rates.push_back(sample.GBps);
    }
    if (rates.empty()) {
      const auto largest = std::max_element(results.memory.begin(), results.memory.end(),
                                            [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
      rates.push_back(largest->GBps);
    }
    double fraction = median(rates) / gpu.memory_bandwidth_GBps;
    if (fraction > 1.0) {
      fit.warnings.push_back(
          fmt::format("{}: {:.0f} GB/s measured is above the {} catalog bandwidth of {:.0f} GB/s; "
                      "kept at the peak",
                      results.source, median(rates), gpu.key, gpu.memory_bandwidth_GBps));
      fraction = 1.0;
    }
    fit.memory_efficiency = fraction;
  }

  // How the compute model does on the measured shapes, before and after.
  // At the kernels' rates: the measured shapes ran one kernel repeated, as a microbenchmark.
  auto before = perf::ComputeModel::create(gpu, results.precision, start.atKernelRates());
  if (!before.ok()) return before.error();
  auto after = perf::ComputeModel::create(gpu, results.precision, applyGemmFit(fit, start).atKernelRates());
  if (!after.ok()) return after.error();
  for (const auto& sample : results.gemm) {
    const perf::GemmShape shape{sample.m, sample.n, sample.k, sample.batch};
    const double bytes = gemmTraffic(sample.m, sample.n, sample.k, sample.batch, results.precision).total;
    fit.checks.push_back({sample, perf::gemmShapeClass(shape), before->gemmTime(shape, bytes) * 1e6,
                          after->gemmTime(shape, bytes) * 1e6});
  }
  return fit;
}

}  // namespace trainsim::calibrate
