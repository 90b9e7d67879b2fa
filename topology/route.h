// A route: the directed links a flow crosses from one device to another.
#pragma once

#include <cstdint>
#include <vector>

#include "topology/link.h"

namespace trainsim::topology {

struct Route {
  std::vector<LinkId> links;    // in order from source to destination; empty when source == destination
  int64_t latency_ps = 0;       // sum of the links' latencies
  double bottleneck_Bps = 0.0;  // smallest link bandwidth on the way (0 for an empty route)
  // The same sum over the links' reference latencies (topology::defaults::referenceLinkLatencyPs:
  // the hardware NCCL's per-step latencies were measured on); latency_ps minus this is what
  // the route's hops cost beyond those steps.
  int64_t reference_latency_ps = 0;
};

}  // namespace trainsim::topology
