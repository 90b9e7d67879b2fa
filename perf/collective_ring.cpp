// Ring collectives (NCCL's ring): all-reduce = reduce-scatter then all-gather around the
// ring, 2(n-1) steps; all-gather and reduce-scatter n-1 steps; broadcast a pipeline chain
// from the root. On a full mesh of point-to-point links each channel takes its own ring over
// different links (perf/mesh_rings.h), and on a chip-level torus each follows the torus's links in
// its own dimension and direction (perf/torus_rings.h). Across nodes each channel enters a node at one GPU and visits
// the node's other GPUs (the node's GPUs rotated to that GPU, channelEntryIndex: spread over the node when there are
// fewer channels than GPUs), so with one channel per NIC every NIC carries one channel in each direction, as NCCL's
// DGX rings do.
//
// A channel leaves a node through the NIC it entered by (NCCL's ring search,
// src/graph/search.cc, with the default NCCL_CROSS_NIC: the ring's exit NET is its entry
// NET), so inter-node hops stay on one rail of a rail-optimized fabric. The node's last
// GPU reaches that NIC over NVLink through the entry GPU (PXN, src/graph/paths.cc: GPU ->
// NVLink -> GPU -> PCI -> NIC, used in the send direction). Routing the last GPU straight
// to the next node's entry GPU would go through its own NIC, change rails and cross the
// spine on every hop. Without NVLink between the two GPUs there is no PXN and the last GPU
// sends through its own NIC.
#include <algorithm>
#include <map>
#include <optional>

#include "perf/collective_algorithms.h"
#include "perf/mesh_rings.h"
#include "perf/torus_rings.h"

namespace trainsim::perf::detail {
namespace {

using MeshRings = std::vector<std::vector<int>>;

// On a full mesh, channel `channel` visits the node's GPUs along its own ring of `rings`
// (disjointRingOrders of the node's size), starting at the GPU at `entry` (its entry GPU
// across nodes).
std::vector<int64_t> meshOrder(const MeshRings& rings, const std::vector<int64_t>& node, int channel,
                               std::size_t entry) {
  const std::vector<int>& ring = rings[static_cast<std::size_t>(channel) % rings.size()];
  const auto start =
      static_cast<std::size_t>(std::find(ring.begin(), ring.end(), static_cast<int>(entry)) - ring.begin());
  std::vector<int64_t> order;
  for (std::size_t i = 0; i < ring.size(); ++i)
    order.push_back(node[static_cast<std::size_t>(ring[(start + i) % ring.size()])]);
  return order;
}

}  // namespace

void buildRing(const AlgorithmContext& context) {
  CollectiveBuilder& builder = context.builder;
  const GroupLayout& layout = context.layout;
  const CollectiveOp op = context.request.op;
  const auto n = static_cast<double>(layout.size);
  const int channels = context.choice.channels;
  const double size = context.request.bytes;

  double steps = n - 1.0;
  double payload = (n - 1.0) / n * size;  // bytes each ring edge carries in total
  if (op == CollectiveOp::kAllReduce) {
    steps = 2.0 * (n - 1.0);
    payload = 2.0 * (n - 1.0) / n * size;
  } else if (op == CollectiveOp::kBroadcast) {
    payload = size;
  }
  const double per_channel =
      wireBytes(builder.parameters(), CollectiveAlgorithm::kRing, context.choice.protocol, payload / channels);
  // NCCL's cap on the protocol's bus bandwidth (LL's, LL128's across nodes), shared by each
  // GPU's channels: each channel's flow at most its share, on the wire.
  const double rate_cap =
      context.choice.protocol_max_bus_Bps > 0.0
          ? context.choice.protocol_max_bus_Bps / channels /
                builder.parameters().protocolBandwidthFactor(CollectiveAlgorithm::kRing, context.choice.protocol)
          : sim::kNoRateCap;
  // A mesh's rings by node size, looked up once per collective rather than per channel.
  std::map<std::size_t, const MeshRings*> mesh_rings;
  auto ringsOf = [&](std::size_t gpus) -> const MeshRings& {
    const MeshRings*& rings = mesh_rings[gpus];
    if (rings == nullptr) rings = &disjointRingOrders(static_cast<int>(gpus));
    return *rings;
  };

  for (int channel = 0; channel < channels; ++channel) {
    std::vector<int64_t> order;
    // The GPU each rank's node is entered by in this channel (its NIC is the channel's).
    std::map<int64_t, int64_t> entry;
    if (!layout.torus_dims.empty()) {
      order = torusRingOrder(context.request.ranks, layout.torus_dims, channel);
    } else if (layout.singleNode()) {
      const auto& ranks = context.request.ranks;
      order = layout.mesh ? meshOrder(ringsOf(ranks.size()), ranks, channel, 0) : ranks;
    } else {
      for (const auto& node : layout.ranks_by_node) {
        const std::size_t shift = channelEntryIndex(channel, channels, node.size());
        if (layout.mesh) {
          const std::vector<int64_t> visit = meshOrder(ringsOf(node.size()), node, channel, shift);
          order.insert(order.end(), visit.begin(), visit.end());
        } else {
          order.insert(order.end(), node.begin() + static_cast<std::ptrdiff_t>(shift), node.end());
          order.insert(order.end(), node.begin(), node.begin() + static_cast<std::ptrdiff_t>(shift));
        }
        for (int64_t rank : node) entry[rank] = node[shift];
      }
    }
    if (op == CollectiveOp::kBroadcast) {
      // The chain starts at the root (the communicator's first rank).
      std::rotate(order.begin(), std::find(order.begin(), order.end(), context.request.ranks.front()), order.end());
    }
    std::vector<CollectiveBuilder::Edge> edges;
    const std::size_t count = op == CollectiveOp::kBroadcast ? order.size() - 1 : order.size();
    HopClass intra = HopClass::kNvLink;
    // The slowest hop of each class sets every step's latency of that class beyond the defaults.
    std::optional<double> intra_excess;
    std::optional<double> network_excess;
    for (std::size_t i = 0; i < count; ++i) {
      CollectiveBuilder::Edge edge{order[i], order[(i + 1) % order.size()]};
      const HopClass hop = builder.hopClass(edge.from_rank, edge.to_rank);
      if (hop == HopClass::kPcie) intra = HopClass::kPcie;
      const double excess = builder.latencyExcessSeconds(edge.from_rank, edge.to_rank);
      std::optional<double>& slowest = hop == HopClass::kNetwork ? network_excess : intra_excess;
      slowest = slowest ? std::max(*slowest, excess) : excess;
      if (hop == HopClass::kNetwork && !entry.empty()) {
        const int64_t exit_gpu = entry.at(edge.from_rank);
        if (exit_gpu != edge.from_rank && builder.hopClass(edge.from_rank, exit_gpu) == HopClass::kNvLink) {
          edge.via_rank = exit_gpu;
        }
      }
      edges.push_back(edge);
    }
    // NCCL's step accounting: of the steps, those that cross nodes scale with nodes - 1.
    const double network_steps = steps / std::max(1.0, n - 1.0) * (layout.nodes() - 1.0);
    const double per_step = op == CollectiveOp::kBroadcast ? size : size / n;
    // NCCL prices a broadcast's chain apart from the reduction rings, without their
    // multi-node rules (the net overhead, one GPU per node): it takes none of them here.
    const bool reduction_ring = op != CollectiveOp::kBroadcast;
    const double latency =
        stepLatencySeconds(builder.parameters(), CollectiveAlgorithm::kRing, context.choice.protocol, intra,
                           steps - network_steps, network_steps, !layout.singleNode() && reduction_ring,
                           {intra_excess.value_or(0.0), network_excess.value_or(0.0)},
                           layout.max_per_node == 1 && reduction_ring) +
        pipelineFillSeconds(builder.parameters(), context.choice.protocol, steps, per_step);
    builder.addFlows(edges, per_channel, latency, context.group, context.start, rate_cap);
  }
}

}  // namespace trainsim::perf::detail
