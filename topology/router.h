// Shortest-path routing with deterministic ECMP, without an all-pairs table.
//
// Link cost follows OSPF's rule, cost = reference bandwidth / link bandwidth, so traffic
// prefers NVLink over PCIe and never detours through a slower fabric when a faster one is
// as short. Among equal-cost paths the choice at each hop is made by a hash of the
// endpoints (ECMP), so a given (source, destination) pair always takes the same path and
// different pairs spread over the parallel spines. Between nodes, routes go through each
// GPU's own NIC (GPU i -> NIC i), as NCCL does.
//
// A query runs a bidirectional Dijkstra that only explores the neighbourhoods of the two
// endpoints, then walks the shortest-path DAG; results are cached per pair. A Router holds
// scratch state: use one per thread (the Cluster itself is shared read-only).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "topology/cluster.h"
#include "topology/route.h"

namespace trainsim::topology {

// Routing cost of a link: 1e15 / bandwidth in bytes/s (450 GB/s NVLink: 2222; 25 GB/s IB: 40000).
[[nodiscard]] int64_t routingCost(const Link& link);

class Router {
 public:
  explicit Router(const Cluster& cluster);

  // The route from `from` to `to` (devices must be connected; the cluster builder checks
  // that every accelerator is). The reference stays valid for the Router's lifetime.
  [[nodiscard]] const Route& route(DeviceId from, DeviceId to);

  [[nodiscard]] std::size_t cachedRoutes() const { return cache_.size(); }
  [[nodiscard]] const Cluster& cluster() const { return cluster_; }

 private:
  // One shortest-path query: its endpoints, whether it may use network cables only, and the
  // epoch that stamps the scratch entries it writes.
  struct Query {
    DeviceId from;
    DeviceId to;
    bool network_only;
    uint32_t epoch;
  };

  Route computeRoute(DeviceId from, DeviceId to, bool network_only = false);
  // computeRoute's steps, in order: a bidirectional Dijkstra that returns the shortest
  // distance, the marking of the forward-settled vertices that lie on a shortest path
  // (on_path_forward_), and the walk from the source along the shortest paths.
  int64_t searchShortestDistance(const Query& query);
  void markForwardShortestPathVertices(const Query& query, int64_t best);
  [[nodiscard]] Route walkShortestPath(const Query& query, int64_t best) const;
  // Whether the query may take the link.
  [[nodiscard]] bool usable(const Query& query, LinkId id) const;
  // The backward search's distance from v to the destination; infinity where it did not settle v.
  [[nodiscard]] int64_t backwardSettledDistance(const Query& query, DeviceId v) const;
  // NIC to NIC through the network only.
  Route networkRoute(DeviceId from_nic, DeviceId to_nic);
  // The NIC a GPU's inter-node traffic uses (none for TPU pods and explicit graphs).
  [[nodiscard]] std::optional<DeviceId> ownNic(DeviceId gpu) const;

  const Cluster& cluster_;
  std::vector<int64_t> cost_;  // per link
  std::unordered_map<uint64_t, Route> cache_;

  // Scratch, reset lazily by epoch stamps so a query costs only what it explores.
  uint32_t epoch_ = 0;
  std::vector<uint32_t> seen_forward_;
  std::vector<uint32_t> seen_backward_;
  std::vector<uint32_t> settled_forward_;
  std::vector<uint32_t> settled_backward_;
  std::vector<uint32_t> on_path_forward_;
  std::vector<int64_t> dist_forward_;
  std::vector<int64_t> dist_backward_;
  std::vector<DeviceId> forward_order_;  // settle order of the forward search
};

}  // namespace trainsim::topology
