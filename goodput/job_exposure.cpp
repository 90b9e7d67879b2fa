#include "goodput/job_exposure.h"

#include <algorithm>

#include "topology/device.h"

namespace trainsim::goodput {
namespace {

// Rates are per 1,000 device-days; the model works in seconds.
constexpr double kSecondsPer1000Days = 1000.0 * 86400.0;

// NICs per node: the homogeneous form's inter_node.nics_per_node, or the explicit graph's
// NIC devices over its nodes.
int64_t nicsPerNode(const topology::ClusterSpec& cluster) {
  if (cluster.explicit_graph) {
    const auto nics = std::count_if(cluster.explicit_graph->devices.begin(), cluster.explicit_graph->devices.end(),
                                    [](const auto& device) { return device.kind == topology::DeviceKind::kNic; });
    return (static_cast<int64_t>(nics) + cluster.nodes - 1) / std::max(1, cluster.nodes);
  }
  return cluster.inter_node ? cluster.inter_node->nics_per_node : 0;
}

}  // namespace

JobDevices jobDevices(const parallelism::Experiment& experiment) {
  JobDevices devices;
  devices.gpus = experiment.plan.gpus;
  const int64_t per_node = std::max(1, experiment.cluster.gpus_per_node);
  devices.nodes = (devices.gpus + per_node - 1) / per_node;
  devices.nics = devices.nodes * nicsPerNode(experiment.cluster);
  return devices;
}

JobFailureRates jobFailureRates(const topology::FailureRates& rates, const JobDevices& devices) {
  const auto gpus = static_cast<double>(devices.gpus);
  const auto nodes = static_cast<double>(devices.nodes);
  const auto nics = static_cast<double>(devices.nics);
  JobFailureRates job;
  job.hardware = (rates.gpu * gpus + (rates.host + rates.network) * nodes + rates.nic * nics) / kSecondsPer1000Days;
  job.software = rates.software * nodes / kSecondsPer1000Days;
  job.planned = rates.planned * nodes / kSecondsPer1000Days;
  return job;
}

}  // namespace trainsim::goodput
