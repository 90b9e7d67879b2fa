// The models' shipped defaults (configs/defaults/, perf/default_parameters.h) for tests: what
// the commands run with when no calibration is given.
#pragma once

#include "base/config_paths.h"
#include "base/expected.h"
#include "perf/communication_parameters.h"
#include "perf/compute_parameters.h"
#include "perf/default_parameters.h"

namespace trainsim {

inline const ConfigPaths& shippedConfigPaths() {
  static const ConfigPaths paths{TRAINSIM_CONFIG_DIR_FOR_TESTS};
  return paths;
}

inline const perf::ComputeParameters& shippedCompute() {
  static const perf::ComputeParameters parameters = valueOrThrow(perf::defaultComputeParameters(shippedConfigPaths()));
  return parameters;
}

inline const perf::CommunicationParameters& shippedCommunication() {
  static const perf::CommunicationParameters parameters =
      valueOrThrow(perf::defaultCommunicationParameters(shippedConfigPaths()));
  return parameters;
}

}  // namespace trainsim
