#include "validation/gemm_accuracy.h"

#include <cmath>
#include <map>
#include <set>

#include "calibrate/gemm_fit.h"
#include "perf/compute_model.h"
#include "topology/cluster_loader.h"

namespace trainsim::validation {
namespace {

perf::GemmShape shapeOf(const MeasuredGemm& row) { return {row.m, row.n, row.k, row.batch}; }

// The model's rate for the measured shape, its inputs and output moved once at the
// precision's element sizes.
double predictedTflops(const perf::ComputeModel& model, const MeasuredGemm& row) {
  const perf::GemmShape shape = shapeOf(row);
  const calibrate::GemmTraffic traffic = calibrate::gemmTraffic(row.m, row.n, row.k, row.batch, row.precision);
  return shape.flops() / model.gemmTime(shape, traffic.total, traffic.output) / 1e12;
}

// `rate(row)` is the predicted TFLOP/s of a row.
template <typename Rate>
GemmErrors errorsOf(const std::vector<GemmComparison>& rows, Rate rate) {
  GemmErrors errors;
  double measured_s = 0.0, predicted_s = 0.0;
  for (const GemmComparison& row : rows) {
    const double error = rate(row) / row.measured.tflops - 1.0;
    errors.mape += std::abs(error);
    errors.bias += error;
    const double flops = shapeOf(row.measured).flops();
    measured_s += flops / row.measured.tflops;
    predicted_s += flops / rate(row);
  }
  if (!rows.empty()) {
    errors.mape /= static_cast<double>(rows.size());
    errors.bias /= static_cast<double>(rows.size());
    errors.throughput_error = measured_s / predicted_s - 1.0;
  }
  return errors;
}

// The rows as the harness results that `calibrate --harness` fits (calibrate/gemm_fit.h).
calibrate::GemmResults asHarnessResults(const MeasuredGemmSource& source,
                                        const std::vector<const MeasuredGemm*>& rows) {
  calibrate::GemmResults results;
  results.source = source.harness_results;
  results.precision = rows.front()->precision;
  for (const MeasuredGemm* row : rows) {
    const double time_us = shapeOf(*row).flops() / (row->tflops * 1e12) * 1e6;
    results.gemm.push_back({row->m, row->n, row->k, row->batch, time_us, row->tflops, row->label});
  }
  return results;
}

// The model for `gpu` calibrated on `rows` as `trainsim calibrate --harness` calibrates it.
perf::ComputeModel calibratedModel(const topology::GpuSpec& gpu, const MeasuredGemmSource& source,
                                   const std::vector<const MeasuredGemm*>& rows,
                                   const perf::ComputeParameters& parameters) {
  const calibrate::GemmFit fit = valueOrThrow(calibrate::fitGemm(gpu, asHarnessResults(source, rows), parameters));
  return valueOrThrow(perf::ComputeModel::create(gpu, rows.front()->precision,
                                                 calibrate::applyGemmFit(fit, parameters).atKernelRates()));
}

// Fills the held-out and in-sample rates of a harness source's rows (all on one GPU and
// precision, as one results file holds them).
void calibrateOnOwnRows(const topology::GpuSpec& gpu, const perf::ComputeParameters& parameters,
                        GemmSourceAccuracy& accuracy) {
  std::vector<const MeasuredGemm*> all;
  std::set<std::string> labels;
  for (const GemmComparison& row : accuracy.rows) {
    all.push_back(&row.measured);
    labels.insert(row.measured.label);
  }
  const perf::ComputeModel in_sample = calibratedModel(gpu, accuracy.source, all, parameters);
  for (GemmComparison& row : accuracy.rows) row.in_sample_tflops = predictedTflops(in_sample, row.measured);
  accuracy.in_sample = errorsOf(accuracy.rows, [](const GemmComparison& row) { return row.in_sample_tflops; });
  accuracy.labels = static_cast<int>(labels.size());
  if (labels.size() < 2) return;
  for (const std::string& label : labels) {
    std::vector<const MeasuredGemm*> others;
    for (const MeasuredGemm* row : all) {
      if (row->label != label) others.push_back(row);
    }
    const perf::ComputeModel held_out = calibratedModel(gpu, accuracy.source, others, parameters);
    for (GemmComparison& row : accuracy.rows) {
      if (row.measured.label == label) row.held_out_tflops = predictedTflops(held_out, row.measured);
    }
  }
  accuracy.held_out = errorsOf(accuracy.rows, [](const GemmComparison& row) { return row.held_out_tflops; });
}

}  // namespace

Expected<std::vector<GemmSourceAccuracy>> compareGemms(const ConfigPaths& paths,
                                                       const perf::ComputeParameters& parameters) {
  return catchInputErrors([&]() -> std::vector<GemmSourceAccuracy> {
    const topology::GpuCatalog catalog = valueOrThrow(topology::loadGpuCatalog(paths));
    std::vector<GemmSourceAccuracy> results;
    for (const MeasuredGemmSource& source : valueOrThrow(loadGemmSources(paths))) {
      GemmSourceAccuracy accuracy;
      accuracy.source = source;
      for (const MeasuredGemm& row : source.rows) {
        const topology::GpuSpec* gpu = catalog.find(row.gpu);
        if (gpu == nullptr) throwInputError("", row.gpu, "the GEMM suite names a GPU the catalog does not have");
        const auto model = valueOrThrow(perf::ComputeModel::create(*gpu, row.precision, parameters.atKernelRates()));
        const perf::GemmPlan plan = model.gemmPlan(shapeOf(row));
        GemmComparison comparison;
        comparison.measured = row;
        comparison.predicted_tflops = predictedTflops(model, row);
        comparison.error = comparison.predicted_tflops / row.tflops - 1.0;
        comparison.tile_m = plan.tile.m;
        comparison.tile_n = plan.tile.n;
        comparison.waves = plan.waves;
        accuracy.rows.push_back(comparison);
      }
      accuracy.errors = errorsOf(accuracy.rows, [](const GemmComparison& row) { return row.predicted_tflops; });
      accuracy.mape = accuracy.errors.mape;
      if (!source.harness_results.empty() && !accuracy.rows.empty()) {
        calibrateOnOwnRows(*catalog.find(source.rows.front().gpu), parameters, accuracy);
      }
      results.push_back(std::move(accuracy));
    }
    return results;
  });
}

}  // namespace trainsim::validation
