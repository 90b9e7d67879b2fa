// The structure of a folded-Clos network as built by clos_network.cpp, kept so that routes
// through it are computed in O(tiers) by up/down routing instead of a graph search.
#pragma once

#include <cstdint>
#include <vector>

#include "topology/device.h"
#include "topology/link.h"

namespace trainsim::topology {

struct ClosTier {
  DeviceId first_switch = 0;  // switches of a tier are consecutive device ids
  int64_t switch_count = 0;
  int64_t planes = 1;            // switches per block at this tier (index = block * planes + plane)
  int64_t leaves_per_block = 1;  // leaves under one block of this tier
  int64_t up_ports = 0;          // uplinks per switch (0 at the top tier)
  // Per block of this tier, the trunk of its uplinks (Cluster::addTrunkPair: up, then down);
  // empty where routes do not need one (no adaptive routing, or a tier that is not
  // oversubscribed, whose trunk cannot be the bottleneck: see router.cpp).
  std::vector<LinkId> up_trunks;
};

struct ClosFabric {
  std::vector<ClosTier> tiers;  // tiers[0] = leaves
  // Whether switches spread each flow over all equal-cost uplinks by load (adaptive routing:
  // InfiniBand, EFA's SRD) or pin it to one by a hash of its endpoints (Ethernet ECMP).
  bool adaptive_routing = false;
};

}  // namespace trainsim::topology
