// How far calibration on a system's small runs goes, and how it carries over to its large
// ones: for each system of the collective suite with accuracy-target curves on at most two
// nodes, the communication parameters are fitted (as `trainsim calibrate` fits them) to those
// curves only; the fitted curves are then scored with the shipped and with the fitted
// parameters (in sample: how close calibrating on at most two nodes gets), and the
// system's curves on more nodes, where it has any, are predicted with both (out of sample). A
// "node" is a node of the cluster preset: an 8-GPU server, or a whole NVL72 rack for the
// GB200/GB300 presets.
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
// The target after calibrating on at most two nodes: bus bandwidth MAPE at most 5%.
inline constexpr double kCalibratedMapeGoal = 0.05;

// Bus bandwidth error over the scored sizes (>= 1 MiB) of a set of curves.
struct CurveSetError {
  int points = 0;
  double mape = 0.0;
  double bias = 0.0;
};

struct ScaleTransfer {
  std::string system;
  std::vector<std::string> fitted_curves;    // ids, on <= kTransferFitMaxNodes nodes
  std::vector<std::string> held_out_curves;  // ids, on more nodes; empty: the system has none
  // Why no calibration was made (too few published sizes for the parameters); empty when one
  // was, and then the calibrated figures below are set.
  std::string not_calibrated;
  CurveSetError fitted_preset;        // the fitted curves, shipped parameters
  CurveSetError fitted_calibrated;    // the fitted curves, after the fit (in sample)
  CurveSetError held_out_preset;      // the larger curves, shipped parameters
  CurveSetError held_out_calibrated;  // the larger curves, after the fit (out of sample)
  std::vector<calibrate::FittedValue> values;
};

[[nodiscard]] Expected<std::vector<ScaleTransfer>> collectiveScaleTransfer(
    const ConfigPaths& paths, const perf::CommunicationParameters& parameters);

}  // namespace trainsim::validation
