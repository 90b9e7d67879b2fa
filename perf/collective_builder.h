// Expands collectives into flows on a TaskGraph, the way NCCL would run them on this
// cluster: it picks the algorithm and protocol through NcclTuner (nccl_tuner.h), lays out
// rings / trees / NVLS over the group's GPUs, and adds one flow per pipelined edge and
// channel.
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

#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "base/expected.h"
#include "perf/collective.h"
#include "perf/communication_parameters.h"
#include "perf/nccl_tuner.h"
#include "sim/task_graph.h"
#include "topology/cluster.h"
#include "topology/router.h"

namespace trainsim::perf {

class CollectiveBuilder {
 public:
  CollectiveBuilder(const topology::Cluster& cluster, topology::Router& router, sim::TaskGraph& graph,
                    const CommunicationParameters& parameters);

  // Validates the request (ranks in range and distinct, a forced algorithm that exists
  // for this op and cluster) and picks the algorithm and protocol.
  [[nodiscard]] Expected<CollectiveChoice> choose(const CollectiveRequest& request) const {
    return tuner_.choose(request);
  }

  // Adds the collective as a group task whose children are its flows; returns the group.
  sim::TaskId add(const CollectiveRequest& request, const CollectiveChoice& choice, sim::TaskIds dependencies = {},
                  sim::TaskOptions options = {});

  [[nodiscard]] GroupLayout layout(const std::vector<int64_t>& ranks) const { return tuner_.layout(ranks); }
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
  void addFlows(const std::vector<Edge>& edges, double bytes, double latency_s, sim::TaskId group, sim::TaskId after,
                double rate_cap_Bps = sim::kNoRateCap);
  // The routes of flows that run `edges` bundled by node pair: the edges between the same
  // two nodes (in that direction) run as one bundle (FlowNetwork, "Bundles"), a flow whose
  // links carry as many members as cross them, all at one rate. Edges without a route (a
  // GPU to itself) are left out.
  [[nodiscard]] std::vector<sim::RouteId> bundleRoutes(const std::vector<Edge>& edges, double latency_s);
  // The route of one edge (through via_rank when set).
  [[nodiscard]] sim::RouteId edgeRoute(const Edge& edge, double latency_s);
  // A flow of `bytes` on `route`, a child of `group` depending on `after`.
  void addFlow(sim::RouteId route, double bytes, sim::TaskId group, sim::TaskId after,
               double rate_cap_Bps = sim::kNoRateCap);
  // Routes an algorithm built for a group (its ranks, op, algorithm and protocol), so that
  // the same collective called again on the same group reuses them: `build` runs on the
  // first call.
  template <class Build>
  const std::vector<sim::RouteId>& memoizedRoutes(const CollectiveRequest& request, const CollectiveChoice& choice,
                                                  Build&& build) {
    RouteKey key{request.op, choice.algorithm, choice.protocol, request.ranks};
    auto it = memoized_routes_.find(key);
    if (it == memoized_routes_.end()) it = memoized_routes_.emplace(std::move(key), build()).first;
    return it->second;
  }
  // A flow from a GPU to a device that is not a GPU (the NVSwitch for NVLS) and back.
  void addDeviceFlow(topology::DeviceId from, topology::DeviceId to, double bytes, double latency_s, sim::TaskId group,
                     sim::TaskId after);
  // The tuner's view of the group's routes (NcclTuner), so that the flows' latencies follow
  // the same hop classes and excesses as the estimate that chose them.
  [[nodiscard]] HopClass hopClass(int64_t from_rank, int64_t to_rank) const {
    return tuner_.hopClass(from_rank, to_rank);
  }
  [[nodiscard]] double latencyExcessSeconds(int64_t from_rank, int64_t to_rank) const {
    return tuner_.latencyExcessSeconds(from_rank, to_rank);
  }
  [[nodiscard]] double deviceLatencyExcessSeconds(topology::DeviceId from, topology::DeviceId to) const {
    return tuner_.deviceLatencyExcessSeconds(from, to);
  }
  [[nodiscard]] const topology::Cluster& cluster() const { return cluster_; }

 private:
  const topology::Cluster& cluster_;
  topology::Router& router_;
  sim::TaskGraph& graph_;
  // The parameters as NCCL prices the cluster's hosts (forHostCpu).
  const CommunicationParameters parameters_;
  NcclTuner tuner_;
  // Appends the links of `edge` (through via_rank when set) to `links`.
  void appendEdgeLinks(const Edge& edge, std::vector<topology::LinkId>& links);

  using RouteKey = std::tuple<CollectiveOp, CollectiveAlgorithm, Protocol, std::vector<int64_t>>;
  std::map<RouteKey, std::vector<sim::RouteId>> memoized_routes_;
  // bundleRoutes' scratch.
  std::vector<topology::LinkId> bundle_links_;
  std::vector<uint32_t> bundle_multiplicity_;
};

}  // namespace trainsim::perf
