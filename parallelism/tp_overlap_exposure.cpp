#include "parallelism/tp_overlap_exposure.h"

#include <algorithm>

namespace trainsim::parallelism {

double overlapExposedSeconds(TpOverlapMethod method, int64_t chunks, double gemm_s, double comm_s) {
  const double pieces = static_cast<double>(std::max<int64_t>(chunks, 1));
  switch (method) {
    case TpOverlapMethod::kBulk: return std::max(0.0, comm_s - gemm_s);
    case TpOverlapMethod::kPipeline: return std::max(comm_s / pieces, comm_s + gemm_s / pieces - gemm_s);
    case TpOverlapMethod::kRingExchange: return std::max(0.0, comm_s + gemm_s / pieces - gemm_s);
  }
  return 0.0;
}

OverlapExposure tpOverlapExposure(const Workload& workload, const OpTimer& timer,
                                  const std::function<double(const Communication&)>& collective_seconds,
                                  double sm_copy_Bps) {
  OverlapExposure exposure;
  for (const Communication& comm : workload.communications) {
    if (!comm.beside || comm.beside->op >= workload.ops.size()) continue;
    const GemmOverlap& beside = *comm.beside;
    const PassKind pass = comm.backward ? PassKind::kBackward : PassKind::kForward;
    const double gemm = timer.gemmSeconds(workload.ops[beside.op], pass, beside.gemm);
    // A reduce-scatter by ring exchange (proj / fc2 forward in the FP8 presets) sends each
    // chunk's partial output on as the next chunk runs: the last chunk's send follows the
    // GEMM, as in the pipelined method.
    const bool ring_reduce_scatter =
        beside.method == TpOverlapMethod::kRingExchange && comm.op == perf::CollectiveOp::kReduceScatter;
    const TpOverlapMethod method = ring_reduce_scatter ? TpOverlapMethod::kPipeline : beside.method;
    double seconds = collective_seconds(comm);
    if (beside.copy_sms > 0.0 && sm_copy_Bps > 0.0) {
      seconds = std::max(seconds, beside.sent_bytes / (beside.copy_sms * sm_copy_Bps));
    }
    const double exposed =
        static_cast<double>(comm.count) * overlapExposedSeconds(method, beside.chunks, gemm, seconds);
    (comm.backward ? exposure.backward_s : exposure.forward_s) += exposed;
  }
  return exposure;
}

}  // namespace trainsim::parallelism
