// What context parallelism's ring attention leaves exposed beside the attention kernels.
//
// Transformer Engine's ring attention (AttnFuncWithCPAndKVP2P, the cp_comm_type "p2p" that
// Megatron-Core uses by default) runs a pass's core attention in cp steps: step i attends
// this rank's queries to the keys and values that arrived from i ranks back, and while it
// runs, the peer-to-peer exchange of the next step's K and V (in backward also the partial
// dK and dV going on) is in flight on its own stream. With the load-balanced split (each rank
// holds sequence chunks r and 2cp - 1 - r) every step does the same work: the first the
// causal product of the rank's own 2 chunks, each other one half of an unmasked product. So
// each of the cp - 1 exchanges hides under 1/cp of the pass's attention time, and what it
// has left over shows.
#pragma once

#include <cstdint>
#include <functional>

#include "parallelism/op_timer.h"
#include "parallelism/tp_overlap_exposure.h"
#include "parallelism/transformer_workload.h"

namespace trainsim::parallelism {

// Exposed time of one copy of `workload` (one layer, one micro-batch) on one GPU with `cp`
// context-parallel ranks: per pass, (cp - 1) x max(0, exchange - attention / cp), where
// `exchange` is one step's ring communications of that pass (Communication::beside_attention,
// each timed alone by `collective_seconds`) and `attention` the pass's core-attention ops
// (Op::core_attention) timed by `timer`.
[[nodiscard]] OverlapExposure ringAttentionExposure(
    const Workload& workload, const OpTimer& timer, int64_t cp,
    const std::function<double(const Communication&)>& collective_seconds);

}  // namespace trainsim::parallelism
