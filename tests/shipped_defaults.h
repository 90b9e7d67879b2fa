// The models' shipped defaults (configs/defaults/, perf/default_parameters.h) for tests: what
// the commands run with when no calibration is given.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

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

// The text of a shipped defaults file (configs/defaults/FILE) with its first `from` replaced
// by `to` (a test failure where `from` is not in it), for malformed-file tests.
inline std::string shippedDefaultsWith(const std::string& file, const std::string& from, const std::string& to) {
  std::string text;
  {
    std::ifstream in(std::string(TRAINSIM_CONFIG_DIR_FOR_TESTS) + "/defaults/" + file);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

}  // namespace trainsim
