#include "parallelism/ring_attention_exposure.h"

#include <algorithm>

namespace trainsim::parallelism {

OverlapExposure ringAttentionExposure(const Workload& workload, const OpTimer& timer, int64_t cp,
                                      const std::function<double(const Communication&)>& collective_seconds) {
  OverlapExposure exposure;
  if (cp < 2) return exposure;
  double exchange_forward = 0.0;
  double exchange_backward = 0.0;
  for (const Communication& comm : workload.communications) {
    if (!comm.beside_attention || comm.count <= 0) continue;
    // The pass's exchanges, cp - 1 calls each: one step's worth of every kind.
    const double step = collective_seconds(comm) * static_cast<double>(comm.count) / static_cast<double>(cp - 1);
    (comm.backward ? exchange_backward : exchange_forward) += step;
  }
  double attention_forward = 0.0;
  double attention_backward = 0.0;
  for (const Op& op : workload.ops) {
    if (!op.core_attention) continue;
    attention_forward += timer.seconds(op, PassKind::kForward);
    attention_backward += timer.seconds(op, PassKind::kBackward);
  }
  const double steps = static_cast<double>(cp);
  exposure.forward_s = (steps - 1.0) * std::max(0.0, exchange_forward - attention_forward / steps);
  exposure.backward_s = (steps - 1.0) * std::max(0.0, exchange_backward - attention_backward / steps);
  return exposure;
}

}  // namespace trainsim::parallelism
