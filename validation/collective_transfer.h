// How a calibration made on a system's small runs carries over to its large ones: for each
// system of the collective suite with accuracy-target curves on at most two nodes and on
// more, the communication parameters are fitted (as `trainsim calibrate` fits them) to the
// small curves only, and the large curves are predicted with the shipped parameters and with
// the fitted ones. A "node" is a node of the cluster preset: an 8-GPU server, or a whole
// NVL72 rack for the GB200/GB300 presets.
#pragma once

#include <string>
#include <vector>

#include "base/config_paths.h"
#include "base/expected.h"
#include "calibrate/communication_fit.h"
#include "perf/communication_parameters.h"

namespace trainsim::validation {

// Curves on at most this many nodes are fitted, the others predicted.
inline constexpr int64_t kTransferFitMaxNodes = 2;

struct ScaleTransfer {
  std::string system;
  std::vector<std::string> fitted_curves;    // ids, on <= kTransferFitMaxNodes nodes
  std::vector<std::string> held_out_curves;  // ids, on more nodes
  int held_out_points = 0;                   // sizes >= 1 MiB of the held-out curves
  double preset_mape = 0.0;                  // bus bandwidth, shipped parameters
  double preset_bias = 0.0;
  double calibrated_mape = 0.0;  // after fitting on the small curves
  double calibrated_bias = 0.0;
  std::vector<calibrate::FittedValue> values;
};

[[nodiscard]] Expected<std::vector<ScaleTransfer>> collectiveScaleTransfer(
    const ConfigPaths& paths, const perf::CommunicationParameters& parameters);

}  // namespace trainsim::validation
