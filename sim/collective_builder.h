// Expands collectives into flows on a TaskGraph, the way NCCL would run them on this
// cluster: it picks the algorithm and protocol (NCCL's tuner: the smallest closed-form time
// estimate, unless forced), lays out rings / trees / NVLS over the group's GPUs, and adds
// one flow per pipelined edge and channel.
//
// The flow model is the steady state of NCCL's chunk pipeline: every edge of a ring (or
// tree) carries, as one flow, all the bytes it moves during the collective; all edges run
// concurrently and share links with everything else in the flow network. The pipeline fill
// (the first chunk travelling every step of the algorithm) is the flows' latency: the sum
// of NCCL's per-step latencies over the steps, by hop class (NVLink, PCIe, network). A
// fixed base latency per algorithm/protocol and the launch overhead precede the flows.
// NCCL's step latencies were measured on hardware whose links have the default latencies
// and on InfiniBand (topology::defaults::referenceLinkLatencyPs); a step whose route is
// slower or faster than that (intra_node.latency_us, pcie.latency_us, inter_node.latency_us
// and protocol, an explicit graph's link latency_us) costs the difference more or less,
// never less than nothing.
// Protocol overhead (LL, LL128) scales the bytes on the wire. So a ring all-reduce of S
// bytes on n GPUs of one switch takes overhead + 2(n-1) step latencies + 2(n-1)/n S / B.
#pragma once

#include <vector>

#include "base/expected.h"
#include "sim/collective.h"
#include "sim/communication_parameters.h"
#include "sim/task_graph.h"
#include "topology/cluster.h"
#include "topology/router.h"

namespace trainsim::sim {

// The group's GPUs by node, in order of first appearance.
struct GroupLayout {
  std::vector<std::vector<int64_t>> ranks_by_node;
  int64_t size = 0;
  int max_per_node = 0;
  [[nodiscard]] bool singleNode() const { return ranks_by_node.size() == 1; }
  [[nodiscard]] int nodes() const { return static_cast<int>(ranks_by_node.size()); }
};

// What the slowest hop of each class costs a step beyond NCCL's measured step latency: its
// route's latency beyond the reference (CollectiveBuilder::latencyExcessSeconds), seconds;
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
};

class CollectiveBuilder {
 public:
  CollectiveBuilder(const topology::Cluster& cluster, topology::Router& router, TaskGraph& graph,
                    const CommunicationParameters& parameters);

  // Validates the request (ranks in range and distinct, a forced algorithm that exists
  // for this op and cluster) and picks the algorithm and protocol.
  [[nodiscard]] Expected<CollectiveChoice> choose(const CollectiveRequest& request) const;

  // Adds the collective as a group task whose children are its flows; returns the group.
  TaskId add(const CollectiveRequest& request, const CollectiveChoice& choice, TaskIds dependencies = {},
             TaskOptions options = {});

  [[nodiscard]] GroupLayout layout(const std::vector<int64_t>& ranks) const;
  [[nodiscard]] const CommunicationParameters& parameters() const { return parameters_; }

  // Effective capacities (raw bandwidth x efficiency) of the cluster's links for a FlowNetwork.
  [[nodiscard]] static std::vector<double> effectiveCapacities(const topology::Cluster& cluster,
                                                               const CommunicationParameters& parameters);

  // Used by the algorithm files (collective_*.cpp).
  struct Edge {
    int64_t from_rank;
    int64_t to_rank;
    // When >= 0, the flow is routed from_rank -> via_rank -> to_rank: a ring leaving a node
    // through another GPU's NIC (NCCL's PXN), see collective_ring.cpp.
    int64_t via_rank = -1;
  };
  // One flow per edge (routed through via_rank when set), each with `bytes`, all with latency `latency_s`, children of
  // `group` depending on `after`.
  void addFlows(const std::vector<Edge>& edges, double bytes, double latency_s, TaskId group, TaskId after,
                double rate_cap_Bps = kNoRateCap);
  // A flow from a GPU to a device that is not a GPU (the NVSwitch for NVLS) and back.
  void addDeviceFlow(topology::DeviceId from, topology::DeviceId to, double bytes, double latency_s, TaskId group,
                     TaskId after);
  [[nodiscard]] HopClass hopClass(int64_t from_rank, int64_t to_rank) const;
  // The latency of the route from_rank -> to_rank beyond its reference
  // (topology::Route::reference_latency_ps: its hops at the latencies NCCL's step latencies
  // were measured on), seconds; negative for faster links.
  [[nodiscard]] double latencyExcessSeconds(int64_t from_rank, int64_t to_rank) const;
  // The same for a device-to-device route (GPU -> NVSwitch for NVLS).
  [[nodiscard]] double deviceLatencyExcessSeconds(topology::DeviceId from, topology::DeviceId to) const;
  [[nodiscard]] const topology::Cluster& cluster() const { return cluster_; }

 private:
  [[nodiscard]] std::vector<CollectiveAlgorithm> candidates(CollectiveOp op, const GroupLayout& layout) const;
  [[nodiscard]] GroupHardware hardware(const GroupLayout& layout) const;
  [[nodiscard]] double estimateTime(const CollectiveRequest& request, const GroupLayout& layout,
                                    const GroupHardware& hardware, CollectiveAlgorithm algorithm,
                                    Protocol protocol) const;
  [[nodiscard]] static int channels(CollectiveAlgorithm algorithm, const GroupLayout& layout,
                                    const GroupHardware& hardware);
  [[nodiscard]] bool nvlsAvailable(const GroupLayout& layout) const;
  // Explicit graphs: the GPU's effective bandwidth into the scale-up fabric (NVLink/ICI
  // links; PCIe links where it has none), and per node the effective bandwidth and the
  // number of NICs of its network links.
  [[nodiscard]] double explicitGpuBandwidth(topology::DeviceId gpu) const;
  void measureExplicitNetwork();

  const topology::Cluster& cluster_;
  topology::Router& router_;
  TaskGraph& graph_;
  const CommunicationParameters& parameters_;
  std::vector<double> explicit_network_Bps_;  // by node, explicit graphs only
  std::vector<int> explicit_nics_;            // by node, explicit graphs only
};

}  // namespace trainsim::sim
