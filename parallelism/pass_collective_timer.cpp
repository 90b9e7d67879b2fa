#include "parallelism/pass_collective_timer.h"

#include <optional>

#include "parallelism/parallel_group_members.h"
#include "perf/collective_builder.h"
#include "sim/engine.h"
#include "sim/flow_network.h"
#include "sim/task_executor.h"

namespace trainsim::parallelism {

PassCollectiveTimer::PassCollectiveTimer(const ParallelPlan& plan, const topology::Cluster& cluster,
                                         topology::Router& router, const perf::CommunicationParameters& communication)
    : layout_(plan), cluster_(cluster), router_(router), communication_(communication) {}

double PassCollectiveTimer::seconds(const Communication& comm) const {
  const auto key = std::make_tuple(static_cast<int>(comm.group), static_cast<int>(comm.op), comm.bytes);
  auto cached = seconds_.find(key);
  if (cached == seconds_.end()) {
    const double seconds =
        comm.group == ParallelGroup::kContext ? concurrentContextSeconds(comm) : oneGroupSeconds(comm);
    cached = seconds_.emplace(key, seconds).first;
  }
  return cached->second;
}

double PassCollectiveTimer::oneGroupSeconds(const Communication& comm) const {
  sim::TaskGraph scratch;
  const perf::CollectiveBuilder builder(cluster_, router_, scratch, communication_);
  const perf::CollectiveRequest request{
      comm.op, groupMembers(layout_, comm.group, layout_.coordinate(0)), comm.bytes, {}, {}};
  return valueOrThrow(builder.choose(request)).estimated_time_s;
}

double PassCollectiveTimer::concurrentContextSeconds(const Communication& comm) const {
  sim::TaskGraph graph;
  perf::CollectiveBuilder builder(cluster_, router_, graph, communication_);
  std::optional<perf::CollectiveChoice> choice;  // the groups are symmetric: chosen once
  for (int64_t r = 0; r < layout_.ranks(); ++r) {
    const RankCoordinate coordinate = layout_.coordinate(r);
    if (coordinate.pp != 0) continue;
    const std::vector<int64_t> group = layout_.contextGroup(coordinate);
    if (group.size() < 2 || group.front() != r) continue;
    const perf::CollectiveRequest request{comm.op, group, comm.bytes, {}, {}};
    if (!choice) choice = valueOrThrow(builder.choose(request));
    builder.add(request, *choice);
  }
  if (!choice) return 0.0;
  if (context_capacities_.empty()) {
    context_capacities_ = perf::CollectiveBuilder::effectiveCapacities(cluster_, communication_);
  }
  sim::Engine engine;
  sim::FlowNetwork network(engine, context_capacities_);
  sim::TaskExecutor executor(engine, network, graph);
  return sim::simTimeToSeconds(executor.run());
}

}  // namespace trainsim::parallelism
