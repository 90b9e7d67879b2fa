// What of a cluster a job holds, and how often it is interrupted: the devices of its plan
// times the cluster's failure rates (topology/reliability_spec.h).
#pragma once

#include <cstdint>

#include "parallelism/experiment.h"
#include "topology/reliability_spec.h"

namespace trainsim::goodput {

// The devices a job holds: its plan's GPUs, the nodes they fill, those nodes' NICs.
struct JobDevices {
  int64_t gpus = 0;
  int64_t nodes = 0;
  int64_t nics = 0;
};
[[nodiscard]] JobDevices jobDevices(const parallelism::Experiment& experiment);

// Interruptions of the job per second of its wall time.
struct JobFailureRates {
  double hardware = 0.0;  // a node is taken out and replaced (GPU, host, NIC, network)
  double software = 0.0;  // a restart on the same nodes
  double planned = 0.0;   // stops after a checkpoint (maintenance)

  [[nodiscard]] double unplanned() const { return hardware + software; }
  // The share of unplanned interruptions that need a node replaced.
  [[nodiscard]] double hardwareShare() const { return unplanned() > 0.0 ? hardware / unplanned() : 0.0; }
};
[[nodiscard]] JobFailureRates jobFailureRates(const topology::FailureRates& rates, const JobDevices& devices);

}  // namespace trainsim::goodput
