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
    double nvlink_Bps = 0.0;
    for (auto id : cluster.outLinks(gpu)) {
      if (cluster.link(id).to == nvswitch) nvlink_Bps += cluster.link(id).bandwidth_Bps;
    }
    paths.nvlink_Bps = paths.gpu_and_switch.size() == 1 ? nvlink_Bps : std::min(paths.nvlink_Bps, nvlink_Bps);
    const double path =
        builder.deviceLatencyExcessSeconds(gpu, nvswitch) + builder.deviceLatencyExcessSeconds(nvswitch, gpu);
    paths.excess_s = std::max(paths.excess_s.value_or(path), path);
  }
  return paths;
}

NvlsNetworkPath nvlsNetworkPath(const topology::ClusterSpec& cluster) {
  NvlsNetworkPath path;
  if (!cluster.inter_node) return path;
  // NCCL rates a NIC at its line rate (src/graph/topo.cc, mbps / 8000) and a PCIe link at its
  // width x speed (a Gen5 x16 link 64 GB/s); the path takes the slower. Grace hosts (GB200,
  // GB300, GH200) reach their NICs from the GPU over NVLink-C2C and the CPU's PCIe (NCCL's
  // PATH_P2C); elsewhere a NIC sits under the PCIe switch of the GPUs it serves, as the
  // cluster's node is built (topology/node_builder.cpp).
  const double nic_GBps = cluster.inter_node->nic_bandwidth_Gbps / 8.0;
  path.nic_GBps = cluster.pcie.bandwidth_GBps > 0.0 ? std::min(nic_GBps, cluster.pcie.bandwidth_GBps) : nic_GBps;
  path.under_gpu_switch = cluster.pcie.host_cpu != topology::HostCpu::kArm;
  return path;
}

void addNvlsFlows(CollectiveBuilder& builder, const NvlsPaths& paths, double bytes, double latency_s, sim::TaskId group,
                  sim::TaskId start, bool tree, double message_bytes, int nodes) {
  const auto& parameters = builder.parameters();
  const auto& gpu_spec = builder.cluster().spec().gpu;
  // Links run at raw x NVLink efficiency; NVLS reaches raw x nvls_efficiency with NCCL's
  // largest chunk, less with the smaller chunks it gives smaller messages.
  const double nvlink_efficiency = parameters.linkEfficiency(topology::LinkType::kNvLink, gpu_spec.key);
  const double nvls_efficiency = parameters.nvlsEfficiency(gpu_spec.key);
  const NcclGpuClass gpu_class = ncclGpuClass(gpu_spec.compute_capability);
  const auto ranks_per_node = static_cast<double>(paths.gpu_and_switch.size());
  const NvlsNetworkPath network = tree ? nvlsNetworkPath(builder.cluster().spec()) : NvlsNetworkPath{};
  const double chunk = parameters.nvlsChunkBytes(tree, message_bytes, gpu_class, ranks_per_node, nodes, network);
  const double channels = parameters.nvlsSetup(gpu_class, tree ? nodes : 1, ranks_per_node, network).channels;
  const double channel_Bps = paths.nvlink_Bps * nvls_efficiency / channels;
  const double wire =
      bytes * nvlink_efficiency / (nvls_efficiency * parameters.nvlsChunkEfficiency(chunk, channel_Bps));
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
  addNvlsFlows(builder, paths, context.request.bytes, latency, context.group, context.start, false,
               context.request.bytes, 1);
}

}  // namespace trainsim::perf::detail
