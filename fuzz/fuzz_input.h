// What the fuzz targets share: the fuzzer's bytes as text, and the rule for what a target
// may do with them. Reading bad input is the readers' job: an InputError (exit 2 in the
// CLI) is the expected outcome, not a finding. A crash, a sanitizer report, a hang, a leak
// or any other exception escaping a reader is a finding (docs/testing.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/config_paths.h"

namespace trainsim::fuzz {

inline std::string inputText(const uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The shipped presets (configs/), so that an experiment may name them as users do.
inline ConfigPaths shippedConfigPaths() { return ConfigPaths{TRAINSIM_FUZZ_CONFIG_DIR}; }

}  // namespace trainsim::fuzz
