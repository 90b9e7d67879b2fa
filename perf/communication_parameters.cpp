#include "perf/communication_parameters.h"

#include <algorithm>
#include <array>

#include "topology/cluster_spec.h"

namespace trainsim::perf {

std::string_view protocolName(Protocol protocol) {
  switch (protocol) {
    case Protocol::kLL: return "LL";
    case Protocol::kLL128: return "LL128";
    case Protocol::kSimple: return "Simple";
  }
  return "unknown";
}

std::string_view algorithmName(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::kRing: return "ring";
    case CollectiveAlgorithm::kTree: return "tree";
    case CollectiveAlgorithm::kNvls: return "nvls";
    case CollectiveAlgorithm::kDirect: return "direct";
    case CollectiveAlgorithm::kNvlsTree: return "nvls_tree";
    case CollectiveAlgorithm::kPat: return "pat";
  }
  return "unknown";
}

std::string treeSizeClassName(std::size_t size_class) {
  const std::size_t shift = size_class + 6;  // 64 B = 2^6
  if (shift < 10) return std::to_string(std::size_t{1} << shift) + "B";
  if (shift < 20) return std::to_string(std::size_t{1} << (shift - 10)) + "KiB";
  return std::to_string(std::size_t{1} << (shift - 20)) + "MiB";
}

std::optional<CollectiveAlgorithm> parseAlgorithmName(std::string_view name) {
  for (CollectiveAlgorithm algorithm : kAllAlgorithms) {
    if (algorithmName(algorithm) == name) return algorithm;
  }
  return std::nullopt;
}

std::string_view ncclGpuClassName(NcclGpuClass gpu_class) {
  switch (gpu_class) {
    case NcclGpuClass::kVolta: return "volta";
    case NcclGpuClass::kAmpere: return "ampere";
    case NcclGpuClass::kHopper: return "hopper";
    case NcclGpuClass::kBlackwell: return "blackwell";
  }
  return "unknown";
}

NcclGpuClass ncclGpuClass(std::optional<double> compute_capability) {
  // NVIDIA/nccl src/graph/tuning.cc (5067397c), ncclTopoTuneModel: "compCapIndex = minCompCap
  // >= 100 ? BLACKWELL : (minCompCap >= 90 ? HOPPER : minCompCap >= 80 ? AMPERE : VOLTA)".
  if (!compute_capability) return NcclGpuClass::kHopper;
  if (*compute_capability >= 10.0) return NcclGpuClass::kBlackwell;
  if (*compute_capability >= 9.0) return NcclGpuClass::kHopper;
  if (*compute_capability >= 8.0) return NcclGpuClass::kAmpere;
  return NcclGpuClass::kVolta;
}

double CommunicationParameters::treeMaxBusPerChannel(NcclGpuClass gpu_class, int nodes) const {
  return tree_max_bus_GBps_per_channel[static_cast<std::size_t>(gpu_class)][nodes <= 2 ? 0 : 1] * 1e9;
}

double CommunicationParameters::protocolBandwidthFactor(CollectiveAlgorithm algorithm, Protocol protocol) const {
  const auto p = static_cast<std::size_t>(protocol);
  if (algorithm == CollectiveAlgorithm::kTree) return tree_protocol_bandwidth_factor[p];
  if (protocol == Protocol::kLL && !ncclAtLeast(kNcclRingLlHalfVersion)) return ring_ll_bandwidth_factor_before_2_21_5;
  return protocol_bandwidth_factor[p];
}

std::optional<double> CommunicationParameters::protocolMaxBus(CollectiveAlgorithm algorithm, Protocol protocol,
                                                              NcclGpuClass gpu_class, int nodes, int channels) const {
  // NVIDIA/nccl src/graph/tuning.cc (5067397c), ncclTopoTuneModel: "busBw = std::min(llMaxBw,
  // busBw * .5)" (ring LL), "std::min(busBw * 1.0 / 3.8, llMaxBw)" (tree LL), and LL128 at most
  // "graphs[a]->nChannels * perChMaxRingLL128Bw" (ring) or "* perChMaxTreeLL128Bw" (tree).
  if (algorithm != CollectiveAlgorithm::kRing && algorithm != CollectiveAlgorithm::kTree) return std::nullopt;
  const auto c = static_cast<std::size_t>(gpu_class);
  if (protocol == Protocol::kLL) {
    const double GBps = nodes <= 1   ? ll_max_bus_GBps_one_node[c]
                        : nodes == 2 ? ll_max_bus_GBps_two_nodes
                                     : ll_max_bus_GBps_more_nodes;
    return GBps * 1e9;
  }
  if (protocol == Protocol::kLL128 && nodes > 1) {
    const double per_channel_GBps = algorithm == CollectiveAlgorithm::kRing
                                        ? ring_ll128_max_bus_GBps_per_channel[c]
                                        : tree_ll128_max_bus_GBps_per_channel[c][nodes <= 2 ? 0 : 1];
    return static_cast<double>(channels) * per_channel_GBps * 1e9;
  }
  return std::nullopt;
}

std::span<const AmdHostParameter> amdHostParameters() {
  using P = CommunicationParameters;
  static constexpr AmdHostParameter kParameters[] = {
      {"ring_net_overhead_us", "ring_net_overhead_amd_host_us", &P::ring_net_overhead_us,
       &P::ring_net_overhead_amd_host_us},
      {"ll_max_bus_GBps_two_nodes", "ll_max_bus_GBps_amd_host_two_nodes", &P::ll_max_bus_GBps_two_nodes,
       &P::ll_max_bus_GBps_amd_host_two_nodes},
      {"ll_max_bus_GBps_more_nodes", "ll_max_bus_GBps_amd_host_more_nodes", &P::ll_max_bus_GBps_more_nodes,
       &P::ll_max_bus_GBps_amd_host_more_nodes},
  };
  return kParameters;
}

CommunicationParameters forHostCpu(CommunicationParameters parameters, topology::HostCpu cpu) {
  if (cpu == topology::HostCpu::kAmd) {
    for (const AmdHostParameter& parameter : amdHostParameters())
      parameters.*parameter.field = parameters.*parameter.amd_field;
  }
  return parameters;
}

double CommunicationParameters::nvlsEfficiency(std::string_view gpu_key) const {
  for (const MeasuredFraction& row : nvls_efficiency_per_gpu) {
    if (row.gpu_key == gpu_key) return row.fraction;
  }
  return nvls_efficiency;
}

NvlsSetup CommunicationParameters::nvlsSetup(NcclGpuClass gpu_class, int nodes, double ranks_per_node,
                                             const NvlsNetworkPath& path) const {
  constexpr double kKiB = 1024.0;
  NvlsSetup setup;
  setup.channels = nvls_channels[static_cast<std::size_t>(gpu_class)][nodes > 1 ? 1 : 0];
  setup.chunk_bytes = nvls_max_chunk_bytes;
  double tree_max = 0.0;  // 0: ncclNvlsTuning's fallback below
  if (gpu_class == NcclGpuClass::kBlackwell && nodes >= 2 && ncclAtLeast(kNcclNvlsSm100TuningVersion)) {
    // NCCL 2.30's multi-node Blackwell tuning (ncclNvlsTreeSm100Tuning, src/transport/nvls.cc
    // at 5067397c): channels, chunk and NVLS_TREE's largest chunk by node count, GPUs a node
    // (NCCL's minLocalRanks) and the NIC's rate (minNetBw: 48 GB/s and up is a 400 Gb/s NIC,
    // 96 and up an 800 Gb/s one).
    const double nic = path.nic_GBps;
    const double ppn = ranks_per_node;
    if (nodes == 2 && nic >= 48.0) {
      setup.channels = 32.0;
      tree_max = 128.0 * kKiB;
      if (ppn <= 4.0) {
        setup.chunk_bytes = 256.0 * kKiB;
        tree_max = 256.0 * kKiB;
      } else if (ppn >= 16.0 || (ppn <= 8.0 && path.under_gpu_switch && nic < 96.0)) {
        tree_max = 64.0 * kKiB;
      }
    } else if (nic >= 96.0) {
      if (ppn <= 8.0) {
        setup.channels = 24.0;
        setup.chunk_bytes = 256.0 * kKiB;
        tree_max = 256.0 * kKiB;
      } else {
        setup.channels = 32.0;
        tree_max = ppn < 32.0 ? 128.0 * kKiB : 64.0 * kKiB;
      }
    } else if (nic >= 48.0) {
      setup.channels = 24.0;
      tree_max = path.under_gpu_switch ? 64.0 * kKiB : 128.0 * kKiB;
    }
  }
  // ncclNvlsTuning's fallback (NCCL_NVLSTREE_MAX_CHUNKSIZE unset): NVLS_TREE's largest chunk is
  // 64 KiB from four nodes on, else NVLS's.
  setup.tree_max_chunk_bytes =
      tree_max > 0.0
          ? tree_max
          : (nodes >= 4 ? std::min(setup.chunk_bytes, nvls_tree_max_chunk_bytes_four_nodes) : setup.chunk_bytes);
  return setup;
}

double CommunicationParameters::nvlsChunkBytes(bool tree, double bytes, NcclGpuClass gpu_class, double ranks_per_node,
                                               int nodes, const NvlsNetworkPath& path) const {
  // NVIDIA/nccl src/enqueue.cc (5067397c; the NVLS rule is the same from v2.18.5), the chunk
  // of an NVLS or NVLS_TREE collective: concurrentOps = nChannels x nvls.nHeads (a head per
  // GPU of the node, at most NCCL_MAX_NVLS_ARITY; across nodes NCCL takes a head per NIC with
  // a GPU of its own, one per GPU here), and the chunk halves while the message is below a
  // multiple of concurrentOps x chunk. NVLS_TREE starts from min(nvlsChunkSize,
  // nvlsTreeMaxChunkSize) (nvlsSetup; earlier releases than 2.21.5 start NVLS_TREE at the
  // Simple buffer's step, 512 KiB, not modelled).
  const NvlsSetup setup = nvlsSetup(gpu_class, tree ? nodes : 1, ranks_per_node, path);
  const double heads =
      std::min(ranks_per_node, ncclAtLeast(kNcclNvls2215Version) ? nvls_max_heads : nvls_max_heads_before_2_21_5);
  const double concurrent_ops = setup.channels * heads;
  struct Step {
    double multiple;
    double chunk;
  };
  double chunk = tree ? std::min(setup.chunk_bytes, setup.tree_max_chunk_bytes) : setup.chunk_bytes;
  const std::array<Step, 4> tree_steps{{{32.0, 262144.0}, {16.0, 131072.0}, {4.0, 65536.0}, {1.0, 32768.0}}};
  const std::array<Step, 3> nvls_steps{{{64.0, 65536.0}, {8.0, 32768.0}, {2.0, 16384.0}}};
  auto apply = [&](const auto& steps) {
    for (const Step& step : steps) {
      if (bytes < step.multiple * concurrent_ops * chunk && chunk > step.chunk) chunk = step.chunk;
    }
  };
  if (tree) {
    apply(tree_steps);
  } else {
    apply(nvls_steps);
  }
  return chunk;
}

double CommunicationParameters::nvlsChunkEfficiency(double chunk, double channel_Bps) const {
  // A channel moves a chunk in chunk / channel_Bps and spends nvls_chunk_overhead_us on it
  // besides (the GPUs' handshake before the switch reduces and multicasts it); the NVLS
  // efficiency is measured at the largest chunk, so the share is relative to that one.
  const double overhead_bytes = nvls_chunk_overhead_us * 1e-6 * channel_Bps;
  return (1.0 + overhead_bytes / nvls_max_chunk_bytes) / (1.0 + overhead_bytes / chunk);
}

double CommunicationParameters::linkEfficiency(topology::LinkType type, std::string_view gpu_key) const {
  using topology::LinkType;
  switch (type) {
    case LinkType::kNvLink:
      for (const MeasuredFraction& row : nvlink_efficiency) {
        if (row.gpu_key == gpu_key) return row.fraction;
      }
      return nvlink_efficiency_default;
    case LinkType::kInfiniBand: return infiniband_efficiency;
    case LinkType::kRoce:
    case LinkType::kEthernet: return ethernet_efficiency;
    case LinkType::kPcie: return pcie_efficiency;
    case LinkType::kIci:
    case LinkType::kSocketInterconnect: return other_efficiency;
  }
  return other_efficiency;
}

double CommunicationParameters::linkEfficiency(topology::LinkType type, const topology::ClusterSpec& cluster) const {
  using topology::LinkType;
  const bool network = type == LinkType::kInfiniBand || type == LinkType::kRoce || type == LinkType::kEthernet;
  if (network && cluster.inter_node && cluster.inter_node->efficiency) return *cluster.inter_node->efficiency;
  return linkEfficiency(type, cluster.gpu.key);
}

}  // namespace trainsim::perf
