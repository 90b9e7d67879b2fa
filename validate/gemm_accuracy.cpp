#include "validate/gemm_accuracy.h"

#include <cmath>

#include "sim/compute_model.h"
#include "topology/cluster_loader.h"

namespace trainsim::validate {

Expected<std::vector<GemmSourceAccuracy>> compareGemms(const ConfigPaths& paths,
                                                       const sim::ComputeParameters& parameters) {
  return catchInputErrors([&]() -> std::vector<GemmSourceAccuracy> {
    const topology::GpuCatalog catalog = valueOrThrow(topology::loadGpuCatalog(paths));
    std::vector<GemmSourceAccuracy> results;
    for (const MeasuredGemmSource& source : valueOrThrow(loadGemmSources(paths))) {
      GemmSourceAccuracy accuracy;
      accuracy.source = source;
      for (const MeasuredGemm& row : source.rows) {
        const topology::GpuSpec* gpu = catalog.find(row.gpu);
        if (gpu == nullptr) throwInputError("", row.gpu, "the GEMM suite names a GPU the catalog does not have");
        const auto model = valueOrThrow(sim::ComputeModel::create(*gpu, row.precision, parameters.atKernelRates()));
        const sim::GemmShape shape{row.m, row.n, row.k};
        const auto m = static_cast<double>(row.m), n = static_cast<double>(row.n), k = static_cast<double>(row.k);
        const GemmElementBytes element = gemmElementBytes(row.precision);
        const double output_bytes = m * n * element.output;
        const double bytes = (m * k + k * n) * element.input + output_bytes;
        const double seconds = model.gemmTime(shape, bytes, output_bytes);
        const sim::GemmPlan plan = model.gemmPlan(shape);
        GemmComparison comparison;
        comparison.measured = row;
        comparison.predicted_tflops = shape.flops() / seconds / 1e12;
        comparison.error = comparison.predicted_tflops / row.tflops - 1.0;
        comparison.tile_m = plan.tile.m;
        comparison.tile_n = plan.tile.n;
        comparison.waves = plan.waves;
        accuracy.mape += std::abs(comparison.error);
        accuracy.rows.push_back(comparison);
      }
      if (!accuracy.rows.empty()) accuracy.mape /= static_cast<double>(accuracy.rows.size());
      results.push_back(std::move(accuracy));
    }
    return results;
  });
}

}  // namespace trainsim::validate
