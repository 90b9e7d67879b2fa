#include "perf/collective_simulation.h"

#include "perf/collective_builder.h"
#include "sim/engine.h"
#include "sim/flow_network.h"
#include "sim/task_executor.h"
#include "sim/task_graph.h"

namespace trainsim::perf {

CollectiveSimulator::CollectiveSimulator(const topology::Cluster& cluster, CommunicationParameters parameters)
    : cluster_(cluster),
      parameters_(parameters),
      router_(cluster),
      capacities_(CollectiveBuilder::effectiveCapacities(cluster, parameters_)) {}

Expected<CollectiveResult> CollectiveSimulator::simulate(const CollectiveRequest& request) {
  sim::TaskGraph graph;
  CollectiveBuilder builder(cluster_, router_, graph, parameters_);
  Expected<CollectiveChoice> choice = builder.choose(request);
  if (!choice.ok()) return choice.error();
  builder.add(request, choice.value());

  sim::Engine engine;
  sim::FlowNetwork network(engine, capacities_);
  sim::TaskExecutor executor(engine, network, graph);
  const Expected<sim::SimTime> makespan = catchInputErrors([&] { return executor.run(); });
  if (!makespan.ok()) return makespan.error();

  CollectiveResult result;
  result.choice = choice.value();
  result.time_s = sim::simTimeToSeconds(makespan.value());
  result.algbw_Bps = result.time_s > 0.0 ? request.bytes / result.time_s : 0.0;
  result.busbw_Bps = result.algbw_Bps * busBandwidthFactor(request.op, static_cast<int64_t>(request.ranks.size()));
  for (sim::TaskId task = 0; task < graph.taskCount(); ++task) {
    if (graph.kind(task) == sim::TaskKind::kFlow) ++result.flows;
  }
  return result;
}

}  // namespace trainsim::perf
