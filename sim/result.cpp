#include "sim/result.h"

namespace trainsim::sim {

RunSummary summarizeRun(const Engine& engine, const FlowNetwork& network, const TaskExecutor& executor) {
  RunSummary summary;
  summary.makespan = executor.makespan();
  summary.events_processed = engine.eventsProcessed();
  summary.tasks = executor.graph().taskCount();
  summary.tasks_finished = executor.finishedCount();
  summary.flow_counters = network.counters();
  summary.links.reserve(network.linkCount());
  for (LinkId link = 0; link < network.linkCount(); ++link) summary.links.push_back(network.linkStats(link));
  return summary;
}

double linkUtilisation(const LinkStats& stats, double capacity_Bps, SimTime span) {
  if (span <= 0 || capacity_Bps <= 0.0) return 0.0;
  return stats.bytes_carried / (capacity_Bps * simTimeToSeconds(span));
}

}  // namespace trainsim::sim
