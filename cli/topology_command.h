// `trainsim topology CLUSTER.yaml`: devices, links, bandwidths, bisection, paths.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command_context.h"

namespace trainsim::cli {

struct TopologyOptions {
  std::string cluster;
  std::vector<std::string> overrides;
  std::vector<std::string> path;  // two endpoints
  std::string json_file;
  std::string dot_file;
  bool no_bisection = false;
};

void addTopologyCommand(CLI::App& app, TopologyOptions& options);
int runTopology(const TopologyOptions& options, const CommandContext& context);

}  // namespace trainsim::cli
