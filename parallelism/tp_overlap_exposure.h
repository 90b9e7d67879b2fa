// What Transformer Engine's tensor-parallel communication overlap (tp_comm_overlap) leaves
// exposed, GEMM by GEMM.
//
// Each collective of a layer runs beside one GEMM (Communication::beside): the all-gather of
// the block input beside the column-parallel forward GEMM, the reduce-scatter of the block
// output beside the row-parallel one, and in backward the gradient all-gather, the re-gather
// and the gradient reduce-scatter beside their input- and weight-gradient GEMMs. It cannot
// hide under anything else (norms, attention, element-wise kernels, another GEMM): the GEMM
// needs its data, or the collective needs the GEMM's output. A collective longer than its
// GEMM therefore shows, however much compute the rest of the pass holds, and the pipelined
// and ring-exchange methods show a chunk's worth even when it is shorter.
#pragma once

#include <cstdint>
#include <functional>

#include "parallelism/op_timer.h"
#include "parallelism/transformer_workload.h"

namespace trainsim::parallelism {

// How much longer a GEMM of `gemm_s` and the collective of `comm_s` beside it take than the
// GEMM alone, by method:
//  - bulk: the two run side by side: max(0, comm - gemm);
//  - pipeline (the GEMM in `chunks`, each chunk's output reduce-scattered on the
//    communication stream while the next chunk runs): the last chunk's reduce-scatter
//    follows the GEMM, or the GEMM's first chunk precedes the whole reduce-scatter:
//    max(comm / chunks, comm + gemm / chunks - gemm);
//  - ring exchange (the GEMM in `chunks` = tp slices, the local slice first, each other one
//    as its peer-to-peer copy arrives): the last slice's GEMM follows the last copy:
//    max(0, comm + gemm / chunks - gemm). A reduce-scatter by ring exchange sends each
//    chunk's partial output on while the next runs, so it shows as the pipelined one does.
[[nodiscard]] double overlapExposedSeconds(TpOverlapMethod method, int64_t chunks, double gemm_s, double comm_s);

struct OverlapExposure {
  double forward_s = 0.0;
  double backward_s = 0.0;
};

// Exposed time of one copy of `workload` (one layer, one micro-batch) on one GPU: the sum of
// overlapExposedSeconds over its collectives bound to a GEMM, each collective timed alone by
// `collective_seconds` (one call of it on its group) and its GEMM by `timer`. A collective
// whose data the userbuffers kernels copy on SMs (pipelined and bulk methods) takes at least
// its sent bytes / (its SMs x `sm_copy_Bps`, one SM's copy rate): with the few SMs a recipe
// gives a bulk overlap (2-4) that, not the links, bounds it. The ring exchange copies on the
// copy engines and is not bounded so.
[[nodiscard]] OverlapExposure tpOverlapExposure(const Workload& workload, const OpTimer& timer,
                                                const std::function<double(const Communication&)>& collective_seconds,
                                                double sm_copy_Bps);

}  // namespace trainsim::parallelism
