// NVLink SHARP all-reduce: every GPU pushes its buffer into the NVSwitch, which reduces
// (multimem ld_reduce) and multicasts the result back (multimem st). Each GPU's NVLink
// carries the whole buffer once in each direction; the achieved rate is the NVLS
// efficiency of the NVLink bandwidth (CommunicationParameters::nvls_efficiency).
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "sim/collective_algorithms.h"

namespace trainsim::sim::detail {

void buildNvls(const AlgorithmContext& context) {
  CollectiveBuilder& builder = context.builder;
  const auto& cluster = builder.cluster();
  const auto& parameters = builder.parameters();
  // Links run at raw x NVLink efficiency; NVLS reaches raw x nvls_efficiency.
  const double nvlink_efficiency = parameters.linkEfficiency(topology::LinkType::kNvLink, cluster.spec().gpu.key);
  const double wire = context.request.bytes * nvlink_efficiency / parameters.nvls_efficiency;
  std::vector<std::pair<topology::DeviceId, topology::DeviceId>> gpu_and_switch;
  // The one step goes GPU -> NVSwitch -> GPU; the slowest such path sets its latency
  // beyond the defaults.
  std::optional<double> excess;
  for (int64_t rank : context.request.ranks) {
    const topology::DeviceId gpu = cluster.accelerator(rank);
    topology::DeviceId nvswitch = gpu;
    for (auto id : cluster.outLinks(gpu)) {
      const auto to = cluster.link(id).to;
      if (cluster.device(to).kind == topology::DeviceKind::kNvSwitch) nvswitch = to;
    }
    gpu_and_switch.emplace_back(gpu, nvswitch);
    const double path =
        builder.deviceLatencyExcessSeconds(gpu, nvswitch) + builder.deviceLatencyExcessSeconds(nvswitch, gpu);
    excess = excess ? std::max(*excess, path) : path;
  }
  const double latency = stepLatencySeconds(parameters, CollectiveAlgorithm::kNvls, Protocol::kSimple,
                                            HopClass::kNvLink, 1.0, 0.0, false, {excess.value_or(0.0), 0.0}) +
                         pipelineFillSeconds(parameters, Protocol::kSimple, 2.0,
                                             context.request.bytes / static_cast<double>(context.request.ranks.size()));
  for (const auto& [gpu, nvswitch] : gpu_and_switch) {
    builder.addDeviceFlow(gpu, nvswitch, wire, latency, context.group, context.start);
    builder.addDeviceFlow(nvswitch, gpu, wire, latency, context.group, context.start);
  }
}

}  // namespace trainsim::sim::detail
