#include "sim/task_graph.h"

#include <cassert>
#include <cmath>
#include <utility>

namespace trainsim::sim {

StreamId TaskGraph::addStream(int32_t device, std::string name) {
  streams_.push_back(StreamInfo{device, std::move(name)});
  stream_tail_.push_back(kNoTask);
  return static_cast<StreamId>(streams_.size() - 1);
}

RouteId TaskGraph::addRoute(std::span<const LinkId> links, SimTime latency) {
  assert(latency >= 0);
  route_links_.insert(route_links_.end(), links.begin(), links.end());
  route_offset_.push_back(static_cast<uint32_t>(route_links_.size()));
  route_latency_.push_back(latency);
  route_multiplicity_begin_.push_back(kPathRoute);
  return static_cast<RouteId>(route_latency_.size() - 1);
}

RouteId TaskGraph::addBundleRoute(std::span<const LinkId> links, std::span<const uint32_t> multiplicity,
                                  SimTime latency) {
  assert(links.size() == multiplicity.size());
  const RouteId route = addRoute(links, latency);
  route_multiplicity_begin_.back() = static_cast<uint32_t>(route_multiplicity_.size());
  route_multiplicity_.insert(route_multiplicity_.end(), multiplicity.begin(), multiplicity.end());
  return route;
}

std::span<const LinkId> TaskGraph::routeLinks(RouteId route) const {
  assert(route < route_latency_.size());
  return std::span<const LinkId>(route_links_)
      .subspan(route_offset_[route], route_offset_[route + 1] - route_offset_[route]);
}

std::span<const uint32_t> TaskGraph::routeMultiplicity(RouteId route) const {
  assert(route < route_latency_.size());
  const uint32_t begin = route_multiplicity_begin_[route];
  if (begin == kPathRoute) return {};
  return std::span<const uint32_t>(route_multiplicity_).subspan(begin, route_offset_[route + 1] - route_offset_[route]);
}

TaskId TaskGraph::addTask(TaskKind kind, int64_t value, TaskIds dependencies, const TaskOptions& options) {
  assert(kind_.size() < kNoTask);
  const auto task = static_cast<TaskId>(kind_.size());
  assert(options.stream == kNoStream || options.stream < streams_.size());
  assert(options.parent == kNoTask || (options.parent < task && kind_[options.parent] == TaskKind::kGroup));
  assert(options.parent == kNoTask || options.stream == kNoStream || stream_[options.parent] != options.stream);
  kind_.push_back(kind);
  stream_.push_back(options.stream);
  parent_.push_back(options.parent);
  tag_.push_back(options.tag);
  value_.push_back(value);
  for (const TaskId before : dependencies) addDependency(before, task);
  if (options.stream != kNoStream) {
    TaskId& tail = stream_tail_[options.stream];
    if (tail != kNoTask) dependencies_.push_back(Dependency{tail, task});
    tail = task;
  }
  return task;
}

TaskId TaskGraph::addCompute(SimTime duration, TaskIds dependencies, TaskOptions options) {
  assert(duration >= 0);
  return addTask(TaskKind::kCompute, duration, dependencies, options);
}

TaskId TaskGraph::addFlow(RouteId route, double bytes, TaskIds dependencies, TaskOptions options, double rate_cap_Bps) {
  assert(route < route_latency_.size());
  assert(bytes >= 0.0 && std::isfinite(bytes));
  assert(rate_cap_Bps > 0.0);
  flows_.push_back(FlowParams{route, bytes, rate_cap_Bps});
  return addTask(TaskKind::kFlow, static_cast<int64_t>(flows_.size() - 1), dependencies, options);
}

TaskId TaskGraph::addGroup(TaskIds dependencies, TaskOptions options) {
  return addTask(TaskKind::kGroup, 0, dependencies, options);
}

void TaskGraph::addDependency(TaskId before, TaskId after) {
  assert(before < kind_.size() && after < kind_.size() && before != after);
  dependencies_.push_back(Dependency{before, after});
}

void TaskGraph::addContention(TaskId task, StreamId stream, double fraction) {
  assert(task < kind_.size() && stream < streams_.size());
  assert(fraction > 0.0 && fraction < 1.0);
  contentions_.push_back(Contention{task, stream, fraction});
}

void TaskGraph::reserve(std::size_t tasks, std::size_t dependencies) {
  kind_.reserve(tasks);
  stream_.reserve(tasks);
  parent_.reserve(tasks);
  tag_.reserve(tasks);
  value_.reserve(tasks);
  dependencies_.reserve(dependencies);
}

SimTime TaskGraph::duration(TaskId task) const {
  assert(kind_[task] == TaskKind::kCompute);
  return value_[task];
}

RouteId TaskGraph::route(TaskId task) const {
  assert(kind_[task] == TaskKind::kFlow);
  return flows_[static_cast<std::size_t>(value_[task])].route;
}

double TaskGraph::flowBytes(TaskId task) const {
  assert(kind_[task] == TaskKind::kFlow);
  return flows_[static_cast<std::size_t>(value_[task])].bytes;
}

double TaskGraph::flowRateCap(TaskId task) const {
  assert(kind_[task] == TaskKind::kFlow);
  return flows_[static_cast<std::size_t>(value_[task])].rate_cap_Bps;
}

std::size_t TaskGraph::memoryBytes() const {
  return kind_.capacity() * sizeof(TaskKind) + stream_.capacity() * sizeof(StreamId) +
         parent_.capacity() * sizeof(TaskId) + tag_.capacity() * sizeof(uint32_t) +
         value_.capacity() * sizeof(int64_t) + flows_.capacity() * sizeof(FlowParams) +
         dependencies_.capacity() * sizeof(Dependency) + contentions_.capacity() * sizeof(Contention) +
         route_offset_.capacity() * sizeof(uint32_t) + route_links_.capacity() * sizeof(LinkId) +
         route_latency_.capacity() * sizeof(SimTime) + route_multiplicity_begin_.capacity() * sizeof(uint32_t) +
         route_multiplicity_.capacity() * sizeof(uint32_t) + stream_tail_.capacity() * sizeof(TaskId) +
         streams_.capacity() * sizeof(StreamInfo);
}

}  // namespace trainsim::sim
