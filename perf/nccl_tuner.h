// NCCL's tuner for this cluster: for a collective on a group of GPUs it picks the algorithm,
// protocol and number of channels with the smallest closed-form time estimate (NCCL's
// tuning.cc model: launch overhead, a base latency per algorithm/protocol, per-step
// latencies by hop class, the pipeline fill and the bytes over the group's bottleneck bus
// bandwidth), unless the request forces them.
//
// The tuner also owns the view of the group that the estimate and the flows built from the
// choice (CollectiveBuilder) share: its GPUs by node, the class of a hop and how much
// slower or faster a route is than the links NCCL's step latencies were measured on.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "base/expected.h"
#include "perf/collective.h"
#include "perf/communication_parameters.h"
#include "topology/cluster.h"
#include "topology/router.h"

namespace trainsim::perf {

// The group's GPUs by node, in order of first appearance.
struct GroupLayout {
  std::vector<std::vector<int64_t>> ranks_by_node;
  int64_t size = 0;
  int max_per_node = 0;
  // The nodes' GPUs form a full mesh of point-to-point links (fabric nvlink_mesh): rings
  // spread their channels over the mesh's links (perf/mesh_rings.h).
  bool mesh = false;
  // The cluster is a chip-level torus (topology: torus, TPU slices): its dimensions, x fastest
  // in rank order; ring channels then follow the torus's links (perf/torus_rings.h). Empty
  // otherwise.
  std::vector<int> torus_dims;
  [[nodiscard]] bool singleNode() const { return ranks_by_node.size() == 1; }
  [[nodiscard]] int nodes() const { return static_cast<int>(ranks_by_node.size()); }
};

// What the slowest hop of each class costs a step beyond NCCL's measured step latency: its
// route's latency beyond the reference (NcclTuner::latencyExcessSeconds), seconds;
// negative on faster links.
struct StepLatencyExcess {
  double intra_s = 0.0;
  double network_s = 0.0;
};

// What the tuner's closed-form estimate needs to know about the links under a group.
struct GroupHardware {
  double intra_Bps = 0.0;              // effective intra-node bandwidth per GPU, per direction, smallest over the group
  double network_Bps = 0.0;            // effective network bandwidth per node, smallest over the group's nodes; 0: none
  HopClass intra = HopClass::kNvLink;  // the class of the group's intra-node hops
  StepLatencyExcess excess;            // latency of an intra-node and a network hop beyond the defaults (see above)
  int nics_per_node = 0;               // smallest over the group's nodes
  // The same at the links' nominal rates (no efficiency), as NCCL's topology search sees them.
  double nominal_intra_Bps = 0.0;
  double nominal_network_Bps = 0.0;
};

class NcclTuner {
 public:
  NcclTuner(const topology::Cluster& cluster, topology::Router& router, const CommunicationParameters& parameters);

  // Validates the request (ranks in range and distinct, a forced algorithm that exists
  // for this op and cluster) and picks the algorithm and protocol.
  [[nodiscard]] Expected<CollectiveChoice> choose(const CollectiveRequest& request) const;

  [[nodiscard]] GroupLayout layout(const std::vector<int64_t>& ranks) const;
  [[nodiscard]] HopClass hopClass(int64_t from_rank, int64_t to_rank) const;
  // The latency of the route from_rank -> to_rank beyond its reference
  // (topology::Route::reference_latency_ps: its hops at the latencies NCCL's step latencies
  // were measured on), seconds; negative for faster links.
  [[nodiscard]] double latencyExcessSeconds(int64_t from_rank, int64_t to_rank) const;
  // The same for a device-to-device route (GPU -> NVSwitch for NVLS).
  [[nodiscard]] double deviceLatencyExcessSeconds(topology::DeviceId from, topology::DeviceId to) const;

 private:
  [[nodiscard]] std::vector<CollectiveAlgorithm> candidates(CollectiveOp op, const GroupLayout& layout) const;
  [[nodiscard]] GroupHardware hardware(const GroupLayout& layout) const;
  [[nodiscard]] double estimateTime(const CollectiveRequest& request, const GroupLayout& layout,
                                    const GroupHardware& hardware, CollectiveAlgorithm algorithm,
                                    Protocol protocol) const;
  [[nodiscard]] static int channels(CollectiveAlgorithm algorithm, const GroupLayout& layout,
                                    const GroupHardware& hardware);
  // NCCL's channel count for a ring or tree across nodes (its graph search's, which its tuner
  // multiplies by per-channel caps): one per NIC the group's GPUs use, no more than it takes
  // to fill the GPUs' NVLink at a NIC's rate, doubled where NCCL duplicates channels, at most
  // nccl_max_channels.
  [[nodiscard]] int ncclChannels(const GroupLayout& layout, const GroupHardware& hardware) const;
  // NCCL's cap on a tree's bus bandwidth over the group: ncclChannels x the per-channel cap of
  // the GPU's class and the node count, bytes/s.
  [[nodiscard]] double treeMaxBusBandwidth(const GroupLayout& layout, const GroupHardware& hardware) const;
  // NCCL's cap on `protocol`'s bus bandwidth for `algorithm` on this group
  // (CommunicationParameters::protocolMaxBus), bytes/s; none where NCCL has none, and on GPUs
  // other than NVIDIA's.
  [[nodiscard]] std::optional<double> protocolMaxBusBandwidth(const GroupLayout& layout, const GroupHardware& hardware,
                                                              CollectiveAlgorithm algorithm, Protocol protocol) const;
  // Whether the cluster's inter_node.nccl_protocols (NCCL_PROTO) lets NCCL choose `protocol`.
  [[nodiscard]] bool protocolAllowed(Protocol protocol) const {
    return allowed_protocols_[static_cast<std::size_t>(protocol)];
  }
  // The tree's bus bandwidth as NCCL's tuner prices it on 2 nodes, in the units of the ring's
  // `ring_bus_Bps` (estimateTime's per-GPU bottleneck); none where that pricing is not
  // modelled (the definition says which).
  [[nodiscard]] std::optional<double> twoNodeTreeBusBandwidth(const GroupLayout& layout, const GroupHardware& hardware,
                                                              double ring_bus_Bps) const;
  // The network bandwidth one GPU of the group has across nodes, as the channels use it.
  [[nodiscard]] double groupNetworkBandwidthPerGpu(const GroupLayout& layout, const GroupHardware& hardware) const;
  [[nodiscard]] bool patAvailable(const GroupLayout& layout) const;
  [[nodiscard]] bool nvlsAvailable(const GroupLayout& layout) const;
  [[nodiscard]] bool nvlsTreeAvailable(const GroupLayout& layout) const;
  // The nodes' NVSwitch reduces in the switch (NVLS): intra_node.nvls on a switched node.
  [[nodiscard]] bool nvlsNodes() const;
  // Explicit graphs: the GPU's effective (or nominal) bandwidth into the scale-up fabric
  // (NVLink/ICI links; PCIe links where it has none), and per node the effective and nominal
  // bandwidth and the number of NICs of its network links.
  [[nodiscard]] double explicitGpuBandwidth(topology::DeviceId gpu, bool nominal = false) const;
  void measureExplicitNetwork();

  const topology::Cluster& cluster_;
  topology::Router& router_;
  // The parameters as NCCL prices the cluster's hosts (forHostCpu).
  const CommunicationParameters parameters_;
  std::array<bool, kAllProtocols.size()> allowed_protocols_{};  // by Protocol
  std::vector<double> explicit_network_Bps_;                    // by node, explicit graphs only
  std::vector<double> explicit_network_nominal_Bps_;            // the same at the links' nominal rates
  std::vector<int> explicit_nics_;                              // by node, explicit graphs only
};

// NCCL's latency model, shared by the tuner's estimate and the flows of the algorithm files
// (collective_*.cpp), so that both see the same latencies.
namespace detail {

// The NCCL release (NCCL_VERSION_CODE) that brought PAT and the tree's network latency for
// collectives with one GPU per node: 2.23.4.
inline constexpr double kNcclPatVersion = 22304;

// Pipeline-fill latency of `steps` steps of which `network_steps` cross the network,
// the others an intra-node hop of class `intra` (NCCL tuning.cc's latency model). Each
// step also costs its class's excess, and at least nothing. With one GPU per node the
// network steps cost the tree's network latency from NCCL 2.23.4 on.
[[nodiscard]] double stepLatencySeconds(const CommunicationParameters& parameters, CollectiveAlgorithm algorithm,
                                        Protocol protocol, HopClass intra, double intra_steps, double network_steps,
                                        bool multi_node, StepLatencyExcess excess, bool one_gpu_per_node = false);

// PAT's latency beyond its base latency over `nodes` nodes of one GPU each (`ranks` of them),
// the slowest network hop `network_excess_s` beyond the reference.
[[nodiscard]] double patLatencySeconds(const CommunicationParameters& parameters, int nodes, double ranks,
                                       double network_excess_s);

// Pipeline fill: (steps - 1) chunks crossing a hop at one channel's rate, the chunk being
// NCCL's buffer slot or the per-step data spread over the pipeline channels if smaller.
[[nodiscard]] double pipelineFillSeconds(const CommunicationParameters& parameters, Protocol protocol, double steps,
                                         double bytes_per_step);

// The fraction of its modelled bandwidth a tree or NVLS_TREE all-reduce of `bytes` reaches
// (CommunicationParameters::tree_size_correction; 1 for other algorithms and large sizes).
[[nodiscard]] double treeSizeCorrection(const CommunicationParameters& parameters, CollectiveAlgorithm algorithm,
                                        Protocol protocol, double bytes);

}  // namespace detail

}  // namespace trainsim::perf
