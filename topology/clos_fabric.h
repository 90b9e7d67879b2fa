// The structure of a folded-Clos network as built by clos_network.cpp, kept so that routes
// through it are computed in O(tiers) by up/down routing instead of a graph search.
#pragma once

#include <cstdint>
#include <vector>

#include "topology/device.h"

namespace trainsim::topology {

struct ClosTier {
  DeviceId first_switch = 0;  // switches of a tier are consecutive device ids
  int64_t switch_count = 0;
  int64_t planes = 1;            // switches per block at this tier (index = block * planes + plane)
  int64_t leaves_per_block = 1;  // leaves under one block of this tier
  int64_t up_ports = 0;          // uplinks per switch (0 at the top tier)
};

struct ClosFabric {
  std::vector<ClosTier> tiers;  // tiers[0] = leaves
};

}  // namespace trainsim::topology
