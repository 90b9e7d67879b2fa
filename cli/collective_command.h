// `trainsim collective --cluster C --op OP --gpus N`: predicts a collective like nccl-tests prints it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command_context.h"
#include "sim/memory_budget.h"

namespace trainsim::cli {

struct CollectiveOptions {
  std::string cluster;
  std::vector<std::string> overrides;
  std::string op = "all_reduce";
  std::optional<int64_t> gpus;           // default: every GPU of the cluster
  std::optional<int64_t> gpus_per_node;  // default: fill nodes in rank order
  std::string min_bytes = "8";
  std::string max_bytes = "1G";
  double step_factor = 2.0;
  std::string algorithm;
  std::string protocol;
  std::string json_file;
  std::string calibration_file;                          // --calibration calib.yaml
  double max_memory_GiB = sim::kDefaultMemoryBudgetGiB;  // refuse groups estimated above it
};

void addCollectiveCommand(CLI::App& app, CollectiveOptions& options);
int runCollective(const CollectiveOptions& options, const CommandContext& context);

// nccl-tests size syntax: 8, 64K, 32M, 1G (powers of 1024).
[[nodiscard]] double parseByteSize(const std::string& text, const std::string& option);

}  // namespace trainsim::cli
