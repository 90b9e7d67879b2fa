// JSON pieces shared by the commands that report on an experiment (SPEC "Result JSON").
#pragma once

#include <nlohmann/json.hpp>

#include "parallelism/experiment.h"
#include "parallelism/memory_model.h"

namespace trainsim::cli {

// {"dp", "tp", "pp", "cp", "ep", "virtual_stages", "microbatches"}
[[nodiscard]] nlohmann::ordered_json parallelismJson(const parallelism::Experiment& experiment);
// {"peak_bytes_per_gpu", "capacity_bytes", "fits", "weights", "gradients", "optimizer", "activations", "other"}
[[nodiscard]] nlohmann::ordered_json memoryJson(const parallelism::MemoryReport& report);

}  // namespace trainsim::cli
