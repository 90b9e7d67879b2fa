// The workload vocabulary: a DAG of tasks (activities) with dependencies, built by the
// schedule/collective builders and executed by a TaskExecutor.
//
// Task kinds:
//  - compute: occupies its stream for a fixed duration (a kernel, or any delay);
//  - flow: sends bytes along a route (directed links + latency) through the FlowNetwork;
//  - group: a composite that starts when its dependencies are met (and its stream is
//    free), lets its children start, and completes when all its children have completed
//    (completes at once when it has none). Collectives are groups of flows.
//
// Streams: tasks issued on the same stream run one after another in issue order, as
// kernels on a CUDA stream: each task on a stream implicitly depends on the task issued on
// that stream before it. Different streams run concurrently.
//
// Contention: a task may be declared to slow the compute tasks of a stream while it runs
// (addContention), as an NCCL kernel holds some of a GPU's SMs while the GEMMs beside it
// run on the rest. A compute task's duration is its length at full speed; it stretches
// while contenders of its stream run.
//
// A child starts only after its parent group started (and after its own dependencies). A
// child must not be on its parent's stream (it would wait for its parent to finish).
//
// Memory: tasks are stored as parallel arrays (about 21 bytes per task), flows' parameters
// in a side table, dependencies as an edge list and routes in a shared pool, so a graph of
// millions of tasks makes no per-task heap allocation. Reuse a RouteId for every flow that
// takes the same path.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "sim/flow_network.h"
#include "sim/sim_time.h"
#include "topology/link.h"
#include "topology/route.h"

namespace trainsim::sim {

using TaskId = uint32_t;
using StreamId = uint32_t;
using RouteId = uint32_t;
inline constexpr TaskId kNoTask = std::numeric_limits<TaskId>::max();
inline constexpr StreamId kNoStream = std::numeric_limits<StreamId>::max();

enum class TaskKind : uint8_t { kCompute, kFlow, kGroup };

// Where a task runs and what it belongs to.
struct TaskOptions {
  StreamId stream = kNoStream;  // serialise with other tasks of this stream
  TaskId parent = kNoTask;      // the group this task is a child of
  uint32_t tag = 0;             // free for the builder: an op kind, a category for the breakdown, ...
};

// A list of task ids accepted as {a, b}, a std::vector or a std::span (a view: only valid
// for the duration of the call it is passed to).
class TaskIds {
 public:
  TaskIds() = default;
  TaskIds(std::initializer_list<TaskId> ids) : ids_(ids.begin(), ids.size()) {}  // NOLINT
  TaskIds(std::span<const TaskId> ids) : ids_(ids) {}                            // NOLINT
  TaskIds(const std::vector<TaskId>& ids) : ids_(ids) {}                         // NOLINT
  [[nodiscard]] auto begin() const { return ids_.begin(); }
  [[nodiscard]] auto end() const { return ids_.end(); }
  [[nodiscard]] std::size_t size() const { return ids_.size(); }

 private:
  std::span<const TaskId> ids_;
};

struct StreamInfo {
  int32_t device = -1;  // e.g. the GPU's rank; -1 when not tied to a device
  std::string name;     // "compute", "tp_comm", ...
};

struct Dependency {
  TaskId before;
  TaskId after;
};

// While `task` runs, compute tasks on `stream` progress at (1 - fraction) of full speed.
struct Contention {
  TaskId task;
  StreamId stream;
  double fraction;
};

class TaskGraph {
 public:
  StreamId addStream(int32_t device, std::string name);
  // A path for flows. Links in order from source to destination (empty: same device).
  RouteId addRoute(std::span<const LinkId> links, SimTime latency);
  // The links of a bundle of flows run at one rate (FlowNetwork, "Bundles"): distinct links,
  // `multiplicity[i]` of the member flows crossing links[i].
  RouteId addBundleRoute(std::span<const LinkId> links, std::span<const uint32_t> multiplicity, SimTime latency);
  RouteId addRoute(const topology::Route& route) { return addRoute(route.links, route.latency_ps); }

  TaskId addCompute(SimTime duration, TaskIds dependencies = {}, TaskOptions options = {});
  TaskId addFlow(RouteId route, double bytes, TaskIds dependencies = {}, TaskOptions options = {},
                 double rate_cap_Bps = kNoRateCap);
  TaskId addGroup(TaskIds dependencies = {}, TaskOptions options = {});
  // `after` starts only once `before` has completed. Any order of creation is accepted;
  // a cycle leaves its tasks unfinished (TaskExecutor::allFinished() is then false).
  void addDependency(TaskId before, TaskId after);
  // While `task` runs, the compute tasks of `stream` run at (1 - fraction) of full speed;
  // the fractions of contenders running together add up (see TaskExecutor). 0 < fraction < 1.
  void addContention(TaskId task, StreamId stream, double fraction);

  void reserve(std::size_t tasks, std::size_t dependencies);

  [[nodiscard]] std::size_t taskCount() const { return kind_.size(); }
  [[nodiscard]] std::size_t streamCount() const { return streams_.size(); }
  [[nodiscard]] std::size_t routeCount() const { return route_latency_.size(); }
  [[nodiscard]] std::span<const Dependency> dependencies() const { return dependencies_; }
  [[nodiscard]] std::span<const Contention> contentions() const { return contentions_; }

  [[nodiscard]] TaskKind kind(TaskId task) const { return kind_[task]; }
  [[nodiscard]] StreamId stream(TaskId task) const { return stream_[task]; }
  [[nodiscard]] TaskId parent(TaskId task) const { return parent_[task]; }
  [[nodiscard]] uint32_t tag(TaskId task) const { return tag_[task]; }
  // Compute tasks only.
  [[nodiscard]] SimTime duration(TaskId task) const;
  // Flow tasks only.
  [[nodiscard]] RouteId route(TaskId task) const;
  [[nodiscard]] double flowBytes(TaskId task) const;
  [[nodiscard]] double flowRateCap(TaskId task) const;

  [[nodiscard]] std::span<const LinkId> routeLinks(RouteId route) const;
  // A bundle's member flows per link, parallel to routeLinks; empty for a path (1 each).
  [[nodiscard]] std::span<const uint32_t> routeMultiplicity(RouteId route) const;
  [[nodiscard]] SimTime routeLatency(RouteId route) const { return route_latency_[route]; }
  [[nodiscard]] const StreamInfo& streamInfo(StreamId stream) const { return streams_[stream]; }
  // The last task issued on a stream so far (kNoTask when none).
  [[nodiscard]] TaskId lastOnStream(StreamId stream) const { return stream_tail_[stream]; }

  // Approximate heap bytes held by the graph.
  [[nodiscard]] std::size_t memoryBytes() const;

 private:
  struct FlowParams {
    RouteId route;
    double bytes;
    double rate_cap_Bps;
  };

  TaskId addTask(TaskKind kind, int64_t value, TaskIds dependencies, const TaskOptions& options);

  // Per task.
  std::vector<TaskKind> kind_;
  std::vector<StreamId> stream_;
  std::vector<TaskId> parent_;
  std::vector<uint32_t> tag_;
  std::vector<int64_t> value_;  // compute: duration; flow: index into flows_
  std::vector<FlowParams> flows_;
  std::vector<Dependency> dependencies_;
  std::vector<Contention> contentions_;

  std::vector<StreamInfo> streams_;
  std::vector<TaskId> stream_tail_;

  std::vector<uint32_t> route_offset_{0};  // route r's links: [offset[r], offset[r + 1])
  std::vector<LinkId> route_links_;
  std::vector<SimTime> route_latency_;
  // Per route: where its multiplicities start in route_multiplicity_, kPathRoute for a path.
  static constexpr uint32_t kPathRoute = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> route_multiplicity_begin_;
  std::vector<uint32_t> route_multiplicity_;
};

}  // namespace trainsim::sim
