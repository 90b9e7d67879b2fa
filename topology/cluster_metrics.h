// Whole-cluster figures for `trainsim topology`: device and link counts, per-GPU injection
// bandwidth, bisection bandwidth.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "topology/cluster.h"

namespace trainsim::topology {

struct ClusterMetrics {
  std::map<std::string, int64_t> devices_by_kind;
  std::map<std::string, int64_t> links_by_type;  // physical (bidirectional) links
  double scale_up_bandwidth_per_gpu_Bps = 0.0;   // per direction, smallest over GPUs
  double network_injection_per_gpu_Bps = 0.0;    // node's NIC bandwidth / its GPUs, smallest over nodes
};

[[nodiscard]] ClusterMetrics measureCluster(const Cluster& cluster);

// Maximum flow (bytes/s, one direction) from the first half of the accelerators (by rank)
// to the second half: the bisection bandwidth of the rank-order split, which is where
// data-parallel traffic between the two halves of a job has to cross. Exact max-flow
// (Boost push-relabel) on the device graph, with links' per-direction capacities.
[[nodiscard]] double bisectionBandwidth(const Cluster& cluster);

}  // namespace trainsim::topology
