// JSON pieces shared by the commands that report on an experiment (SPEC "Result JSON").
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "parallelism/experiment.h"
#include "parallelism/memory_model.h"
#include "validation/expected_error.h"

namespace trainsim::cli {

// The number, or null when unset (time_to_train_s without training.tokens, ...).
[[nodiscard]] nlohmann::ordered_json optionalNumber(const std::optional<double>& value);

// {"dp", "tp", "pp", "cp", "ep", "virtual_stages", "microbatches"}
[[nodiscard]] nlohmann::ordered_json parallelismJson(const parallelism::Experiment& experiment);
// {"peak_bytes_per_gpu", "capacity_bytes", "fits", "weights", "gradients", "optimizer", "activations", "other"}
[[nodiscard]] nlohmann::ordered_json memoryJson(const parallelism::MemoryReport& report);

// The model parameters the experiment's training.stack_overrides set, with or without a stack
// ("compute.memory_efficiency", ...; parallelism::parameterKeys); empty without any.
[[nodiscard]] std::vector<std::string> stackOverrideKeys(const parallelism::Experiment& experiment);

// How far to trust a prediction for `experiment` (validation/expected_error.h), from
// <config_dir>/validation/expected_error.yaml; nullopt where no published run applies.
[[nodiscard]] std::optional<validation::ExpectedError> expectedErrorFor(const parallelism::Experiment& experiment,
                                                                        const ConfigPaths& paths);
// {"mape", "bias", "sources", "rows", "basis"}, or null.
[[nodiscard]] nlohmann::ordered_json expectedErrorJson(const std::optional<validation::ExpectedError>& error);
// "expected error      iteration time +-4.3% (bias +0.7%; each source held out, 51 runs from 6
// sources: ...)\n"; the bias positive where predictions run slower than measured.
[[nodiscard]] std::string expectedErrorText(const std::optional<validation::ExpectedError>& error);

}  // namespace trainsim::cli
