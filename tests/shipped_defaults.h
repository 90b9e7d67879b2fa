// The models' shipped defaults (configs/defaults/, sim/default_parameters.h) for tests: what
// the commands run with when no calibration is given.
#pragma once

#include "base/config_paths.h"
#include "base/expected.h"
#include "sim/communication_parameters.h"
#include "sim/compute_parameters.h"
#include "sim/default_parameters.h"

namespace trainsim {

inline const ConfigPaths& shippedConfigPaths() {
  static const ConfigPaths paths{TRAINSIM_CONFIG_DIR_FOR_TESTS};
  return paths;
}

inline const sim::ComputeParameters& shippedCompute() {
  static const sim::ComputeParameters parameters = valueOrThrow(sim::defaultComputeParameters(shippedConfigPaths()));
  return parameters;
}

inline const sim::CommunicationParameters& shippedCommunication() {
  static const sim::CommunicationParameters parameters =
      valueOrThrow(sim::defaultCommunicationParameters(shippedConfigPaths()));
  return parameters;
}

}  // namespace trainsim
