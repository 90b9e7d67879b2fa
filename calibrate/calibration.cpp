#include "calibrate/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "parallelism/model_constant_sections.h"

namespace trainsim::calibrate {

void applyCalibration(const Calibration& calibration, perf::CommunicationParameters& parameters) {
  perf::applyCommunicationValues(calibration.communication, parameters);
}

void applyCalibration(const Calibration& calibration, perf::ComputeParameters& parameters) {
  perf::applyComputeSection(calibration.compute, parameters);
}

void applyCalibration(const Calibration& calibration, parallelism::SimulationOptions& options) {
  applyCalibration(calibration, options.communication);
  applyCalibration(calibration, options.compute);
  parallelism::applyWorkloadValues(calibration.workload, options.iteration.flops);
  parallelism::applyMemoryValues(calibration.memory, options.memory);
}

std::optional<double> calibrationCorrection(const Calibration& calibration, perf::CollectiveOp op, int64_t group_size,
                                            int64_t nodes, int64_t gpus_per_node, double bytes) {
  return correctionFactor(calibration.corrections, op, group_size, nodes, gpus_per_node, bytes);
}

std::string describeCalibration(const Calibration& calibration) {
  std::vector<std::string> parts;
  if (!calibration.communication.empty()) {
    parts.push_back(fmt::format("{} communication parameter{}", calibration.communication.size(),
                                calibration.communication.size() == 1 ? "" : "s"));
  }
  const auto& compute = calibration.compute;
  if (!compute.matmul_ceilings.empty()) {
    parts.push_back(fmt::format("{} matmul ceiling{}", compute.matmul_ceilings.size(),
                                compute.matmul_ceilings.size() == 1 ? "" : "s"));
  }
  if (!compute.gemm_efficiency.empty()) {
    parts.push_back(fmt::format("{} GEMM shape class{}", compute.gemm_efficiency.size(),
                                compute.gemm_efficiency.size() == 1 ? "" : "es"));
  }
  if (!compute.attention_rates.empty()) parts.push_back("attention rates");
  if (!compute.attention_tile_overheads.empty()) parts.push_back("attention tile overheads");
  if (!compute.memory_efficiency.empty()) parts.push_back("memory efficiency");
  if (!compute.collective_sms.empty()) parts.push_back("collective SMs");
  if (!compute.training_rate_fraction.empty()) parts.push_back("training-step rate fraction");
  if (!compute.tile_fixed_overhead.empty()) parts.push_back("GEMM tile overheads");
  if (!compute.gemm_epilogue_exposed.empty()) parts.push_back("GEMM epilogue shares");
  if (compute.gemm_tiles) parts.push_back("GEMM tiles");
  if (compute.collective_offload_vendors) parts.push_back("collective offload vendors");
  if (!compute.values.empty()) {
    parts.push_back(
        fmt::format("{} compute parameter{}", compute.values.size(), compute.values.size() == 1 ? "" : "s"));
  }
  if (!calibration.workload.empty()) {
    parts.push_back(fmt::format("{} workload constant{}", calibration.workload.size(),
                                calibration.workload.size() == 1 ? "" : "s"));
  }
  if (!calibration.memory.empty()) {
    parts.push_back(
        fmt::format("{} memory constant{}", calibration.memory.size(), calibration.memory.size() == 1 ? "" : "s"));
  }
  if (!calibration.corrections.empty()) {
    parts.push_back(fmt::format("{} measured collective layout{}", calibration.corrections.size(),
                                calibration.corrections.size() == 1 ? "" : "s"));
  }
  std::string covered;
  for (const auto& part : parts) covered += (covered.empty() ? "" : ", ") + part;
  if (covered.empty()) covered = "no parameters";
  const std::string name = calibration.file.empty() ? std::string("(in memory)")
                                                    : std::filesystem::path(calibration.file).filename().string();
  return fmt::format("{} (measured on {}, {}: {})", name, calibration.cluster, calibration.gpu, covered);
}

std::string calibrationMismatch(const Calibration& calibration, const topology::ClusterSpec& cluster) {
  if (calibration.gpu != cluster.gpu.key) {
    return fmt::format("the calibration was measured on {} GPUs ({}), this cluster has {}: its values may not hold",
                       calibration.gpu, calibration.cluster, cluster.gpu.key);
  }
  if (calibration.cluster != cluster.name) {
    return fmt::format("the calibration was measured on cluster {}, applied here to {}", calibration.cluster,
                       cluster.name);
  }
  return {};
}

}  // namespace trainsim::calibrate
