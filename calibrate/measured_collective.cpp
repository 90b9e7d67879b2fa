#include "calibrate/measured_collective.h"

namespace trainsim::calibrate {

std::string derivedLayoutName(int64_t nodes, int64_t max_per_node) {
  if (nodes <= 1) return "intra_node";
  if (max_per_node == 1) return "one_per_node";
  return "multi_node";
}

}  // namespace trainsim::calibrate
