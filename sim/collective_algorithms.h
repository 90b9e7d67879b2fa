// Internal to sim/: one function per collective algorithm (collective_ring.cpp, ...),
// each adding its flows under `group`, after `start` (the task that models the fixed
// latency before data moves).
#pragma once

#include "sim/collective_builder.h"

namespace trainsim::sim::detail {

struct AlgorithmContext {
  CollectiveBuilder& builder;
  const CollectiveRequest& request;
  const GroupLayout& layout;
  const CollectiveChoice& choice;
  TaskId group;
  TaskId start;
};

// Ring all-reduce / all-gather / reduce-scatter / broadcast (pipeline chain from rank 0).
void buildRing(const AlgorithmContext& context);
// Double binary tree all-reduce across nodes with a chain inside each node.
void buildTree(const AlgorithmContext& context);
// NVLink SHARP all-reduce inside one NVSwitch node.
void buildNvls(const AlgorithmContext& context);
// All-to-all between every pair; send/recv from each rank to the next.
void buildDirect(const AlgorithmContext& context);

// Pipeline-fill latency of `steps` steps of which `network_steps` cross the network,
// the others an intra-node hop of class `intra` (NCCL tuning.cc's latency model). Each
// step also costs its class's excess, and at least nothing.
[[nodiscard]] double stepLatencySeconds(const CommunicationParameters& parameters, CollectiveAlgorithm algorithm,
                                        Protocol protocol, HopClass intra, double intra_steps, double network_steps,
                                        bool multi_node, StepLatencyExcess excess);

// Pipeline fill: (steps - 1) chunks crossing a hop at one channel's rate, the chunk being
// NCCL's buffer slot or the per-step data spread over the pipeline channels if smaller.
[[nodiscard]] double pipelineFillSeconds(const CommunicationParameters& parameters, Protocol protocol, double steps,
                                         double bytes_per_step);

// NCCL's tree bus-bandwidth cap for a tree over `nodes` nodes, bytes/s.
[[nodiscard]] double treeMaxBusBandwidth(const CommunicationParameters& parameters, int nodes);

// The bytes on the wire for `payload` bytes in `protocol`.
[[nodiscard]] double wireBytes(const CommunicationParameters& parameters, Protocol protocol, double payload);

}  // namespace trainsim::sim::detail
