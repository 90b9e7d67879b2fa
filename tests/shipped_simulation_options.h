// Simulation options with the models' shipped defaults (parallelism::defaultSimulationOptions),
// for tests of modules that link trainsim::parallelism.
#pragma once

#include "parallelism/iteration_simulation.h"
#include "tests/shipped_defaults.h"

namespace trainsim {

inline parallelism::SimulationOptions shippedSimulationOptions() {
  static const parallelism::SimulationOptions options =
      valueOrThrow(parallelism::defaultSimulationOptions(shippedConfigPaths()));
  return options;
}

}  // namespace trainsim
