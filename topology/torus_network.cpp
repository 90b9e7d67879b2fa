#include <string>

#include "topology/builders.h"

namespace trainsim::topology::detail {

void buildTorus(Cluster& cluster) {
  const ClusterSpec& spec = cluster.spec();
  const InterNodeSpec& net = *spec.inter_node;
  const DeviceKind kind = spec.gpu.isTpu() ? DeviceKind::kTpuChip : DeviceKind::kGpu;
  std::vector<DeviceId> chips;
  for (int node = 0; node < spec.nodes; ++node) {
    for (int i = 0; i < spec.gpus_per_node; ++i) {
      const std::string name = "n" + std::to_string(node) + (spec.gpu.isTpu() ? "/tpu" : "/gpu") + std::to_string(i);
      chips.push_back(cluster.addDevice(Device{kind, node, i, -1, name}));
    }
  }
  // Chip coordinates: rank = x + dims[0] * (y + dims[1] * z), x fastest.
  const double link_Bps = net.link_bandwidth_GBps * 1e9;
  const int64_t latency = picosecondsFromMicroseconds(spec.intra_node.latency_us);
  const auto& dims = net.torus_dims;
  std::vector<int64_t> stride(dims.size(), 1);
  for (std::size_t d = 1; d < dims.size(); ++d) stride[d] = stride[d - 1] * dims[d - 1];
  for (std::size_t rank = 0; rank < chips.size(); ++rank) {
    for (std::size_t d = 0; d < dims.size(); ++d) {
      const int64_t size = dims[d];
      if (size < 2) continue;
      const int64_t coordinate = (static_cast<int64_t>(rank) / stride[d]) % size;
      const int64_t next_coordinate = (coordinate + 1) % size;
      // A ring of 2 has a single neighbour: one link, not two parallel ones.
      if (size == 2 && coordinate == 1) continue;
      const int64_t neighbour = static_cast<int64_t>(rank) + (next_coordinate - coordinate) * stride[d];
      cluster.addLinkPair(chips[rank], chips[static_cast<std::size_t>(neighbour)], LinkType::kIci, link_Bps, latency);
    }
  }
}

}  // namespace trainsim::topology::detail
