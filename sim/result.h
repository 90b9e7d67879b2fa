// What a finished simulation run reports: makespan, event counts and per-link statistics.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/engine.h"
#include "sim/flow_network.h"
#include "sim/sim_time.h"
#include "sim/task_executor.h"

namespace trainsim::sim {

struct RunSummary {
  SimTime makespan = 0;           // latest task finish time
  uint64_t events_processed = 0;  // engine events fired
  std::size_t tasks = 0;
  std::size_t tasks_finished = 0;  // < tasks when the graph had a cycle
  FlowNetwork::Counters flow_counters;
  std::vector<LinkStats> links;  // indexed by LinkId
};

[[nodiscard]] RunSummary summarizeRun(const Engine& engine, const FlowNetwork& network, const TaskExecutor& executor);

// Mean fraction of a link's capacity used over `span` (bytes carried / (capacity · span)).
[[nodiscard]] double linkUtilisation(const LinkStats& stats, double capacity_Bps, SimTime span);

}  // namespace trainsim::sim
