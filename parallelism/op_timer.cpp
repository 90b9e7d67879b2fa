#include "parallelism/op_timer.h"

namespace trainsim::parallelism {

double OpTimer::gemmSeconds(const Op& op, PassKind pass, std::size_t index) const {
  const auto& gemms = pass == PassKind::kBackward ? op.backward_gemms : op.forward_gemms;
  if (index >= gemms.size()) return 0.0;
  return seconds(op, pass) / static_cast<double>(gemms.size());
}

}  // namespace trainsim::parallelism
