// Internal to sim/: one function per collective algorithm (collective_ring.cpp, ...),
// each adding its flows under `group`, after `start` (the task that models the fixed
// latency before data moves). Their latencies follow NCCL's latency model of the tuner
// (detail::stepLatencySeconds and the others in nccl_tuner.h).
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "perf/collective_builder.h"
#include "perf/nccl_tuner.h"

namespace trainsim::perf::detail {

// NCCL's double binary tree: two complementary trees, each carrying half of the data.
inline constexpr int kTrees = 2;

struct AlgorithmContext {
  CollectiveBuilder& builder;
  const CollectiveRequest& request;
  const GroupLayout& layout;
  const CollectiveChoice& choice;
  sim::TaskId group;
  sim::TaskId start;
};

// Ring all-reduce / all-gather / reduce-scatter / broadcast (pipeline chain from rank 0).
void buildRing(const AlgorithmContext& context);
// Double binary tree all-reduce across nodes with a chain inside each node.
void buildTree(const AlgorithmContext& context);
// NVLink SHARP all-reduce inside one NVSwitch node.
void buildNvls(const AlgorithmContext& context);
// NVLS inside each node and a double binary tree between nodes (NCCL's NVLS_TREE).
void buildNvlsTree(const AlgorithmContext& context);
// NCCL's PAT all-gather / reduce-scatter across nodes of one GPU each.
void buildPat(const AlgorithmContext& context);

// The GPU <-> NVSwitch paths of NVLS for `ranks` (one node), the slowest one's latency
// beyond the defaults and the smallest raw NVLink bandwidth of a GPU to its switch.
struct NvlsPaths {
  std::vector<std::pair<topology::DeviceId, topology::DeviceId>> gpu_and_switch;
  std::optional<double> excess_s;
  double nvlink_Bps = 0.0;
};
[[nodiscard]] NvlsPaths nvlsPaths(const CollectiveBuilder& builder, const std::vector<int64_t>& ranks);
// What NCCL's NVLS setup reads of `cluster`'s network (CommunicationParameters::nvlsSetup).
[[nodiscard]] NvlsNetworkPath nvlsNetworkPath(const topology::ClusterSpec& cluster);
// NVLS's flows for an all-reduce of `bytes` over `paths`: the buffer into the switch and back
// on every GPU's NVLink, at the NVLS efficiency and the share of it that NCCL's chunk for a
// message of `message_bytes` on `nodes` nodes reaches (tree: NVLS_TREE's chunk).
void addNvlsFlows(CollectiveBuilder& builder, const NvlsPaths& paths, double bytes, double latency_s, sim::TaskId group,
                  sim::TaskId start, bool tree, double message_bytes, int nodes);
// All-to-all between every pair; send/recv from each rank to the next.
void buildDirect(const AlgorithmContext& context);

// The index, in a node's GPUs, of the GPU by which channel `channel` of `channels` enters a node
// of `gpus` GPUs across nodes (its head GPU in a tree). Fewer channels than GPUs are spread
// evenly over the node (0, 2, 4, 6 for 4 of 8), so that with fewer NICs than GPUs (a NIC per
// two GPUs, topology::Router::ownNic) each channel leaves by a NIC of its own, as NCCL's ring and
// tree search give every channel its own NET (src/graph/search.cc); otherwise the channel's
// index, wrapped.
[[nodiscard]] std::size_t channelEntryIndex(int channel, int channels, std::size_t gpus);

// The bytes on the wire for `payload` bytes in `protocol`.
[[nodiscard]] double wireBytes(const CommunicationParameters& parameters, CollectiveAlgorithm algorithm,
                               Protocol protocol, double payload);

}  // namespace trainsim::perf::detail
