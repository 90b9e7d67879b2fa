// Ring orders for a node whose GPUs form a full mesh of point-to-point links (AMD's
// Infinity Fabric / xGMI): each GPU has one link to each peer, so rings that all followed the
// same order would load one of a GPU's n-1 links and leave the others idle. RCCL's rings on an
// 8-GPU MI300X node go over different links so that all seven carry traffic (AMD ROCm blog,
// "Understanding RCCL Bandwidth and xGMI Performance on AMD Instinct MI300X", March 2025:
// 7 links of 64 GB/s, about 48 GB/s usable each); the channels here do the same.
#pragma once

#include <vector>

namespace trainsim::perf {

// Directed Hamiltonian cycles over the positions 0..n-1 (each starting at 0) that share no
// directed edge: n-1 of them where such a decomposition exists (every n except 4 and 6;
// Tillson, "A Hamiltonian decomposition of K*_2m, 2m >= 8", J. Combin. Theory B 29, 1980),
// otherwise as many as a bounded search finds, at least one. Deterministic; computed once per
// n and kept (thread-safe).
[[nodiscard]] const std::vector<std::vector<int>>& disjointRingOrders(int n);

// Ring channels on a mesh node of `gpus_on_node` GPUs when `nic_channels` channels cross the
// network (1 inside one node): the least common multiple of those and the node's disjoint
// rings, so that every (NIC, ring) pair carries the same share and every link and NIC is
// loaded evenly. Channel c enters a node at GPU c mod gpus_on_node and takes ring c mod rings.
[[nodiscard]] int meshRingChannels(int gpus_on_node, int nic_channels);

}  // namespace trainsim::perf
