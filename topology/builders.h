// Internal to topology/: the pieces Cluster::build assembles. Each throws InputError when
// the spec cannot be built.
#pragma once

#include <vector>

#include "topology/cluster.h"

namespace trainsim::topology::detail {

// Picoseconds from microseconds.
[[nodiscard]] int64_t picosecondsFromMicroseconds(double us);

// One server: GPUs, its scale-up fabric (NVSwitch star, NVLink mesh or none), the PCIe tree
// (GPUs and NICs under PCIe switches under CPU sockets) and its NICs. Returns the node's
// NICs in index order (empty when the cluster has no inter-node network).
std::vector<DeviceId> buildNode(Cluster& cluster, int node);

// Folded-Clos network over the NICs of every node: fat tree (leaves filled node by node) or
// rail-optimized (NIC i of each node on rail i's leaf), with per-tier oversubscription.
void buildClosNetwork(Cluster& cluster, const std::vector<std::vector<DeviceId>>& nics_by_node);

// TPU-style pod: every chip joined to its neighbours in a 1-3 D torus with wrap-around links.
void buildTorus(Cluster& cluster);

// Fails unless every accelerator can reach every other one.
void checkConnected(const Cluster& cluster);

// The explicit devices/links form.
void buildExplicitGraph(Cluster& cluster);

}  // namespace trainsim::topology::detail
