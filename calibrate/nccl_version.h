// NCCL releases as NCCL_VERSION_CODE, the number `communication.nccl_version` holds
// (perf/communication_parameters.h): major x 10000 + minor x 100 + patch, as nccl.h defines
// it from NCCL 2.9 on (22703 for 2.27.3).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace trainsim::calibrate {

// A release written MAJOR.MINOR.PATCH ("2.27.3" -> 22703); none unless it reads so, each part
// at most three digits and minor and patch below 100.
[[nodiscard]] std::optional<double> ncclVersionCode(std::string_view release);

// The code ncclGetVersion() returned, as nccl-tests prints it ("nccl-library=22602"), in
// today's form: releases before 2.9 returned major x 1000 + minor x 100 + patch (2804 for
// 2.8.4), which this turns into 20804. None for a number that is neither form.
[[nodiscard]] std::optional<double> ncclVersionCodeFromLibrary(int64_t code);

}  // namespace trainsim::calibrate
