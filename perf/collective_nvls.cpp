// NVLink SHARP all-reduce: every GPU pushes its buffer into the NVSwitch, which reduces
// (multimem ld_reduce) and multicasts the result back (multimem st). Each GPU's NVLink
// carries the whole buffer once in each direction; the achieved rate is the NVLS
// efficiency of the NVLink bandwidth (CommunicationParameters::nvls_efficiency).
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "perf/collective_algorithms.h"

namespace trainsim::perf::detail {

NvlsPaths nvlsPaths(const CollectiveBuilder& builder, const std::vector<int64_t>& ranks) {
  const auto& cluster = builder.cluster();
  NvlsPaths paths;
  for (int64_t rank : ranks) {
    const topology::DeviceId gpu = cluster.accelerator(rank);
    topology::DeviceId nvswitch = gpu;
    for (auto id : cluster.outLinks(gpu)) {
      const auto to = cluster.link(id).to;
      if (cluster.device(to).kind == topology::DeviceKind::kNvSwitch) nvswitch = to;
    }
    paths.gpu_and_switch.emplace_back(gpu, nvswitch);
    const double path =
        builder.deviceLatencyExcessSeconds(gpu, nvswitch) + builder.deviceLatencyExcessSeconds(nvswitch, gpu);
    paths.excess_s = std::max(paths.excess_s.value_or(path), path);
  }
  return paths;
}

void addNvlsFlows(CollectiveBuilder& builder, const NvlsPaths& paths, double bytes, double latency_s, sim::TaskId group,
                  sim::TaskId start) {
  const auto& parameters = builder.parameters();
  // Links run at raw x NVLink efficiency; NVLS reaches raw x nvls_efficiency.
  const double nvlink_efficiency =
      parameters.linkEfficiency(topology::LinkType::kNvLink, builder.cluster().spec().gpu.key);
  const double wire = bytes * nvlink_efficiency / parameters.nvlsEfficiency(builder.cluster().spec().gpu.key);
  for (const auto& [gpu, nvswitch] : paths.gpu_and_switch) {
    builder.addDeviceFlow(gpu, nvswitch, wire, latency_s, group, start);
    builder.addDeviceFlow(nvswitch, gpu, wire, latency_s, group, start);
  }
}

void buildNvls(const AlgorithmContext& context) {
  CollectiveBuilder& builder = context.builder;
  const auto& parameters = builder.parameters();
  // The one step goes GPU -> NVSwitch -> GPU; the slowest such path sets its latency
  // beyond the defaults.
  const NvlsPaths paths = nvlsPaths(builder, context.request.ranks);
  const double latency = stepLatencySeconds(parameters, CollectiveAlgorithm::kNvls, Protocol::kSimple,
                                            HopClass::kNvLink, 1.0, 0.0, false, {paths.excess_s.value_or(0.0), 0.0}) +
                         pipelineFillSeconds(parameters, Protocol::kSimple, 2.0,
                                             context.request.bytes / static_cast<double>(context.request.ranks.size()));
  addNvlsFlows(builder, paths, context.request.bytes, latency, context.group, context.start);
}

}  // namespace trainsim::perf::detail
