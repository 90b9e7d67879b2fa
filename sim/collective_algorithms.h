// Internal to sim/: one function per collective algorithm (collective_ring.cpp, ...),
// each adding its flows under `group`, after `start` (the task that models the fixed
// latency before data moves). Their latencies follow NCCL's latency model of the tuner
// (detail::stepLatencySeconds and the others in nccl_tuner.h).
#pragma once

#include "sim/collective_builder.h"
#include "sim/nccl_tuner.h"

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

// The bytes on the wire for `payload` bytes in `protocol`.
[[nodiscard]] double wireBytes(const CommunicationParameters& parameters, Protocol protocol, double payload);

}  // namespace trainsim::sim::detail
