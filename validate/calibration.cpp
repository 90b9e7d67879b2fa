#include "validate/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "validate/communication_parameter_names.h"

namespace trainsim::validate {

void applyCalibration(const Calibration& calibration, sim::CommunicationParameters& parameters) {
  for (const auto& value : calibration.communication) {
    const auto* entry = findCommunicationParameter(value.name);
    // The loader rejects unknown names; a calibration built in code must use known ones.
    if (entry == nullptr) throw std::logic_error("unknown communication parameter " + value.name);
    parameters.*(entry->field) = value.value;
  }
}

void applyCalibration(const Calibration& calibration, sim::ComputeParameters& parameters) {
  for (const auto& rate : calibration.compute.matmul_ceilings) {
    auto& rows = parameters.matmul_ceilings;
    std::erase_if(rows, [&](const sim::MeasuredRate& row) {
      return row.gpu_key == rate.gpu_key && row.precision == rate.precision;
    });
    rows.push_back(rate);
  }
  for (const auto& rate : calibration.compute.attention_rates) {
    auto& rows = parameters.attention_rates;
    std::erase_if(rows, [&](const sim::MeasuredAttentionRate& row) {
      return row.gpu_key == rate.gpu_key && row.precision == rate.precision;
    });
    // The model reads a GPU's first row (attentionEfficiency): a calibrated fp16 row goes before a
    // default bf16 one of the same GPU, so that it is the one in force.
    rows.insert(rows.begin(), rate);
  }
  for (const auto& overhead : calibration.compute.attention_tile_overheads) {
    auto& rows = parameters.attention_tile_overheads;
    std::erase_if(rows, [&](const sim::MeasuredAttentionTileOverhead& row) { return row.gpu_key == overhead.gpu_key; });
    rows.push_back(overhead);
  }
  for (const auto& fraction : calibration.compute.memory_efficiency) {
    auto& rows = parameters.memory_efficiency;
    std::erase_if(rows, [&](const sim::MeasuredFraction& row) { return row.gpu_key == fraction.gpu_key; });
    rows.push_back(fraction);
  }
  for (const auto& count : calibration.compute.collective_sms) {
    auto& rows = parameters.collective_sms;
    std::erase_if(rows, [&](const sim::MeasuredCount& row) { return row.gpu_key == count.gpu_key; });
    rows.push_back(count);
  }
  for (const auto& fraction : calibration.compute.training_rate_fraction) {
    auto& rows = parameters.training_rate_fraction;
    std::erase_if(rows, [&](const sim::MeasuredFraction& row) { return row.gpu_key == fraction.gpu_key; });
    rows.push_back(fraction);
  }
  for (const auto& record : calibration.compute.gemm_efficiency) {
    auto& rows = parameters.gemm_shape_efficiency;
    std::erase_if(rows, [&](const sim::GemmShapeEfficiency& row) {
      return row.gpu_key == record.gpu && row.precision == record.precision && row.shape_class == record.shape_class;
    });
    rows.push_back({record.gpu, record.precision, record.shape_class, record.efficiency});
  }
}

void applyCalibration(const Calibration& calibration, parallelism::SimulationOptions& options) {
  applyCalibration(calibration, options.communication);
  applyCalibration(calibration, options.compute);
}

std::optional<double> calibrationCorrection(const Calibration& calibration, sim::CollectiveOp op, int64_t group_size,
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

}  // namespace trainsim::validate
