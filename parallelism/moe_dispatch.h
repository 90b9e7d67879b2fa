// How the tokens of an expert-parallel group cross the network, by token dispatcher
// (parallelism.moe_dispatcher):
// - alltoall: NCCL's all-to-all (Megatron-Core MoEAlltoAllTokenDispatcher). A token routed to
//   top_k experts is sent top_k times, each copy to its expert's GPU, over NVLink or the NIC.
// - flex: DeepEP's or HybridEP's kernels (Megatron-Core's flex dispatcher,
//   --moe-token-dispatcher-type flex). A token crosses the network once per remote node that
//   holds one of its experts, to the GPU of the same local index there, which forwards it over
//   NVLink; combine reduces within the node and returns it once per node (DeepSeek-V3,
//   arXiv:2412.19437 section 3.2.2; deepseek-ai/DeepEP README, "normal kernels"). Inside a
//   node a token goes once to each rank holding one of its experts, not once per expert
//   (DeepEP's dispatch layout marks a token in a rank or not: Buffer.get_dispatch_layout's
//   is_token_in_rank; HybridEP's routing map per rank likewise).
// The simulation runs both as one all-to-all over the expert-parallel group; for flex its
// bytes are scaled so that what leaves each node over the NICs (or, for a group inside one
// node, each GPU over NVLink) is the flex dispatcher's.
#pragma once

#include <cstdint>
#include <string_view>

#include "parallelism/model_spec.h"
#include "parallelism/parallel_plan.h"

namespace trainsim::parallelism {

// Expected distinct nodes, of the `nodes` an expert-parallel group spans, that hold at least
// one of a token's top_k experts, with every expert equally likely (balanced routing) and
// spread evenly over the nodes. Group-limited routing (router_groups G, router_group_top_k M;
// DeepSeek-V3's 8 groups, 4 chosen) where each node holds G / nodes whole groups: the token's
// experts lie in M of the G groups, each of which is taken to hold one of them.
[[nodiscard]] double expectedExpertNodes(const MoeSpec& moe, int64_t nodes);

// The factor on the all-to-all's bytes (1 for alltoall): the flex dispatcher's network bytes
// per token, distinct remote nodes x hidden, over what an all-to-all of top_k copies sends off
// its node, top_k x (n - local) / n x hidden, for a group of n ranks with `local` of them on
// each node; for a group inside one node, distinct other ranks over top_k x (n - 1) / n.
[[nodiscard]] double dispatchByteScale(const MoeSpec& moe, const ParallelPlan& plan, int64_t gpus_per_node);

}  // namespace trainsim::parallelism
