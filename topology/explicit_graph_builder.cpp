#include <algorithm>
#include <map>

#include "base/error.h"

#include "topology/builders.h"

namespace trainsim::topology::detail {

void buildExplicitGraph(Cluster& cluster) {
  const ExplicitGraph& graph = *cluster.spec().explicit_graph;
  // Accelerators get ranks node by node (as mpirun fills nodes), then in file order.
  std::map<std::string, DeviceId> ids;
  std::vector<const ExplicitDevice*> ordered;
  for (const auto& device : graph.devices) ordered.push_back(&device);
  std::stable_sort(ordered.begin(), ordered.end(), [](const ExplicitDevice* a, const ExplicitDevice* b) {
    if (isAccelerator(a->kind) != isAccelerator(b->kind)) return isAccelerator(a->kind);
    return isAccelerator(a->kind) && a->node < b->node;
  });
  std::map<std::pair<int, DeviceKind>, int> index_in_node;
  for (const ExplicitDevice* device : ordered) {
    const int index = index_in_node[{device->node, device->kind}]++;
    ids[device->name] = cluster.addDevice(Device{device->kind, device->node, index, -1, device->name});
  }
  for (const auto& link : graph.links) {
    cluster.addLinkPair(ids.at(link.from), ids.at(link.to), link.type, link.bandwidth_GBps * 1e9,
                        picosecondsFromMicroseconds(link.latency_us));
  }
}

}  // namespace trainsim::topology::detail

namespace trainsim::topology::detail {

void checkConnected(const Cluster& cluster) {
  const auto& accelerators = cluster.accelerators();
  if (accelerators.empty()) return;
  std::vector<char> reached(cluster.devices().size(), 0);
  std::vector<DeviceId> stack = {accelerators.front()};
  reached[accelerators.front()] = 1;
  while (!stack.empty()) {
    const DeviceId v = stack.back();
    stack.pop_back();
    for (LinkId id : cluster.outLinks(v)) {
      const DeviceId w = cluster.link(id).to;
      if (!reached[w]) {
        reached[w] = 1;
        stack.push_back(w);
      }
    }
  }
  for (DeviceId gpu : accelerators) {
    if (!reached[gpu]) {
      throwInputError(cluster.spec().source_file, "links",
                      "device " + cluster.device(gpu).name + " is not connected to " +
                          cluster.device(accelerators.front()).name + "; add links joining them");
    }
  }
}

}  // namespace trainsim::topology::detail
