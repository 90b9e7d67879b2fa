// Collective operations as NCCL and nccl-tests define them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "perf/communication_parameters.h"

namespace trainsim::perf {

enum class CollectiveOp : uint8_t { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast, kSendRecv };
[[nodiscard]] std::string_view collectiveOpName(CollectiveOp op);
[[nodiscard]] std::optional<CollectiveOp> parseCollectiveOp(std::string_view name);

// nccl-tests' bus bandwidth factor: busbw = algbw x factor (all_reduce 2(n-1)/n,
// all_gather / reduce_scatter / all_to_all (n-1)/n, broadcast and send_recv 1).
[[nodiscard]] double busBandwidthFactor(CollectiveOp op, int64_t ranks);

struct CollectiveRequest {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::vector<int64_t> ranks;  // cluster GPU ranks, in communicator order
  // nccl-tests "size": the buffer for all_reduce / broadcast / send_recv; the total over
  // ranks (n x each rank's part) for all_gather, reduce_scatter and all_to_all.
  double bytes = 0.0;
  std::optional<CollectiveAlgorithm> algorithm;  // forced (NCCL_ALGO), else chosen
  std::optional<Protocol> protocol;              // forced (NCCL_PROTO), else chosen
};

struct CollectiveChoice {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  Protocol protocol = Protocol::kSimple;
  int channels = 1;
  double estimated_time_s = 0.0;  // the tuner's closed-form estimate used to choose
  // A tree's bus-bandwidth cap on this group, NCCL's channels x its per-channel cap
  // (NcclTuner::treeMaxBusBandwidth), bytes/s; 0 for the other algorithms.
  double tree_max_bus_Bps = 0.0;
  // NCCL's cap on the protocol's bus bandwidth in this ring or tree
  // (NcclTuner::protocolMaxBusBandwidth: LL's, LL128's across nodes), bytes/s; 0 for none.
  double protocol_max_bus_Bps = 0.0;
};

}  // namespace trainsim::perf
