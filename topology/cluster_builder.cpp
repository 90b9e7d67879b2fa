// Cluster::build: chooses the structure the spec describes and assembles it.
#include "topology/builders.h"

namespace trainsim::topology {

Expected<Cluster> Cluster::build(const ClusterSpec& spec) {
  return catchInputErrors([&]() -> Cluster {
    Cluster cluster(spec);
    if (spec.explicit_graph) {
      detail::buildExplicitGraph(cluster);
    } else if (spec.inter_node && spec.inter_node->topology == NetworkTopology::kTorus) {
      detail::buildTorus(cluster);
    } else {
      std::vector<std::vector<DeviceId>> nics_by_node;
      nics_by_node.reserve(static_cast<std::size_t>(spec.nodes));
      for (int node = 0; node < spec.nodes; ++node) nics_by_node.push_back(detail::buildNode(cluster, node));
      if (spec.inter_node) detail::buildClosNetwork(cluster, nics_by_node);
    }
    cluster.finalize();
    detail::checkConnected(cluster);
    return cluster;
  });
}

}  // namespace trainsim::topology
