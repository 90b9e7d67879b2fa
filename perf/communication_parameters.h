// Named parameters of the NCCL-like communication model. The struct is plain data, copied
// into each CollectiveSimulator; its values come from the shipped defaults,
// configs/defaults/communication.yaml (perf::defaultCommunicationParameters,
// perf/default_parameters.h), where every value is given with its source, and a calibration
// (`--calibration`, `trainsim calibrate`) may replace any of them (docs/calibration.md). A
// default-constructed CommunicationParameters is all zeros: no collective can run on it.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "perf/measured_values.h"
#include "topology/cluster_spec.h"
#include "topology/link.h"

namespace trainsim::topology {
struct ClusterSpec;
}  // namespace trainsim::topology

namespace trainsim::perf {

// NCCL's protocols: LL (8-byte lines, 4 bytes data + 4 flag), LL128 (128-byte lines, 120
// bytes data), Simple (bulk copies with fences: best bandwidth, highest latency).
enum class Protocol : uint8_t { kLL, kLL128, kSimple };
inline constexpr std::array<Protocol, 3> kAllProtocols = {Protocol::kLL, Protocol::kLL128, Protocol::kSimple};
[[nodiscard]] std::string_view protocolName(Protocol protocol);

enum class CollectiveAlgorithm : uint8_t {
  kRing,      // NCCL ring (all-reduce = reduce-scatter + all-gather)
  kTree,      // NCCL double binary tree across nodes, chain inside a node
  kNvls,      // NVLink SHARP: reductions in the NVSwitch (single node)
  kDirect,    // point-to-point between every pair (all-to-all) or the given pairs (send/recv)
  kNvlsTree,  // NVLS inside each node, a double binary tree between nodes (NCCL's NVLS_TREE)
  kPat,       // NCCL's PAT (2.23+): all-gather / reduce-scatter with one GPU per node, log-depth latency
};
[[nodiscard]] std::string_view algorithmName(CollectiveAlgorithm algorithm);
inline constexpr std::array<CollectiveAlgorithm, 6> kAllAlgorithms = {
    CollectiveAlgorithm::kRing,   CollectiveAlgorithm::kTree,     CollectiveAlgorithm::kNvls,
    CollectiveAlgorithm::kDirect, CollectiveAlgorithm::kNvlsTree, CollectiveAlgorithm::kPat};
// The algorithm of that name (algorithmName), none for another name.
[[nodiscard]] std::optional<CollectiveAlgorithm> parseAlgorithmName(std::string_view name);

// Size classes of NCCL's tree correction: 64 B x 2^i for i below this.
inline constexpr std::size_t kTreeSizeClasses = 24;
// "64B", "128B", ..., "512KiB", "1MiB", ..., "512MiB".
[[nodiscard]] std::string treeSizeClassName(std::size_t size_class);

// NCCL's classes of GPU for its per-generation tables (tuning.cc's compCapIndex: compute
// capability below 8.0, 8.x, 9.x, 10.0 and above).
enum class NcclGpuClass : uint8_t { kVolta, kAmpere, kHopper, kBlackwell };
inline constexpr std::array<NcclGpuClass, 4> kAllNcclGpuClasses = {NcclGpuClass::kVolta, NcclGpuClass::kAmpere,
                                                                   NcclGpuClass::kHopper, NcclGpuClass::kBlackwell};
[[nodiscard]] std::string_view ncclGpuClassName(NcclGpuClass gpu_class);
// The class of a GPU of this compute capability; a GPU without one (AMD, Intel, Google) is
// taken as Hopper.
[[nodiscard]] NcclGpuClass ncclGpuClass(std::optional<double> compute_capability);

// NCCL groups per-step latencies by the kind of hop.
enum class HopClass : uint8_t { kNvLink, kPcie, kNetwork };

// NCCL 2.21.5 priced a ring's LL at half of Simple's, where earlier releases took a quarter.
inline constexpr double kNcclRingLlHalfVersion = 22105;
// NCCL 2.21.5 raised NVLS's step latency from 23 to 25 us and its most heads (NVLS
// arity) from 8 to 32.
inline constexpr double kNcclNvls2215Version = 22105;

// NCCL 2.30 tunes NVLS's channels and chunks on multi-node Blackwell (ncclNvlsTreeSm100Tuning).
inline constexpr double kNcclNvlsSm100TuningVersion = 23000;

// What NCCL's NVLS setup reads of a group's network (src/transport/nvls.cc, ncclNvlsTuning, at
// NVIDIA/nccl 5067397c): the bandwidth of a GPU's path to one NIC as its topology rates it
// (comm->minNetBw, GB/s: the slower of the NIC and the PCIe links on the way), and whether that
// path stays under the GPU's PCIe switch (NCCL's PATH_PXB or closer) rather than crossing a
// CPU. A NIC rate of 0 (no network) leaves NCCL's defaults.
struct NvlsNetworkPath {
  double nic_GBps = 0.0;
  bool under_gpu_switch = true;
};

// NCCL's NVLS setup of one communicator: the CTAs (channels) NVLS and NVLS_TREE run, NVLS's
// largest chunk and NVLS_TREE's largest chunk, bytes.
struct NvlsSetup {
  double channels = 0.0;
  double chunk_bytes = 0.0;
  double tree_max_chunk_bytes = 0.0;
};

struct CommunicationParameters {
  // Achievable fraction of a link's raw bandwidth for collective payload; the flow network
  // runs links at raw x efficiency. NVLink per GPU catalog key (nvlink_efficiency), else
  // nvlink_efficiency_default (inline GPUs, parts without a row).
  std::vector<MeasuredFraction> nvlink_efficiency;
  double nvlink_efficiency_default = 0.0;
  double infiniband_efficiency = 0.0;
  double ethernet_efficiency = 0.0;  // RoCE and Ethernet
  double pcie_efficiency = 0.0;
  double other_efficiency = 0.0;  // TPU ICI and CPU socket links
  // NVLS all-reduce algorithm bandwidth as a fraction of the NVLink bandwidth.
  double nvls_efficiency = 0.0;
  // The same per GPU catalog key where a GPU's NVLS differs; other GPUs take nvls_efficiency.
  std::vector<MeasuredFraction> nvls_efficiency_per_gpu;

  // Protocol bandwidth factors (of Simple's), by Protocol: a ring's and the other algorithms'
  // but the tree's (protocol_bandwidth_factor) and the tree's (tree_protocol_bandwidth_factor).
  // A protocol puts 1 / factor of the payload on the wire.
  std::array<double, 3> protocol_bandwidth_factor{};
  std::array<double, 3> tree_protocol_bandwidth_factor{};
  // A ring's LL factor in NCCL releases before 2.21.5 (nccl_version < kNcclRingLlHalfVersion).
  double ring_ll_bandwidth_factor_before_2_21_5 = 0.0;
  // NCCL's caps on the LL protocol's bus bandwidth, GB/s, rings and trees alike (its
  // llMaxBws): inside one node by GPU class (NcclGpuClass), across 2 nodes and more.
  std::array<double, kAllNcclGpuClasses.size()> ll_max_bus_GBps_one_node{};
  double ll_max_bus_GBps_two_nodes = 0.0;
  double ll_max_bus_GBps_more_nodes = 0.0;
  // The same on AMD hosts (topology::HostCpu::kAmd; forHostCpu).
  double ll_max_bus_GBps_amd_host_two_nodes = 0.0;
  double ll_max_bus_GBps_amd_host_more_nodes = 0.0;
  // NCCL's per-channel caps on LL128's bus bandwidth across nodes, GB/s: a ring's by GPU
  // class, a tree's by GPU class on 2 nodes [0] and on more [1].
  std::array<double, kAllNcclGpuClasses.size()> ring_ll128_max_bus_GBps_per_channel{};
  std::array<std::array<double, 2>, kAllNcclGpuClasses.size()> tree_ll128_max_bus_GBps_per_channel{};
  // Fixed latency of one collective call, microseconds, by CollectiveAlgorithm and Protocol.
  std::array<std::array<double, 3>, kAllAlgorithms.size()> base_latency_us{};
  // Latency of one pipeline step over one hop, microseconds, by HopClass and Protocol, for
  // ring-like algorithms and for trees; NVLS's step. They include the wire latency of the
  // hop as measured, on links with the default latencies (topology/link_defaults.h); see
  // perf/collective_builder.h.
  std::array<std::array<double, 3>, 3> ring_step_latency_us{};
  std::array<std::array<double, 3>, 3> tree_step_latency_us{};
  double nvls_step_latency_us = 0.0;
  // NVLS's step in NCCL releases before 2.21.5 (nccl_version < kNcclNvls2215Version).
  double nvls_step_latency_us_before_2_21_5 = 0.0;
  // A network step of NVLS_TREE's tree between nodes, microseconds.
  double nvls_tree_network_step_latency_us = 0.0;
  // NVLS chunks (NCCL's enqueue.cc): the CTAs NVLS runs by GPU class (NcclGpuClass), inside one
  // node [0] and for NVLS_TREE across nodes [1]; the largest chunk (NCCL_NVLS_CHUNKSIZE) and
  // NVLS_TREE's largest from four nodes on; the time one channel spends on each chunk beyond
  // moving it, microseconds, which makes small chunks slower (nvlsChunkEfficiency).
  std::array<std::array<double, 2>, kAllNcclGpuClasses.size()> nvls_channels{};
  double nvls_max_chunk_bytes = 0.0;
  // NVLS's most heads (NCCL_MAX_NVLS_ARITY) from 2.21.5 and before.
  double nvls_max_heads = 0.0;
  double nvls_max_heads_before_2_21_5 = 0.0;
  double nvls_tree_max_chunk_bytes_four_nodes = 0.0;
  double nvls_chunk_overhead_us = 0.0;
  // LL's intra-node step latency is multiplied by this when the collective spans nodes
  // (NCCL 2.7.3-2.17; 1 from 2.18).
  double ll_multi_node_intra_step_factor = 0.0;
  // NCCL 2.18+: an intra-node step of a ring that spans nodes costs at least the network
  // proxy's overhead of posting it, microseconds, that many times for Simple.
  double ring_net_overhead_us = 0.0;
  double ring_net_overhead_simple_factor = 0.0;
  // The net overhead on AMD hosts (forHostCpu).
  double ring_net_overhead_amd_host_us = 0.0;

  // Pipeline fill: bytes of payload per chunk by Protocol, and the channels and the copy
  // rate of one channel (one CTA) that carry them.
  std::array<double, 3> chunk_bytes{};
  // NCCL's correction of its tree model at medium sizes, by Protocol and size class
  // (64 B x 2^i, i = 0..23; treeSizeClassName): the fraction of the modelled bandwidth that
  // trees reach. 1 above the table.
  std::array<std::array<double, kTreeSizeClasses>, 3> tree_size_correction{};
  double pipeline_channels = 0.0;
  double channel_bandwidth_GBps = 0.0;

  // NCCL's tree model: tree bus bandwidth is tree_bandwidth_factor x the ring's, at most the
  // tree's channels x the per-channel cap of the GPU's class (NcclGpuClass) on 2 nodes [0]
  // or on more [1], GB/s; its algorithm bandwidth is tree_algorithm_bandwidth_ratio x its
  // bus bandwidth.
  double tree_bandwidth_factor = 0.0;
  std::array<std::array<double, 2>, kAllNcclGpuClasses.size()> tree_max_bus_GBps_per_channel{};
  // A cap on the whole tree's bus bandwidth up to 2 nodes and beyond, GB/s, besides the
  // per-channel ones; 0 = none.
  double tree_max_bus_GBps_two_nodes = 0.0;
  double tree_max_bus_GBps_more_nodes = 0.0;
  double tree_algorithm_bandwidth_ratio = 0.0;
  // NCCL's channels across nodes (its ring graph's, which its tree graph takes): one per NIC,
  // no more than it takes to fill the GPUs' NVLink at a NIC's rate, doubled
  // (ncclTopoDupChannels) where one channel carries at least channel_duplication_min_GBps (on
  // GPUs of compute capability above 8.0 only where it carries at least
  // channel_duplication_full_GBps or there are at most channel_duplication_max_channels), at
  // most nccl_max_channels (NcclTuner::ncclChannels).
  double nccl_max_channels = 0.0;
  double channel_duplication_min_GBps = 0.0;
  double channel_duplication_full_GBps = 0.0;
  double channel_duplication_max_channels = 0.0;

  // Host-side cost of launching a collective and waiting for it, microseconds.
  double launch_overhead_us = 0.0;

  // The NCCL release whose tuner is modelled, as NCCL_VERSION_CODE (major x 10000 + minor x
  // 100 + patch: 22304 is 2.23.4). Rules that NCCL introduced at a release apply from it
  // (ncclAtLeast).
  double nccl_version = 0.0;
  // PAT (all-gather and reduce-scatter with one GPU per node, NCCL 2.23+): its bus bandwidth
  // as a fraction of the ring's, and its latency beyond base_latency_us.pat: log2(nodes)
  // network steps at the tree's network step latency over pat_log_step_latency_divisor, plus
  // pat_per_rank_latency_us per rank.
  double pat_bandwidth_factor = 0.0;
  double pat_log_step_latency_divisor = 0.0;
  double pat_per_rank_latency_us = 0.0;

  // Whether the modelled NCCL is `version_code` (NCCL_VERSION_CODE) or later.
  [[nodiscard]] bool ncclAtLeast(double version_code) const { return nccl_version >= version_code; }

  [[nodiscard]] double linkEfficiency(topology::LinkType type, std::string_view gpu_key) const;
  // The same on `cluster`'s links: its network links at the efficiency measured on the
  // system where its inter_node section gives one.
  [[nodiscard]] double linkEfficiency(topology::LinkType type, const topology::ClusterSpec& cluster) const;
  // NVLS algorithm bandwidth over NVLink bandwidth on this GPU.
  [[nodiscard]] double nvlsEfficiency(std::string_view gpu_key) const;
  // NCCL's NVLS setup of a communicator of `ranks_per_node` GPUs of `gpu_class` on each of
  // `nodes` nodes, whose GPUs reach the network over `path`.
  [[nodiscard]] NvlsSetup nvlsSetup(NcclGpuClass gpu_class, int nodes, double ranks_per_node,
                                    const NvlsNetworkPath& path = {}) const;
  // The chunk NCCL gives an NVLS (tree = false) or NVLS_TREE all-reduce of `bytes` over
  // `ranks_per_node` GPUs a node, on `nodes` nodes of GPUs of `gpu_class`, bytes.
  [[nodiscard]] double nvlsChunkBytes(bool tree, double bytes, NcclGpuClass gpu_class, double ranks_per_node, int nodes,
                                      const NvlsNetworkPath& path = {}) const;
  // The share of its largest chunk's rate NVLS reaches with chunks of `chunk` bytes, each
  // channel moving `channel_Bps` and spending nvls_chunk_overhead_us on every chunk.
  [[nodiscard]] double nvlsChunkEfficiency(double chunk, double channel_Bps) const;
  // NCCL's cap on one tree channel's bus bandwidth over `nodes` nodes (>= 2), bytes/s.
  [[nodiscard]] double treeMaxBusPerChannel(NcclGpuClass gpu_class, int nodes) const;
  // The fraction of Simple's bandwidth `protocol` reaches in `algorithm`.
  [[nodiscard]] double protocolBandwidthFactor(CollectiveAlgorithm algorithm, Protocol protocol) const;
  // NCCL's cap on `protocol`'s bus bandwidth in a ring or a tree over `nodes` nodes of
  // `channels` channels (NCCL's channels across nodes), bytes/s; none for Simple, for the
  // other algorithms and for LL128 inside one node (NCCL's channel count there is not
  // modelled).
  [[nodiscard]] std::optional<double> protocolMaxBus(CollectiveAlgorithm algorithm, Protocol protocol,
                                                     NcclGpuClass gpu_class, int nodes, int channels) const;
};

// The parameters as NCCL's tuner takes them on hosts of `cpu`: on AMD hosts the net overhead
// and LL's caps across nodes are the AMD ones (tuning.cc: getNetOverhead, llMaxBws' AMD row);
// Intel, Arm, other and unknown hosts keep the defaults (NCCL's other branch).
[[nodiscard]] CommunicationParameters forHostCpu(CommunicationParameters parameters, topology::HostCpu cpu);
// A parameter that NCCL's tuner replaces on AMD hosts, and the one it takes there.
struct AmdHostParameter {
  std::string_view name;
  std::string_view amd_name;
  double CommunicationParameters::*field;
  double CommunicationParameters::*amd_field;
};
// The parameters forHostCpu replaces on AMD hosts.
[[nodiscard]] std::span<const AmdHostParameter> amdHostParameters();

}  // namespace trainsim::perf
