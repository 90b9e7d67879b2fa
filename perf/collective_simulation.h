// Simulating one collective on its own, as nccl-tests runs it: `trainsim collective` and
// the accuracy suite use this.
#pragma once

#include <cstdint>

#include "base/expected.h"
#include "perf/collective.h"
#include "perf/communication_parameters.h"
#include "topology/cluster.h"
#include "topology/router.h"

namespace trainsim::perf {

struct CollectiveResult {
  CollectiveChoice choice;
  double time_s = 0.0;
  double algbw_Bps = 0.0;  // bytes / time
  double busbw_Bps = 0.0;  // algbw x nccl-tests' bus factor
  uint64_t flows = 0;
};

class CollectiveSimulator {
 public:
  CollectiveSimulator(const topology::Cluster& cluster, CommunicationParameters parameters);
  [[nodiscard]] Expected<CollectiveResult> simulate(const CollectiveRequest& request);

 private:
  const topology::Cluster& cluster_;
  CommunicationParameters parameters_;
  topology::Router router_;
  std::vector<double> capacities_;
};

}  // namespace trainsim::perf
