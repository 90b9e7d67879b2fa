#include "sim/task_executor.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

#include "base/error.h"

namespace trainsim::sim {

TaskExecutor::TaskExecutor(Engine& engine, FlowNetwork& network, const TaskGraph& graph)
    : engine_(engine), network_(network), graph_(graph) {
  assert(&network.engine() == &engine);
  done_handler_ = engine_.addHandler<&TaskExecutor::onTaskDone>(this);
  contended_done_handler_ = engine_.addHandler<&TaskExecutor::onContendedComputeDone>(this);
  const std::size_t n = graph_.taskCount();
  pending_.assign(n, 0);
  start_.assign(n, kTimeNever);
  finish_.assign(n, kTimeNever);

  // Successor lists by counting sort of the dependency edges (kept in insertion order).
  const std::span<const Dependency> deps = graph_.dependencies();
  successor_offset_.assign(n + 1, 0);
  for (const Dependency& d : deps) {
    ++successor_offset_[d.before + 1];
    ++pending_[d.after];
  }
  for (std::size_t i = 0; i < n; ++i) successor_offset_[i + 1] += successor_offset_[i];
  successors_.resize(deps.size());
  {
    std::vector<uint32_t> fill(successor_offset_.begin(), successor_offset_.end() - 1);
    for (const Dependency& d : deps) successors_[fill[d.before]++] = d.after;
  }

  // Children of groups, in creation order.
  child_offset_.assign(n + 1, 0);
  std::size_t child_count = 0;
  for (TaskId t = 0; t < n; ++t) {
    const TaskId p = graph_.parent(t);
    if (p == kNoTask) continue;
    ++child_offset_[p + 1];
    ++pending_[t];  // released when the parent starts
    ++child_count;
  }
  for (std::size_t i = 0; i < n; ++i) child_offset_[i + 1] += child_offset_[i];
  children_.resize(child_count);
  {
    std::vector<uint32_t> fill(child_offset_.begin(), child_offset_.end() - 1);
    for (TaskId t = 0; t < n; ++t) {
      const TaskId p = graph_.parent(t);
      if (p != kNoTask) children_[fill[p]++] = t;
    }
  }

  const std::span<const Contention> contentions = graph_.contentions();
  if (!contentions.empty()) {
    contentions_.assign(contentions.begin(), contentions.end());
    std::stable_sort(contentions_.begin(), contentions_.end(),
                     [](const Contention& a, const Contention& b) { return a.task < b.task; });
    stream_loads_.resize(graph_.streamCount());
    for (const Contention& c : contentions_) stream_loads_[c.stream].contended = true;
  }
}

void TaskExecutor::addObserver(TaskObserver* observer) {
  assert(observer != nullptr);
  observers_.push_back(observer);
}

void TaskExecutor::start() {
  assert(!started_);
  started_ = true;
  for (TaskId t = 0; t < graph_.taskCount(); ++t) {
    if (pending_[t] == 0) ready_.push_back(t);
  }
  drain();
}

SimTime TaskExecutor::run() {
  if (!started_) start();
  engine_.run();
  if (engine_.overflowed()) {
    throwInputError("", "",
                    "the simulation needs more than the clock's " +
                        std::to_string(std::llround(simTimeToSeconds(kTimeLimit) / 86400.0)) +
                        " days of simulated time (int64 picoseconds); no task graph trainsim can time is that long: "
                        "look for a size, a rate or a bandwidth off by orders of magnitude");
  }
  return makespan_;
}

void TaskExecutor::onTaskDone(uint64_t task) {
  done_.push_back(static_cast<TaskId>(task));
  drain();
}

void TaskExecutor::onContendedComputeDone(uint64_t payload) {
  const auto task = static_cast<TaskId>(payload & 0xffffffffU);
  const auto generation = static_cast<uint32_t>(payload >> 32);
  StreamLoad& stream = stream_loads_[graph_.stream(task)];
  if (stream.running != task || stream.generation != generation) return;  // re-timed since
  stream.running = kNoTask;
  onTaskDone(task);
}

void TaskExecutor::beginContended(TaskId task, StreamId stream) {
  StreamLoad& load = stream_loads_[stream];
  assert(load.running == kNoTask);
  load.running = task;
  load.work_left_ps = static_cast<double>(graph_.duration(task));
  load.updated = engine_.now();
  retime(stream);
}

void TaskExecutor::retime(StreamId stream) {
  StreamLoad& load = stream_loads_[stream];
  ++load.generation;  // the event scheduled before, if any, is stale now
  const double speed = 1.0 - load.load;
  if (speed <= 0.0) return;  // stalled until a contender ends
  const SimTime finish = engine_.now() + roundPicoseconds(load.work_left_ps / speed);
  engine_.schedule(finish, contended_done_handler_, load.running | (static_cast<uint64_t>(load.generation) << 32));
}

void TaskExecutor::contend(TaskId task, bool starting) {
  auto entry = std::lower_bound(contentions_.begin(), contentions_.end(), task,
                                [](const Contention& c, TaskId t) { return c.task < t; });
  const SimTime now = engine_.now();
  for (; entry != contentions_.end() && entry->task == task; ++entry) {
    StreamLoad& load = stream_loads_[entry->stream];
    if (load.running != kNoTask) {
      // Work done since the last change, at the speed of that interval.
      const double speed = std::max(0.0, 1.0 - load.load);
      load.work_left_ps = std::max(0.0, load.work_left_ps - static_cast<double>(now - load.updated) * speed);
      load.updated = now;
    }
    if (starting) {
      ++load.contenders;
      load.load += entry->fraction;
    } else {
      assert(load.contenders > 0);
      // Back to exactly 0 when the last contender ends (no rounding residue).
      load.load = --load.contenders == 0 ? 0.0 : load.load - entry->fraction;
    }
    if (load.running != kNoTask) retime(entry->stream);
  }
}

void TaskExecutor::drain() {
  assert(!draining_);
  draining_ = true;
  for (;;) {
    if (done_head_ < done_.size()) {
      finish(done_[done_head_++]);
    } else if (ready_head_ < ready_.size()) {
      begin(ready_[ready_head_++]);
    } else {
      break;
    }
  }
  done_.clear();
  done_head_ = 0;
  ready_.clear();
  ready_head_ = 0;
  draining_ = false;
}

void TaskExecutor::begin(TaskId task) {
  const SimTime now = engine_.now();
  start_[task] = now;
  if (!observers_.empty()) {
    const TaskSpan started = span(task);
    for (TaskObserver* observer : observers_) observer->onTaskStarted(started);
  }
  switch (graph_.kind(task)) {
    case TaskKind::kCompute: {
      const SimTime duration = graph_.duration(task);
      const StreamId stream = graph_.stream(task);
      if (duration > 0 && stream != kNoStream && !stream_loads_.empty() && stream_loads_[stream].contended) {
        beginContended(task, stream);
      } else if (duration == 0) {
        done_.push_back(task);
      } else {
        engine_.schedule(now + duration, done_handler_, task);
      }
      break;
    }
    case TaskKind::kFlow: {
      const RouteId route = graph_.route(task);
      network_.startFlow(graph_.routeLinks(route), graph_.routeMultiplicity(route), graph_.flowBytes(task),
                         graph_.routeLatency(route), EventTarget{done_handler_, task}, graph_.flowRateCap(task));
      break;
    }
    case TaskKind::kGroup: {
      const uint32_t first = child_offset_[task];
      const uint32_t last = child_offset_[task + 1];
      pending_[task] = last - first;  // now counts unfinished children
      if (first == last) {
        done_.push_back(task);
        break;
      }
      for (uint32_t i = first; i < last; ++i) {
        const TaskId child = children_[i];
        assert(pending_[child] > 0);
        if (--pending_[child] == 0) ready_.push_back(child);
      }
      break;
    }
  }
  if (!contentions_.empty()) contend(task, true);
}

void TaskExecutor::finish(TaskId task) {
  const SimTime now = engine_.now();
  assert(start_[task] != kTimeNever && finish_[task] == kTimeNever);
  finish_[task] = now;
  ++finished_count_;
  makespan_ = std::max(makespan_, now);
  if (!observers_.empty()) {
    const TaskSpan finished = span(task);
    for (TaskObserver* observer : observers_) observer->onTaskFinished(finished);
  }
  for (uint32_t i = successor_offset_[task]; i < successor_offset_[task + 1]; ++i) {
    const TaskId next = successors_[i];
    assert(pending_[next] > 0);
    if (--pending_[next] == 0) ready_.push_back(next);
  }
  const TaskId parent = graph_.parent(task);
  if (parent != kNoTask) {
    assert(pending_[parent] > 0);
    if (--pending_[parent] == 0) done_.push_back(parent);
  }
  if (!contentions_.empty()) contend(task, false);
}

std::size_t TaskExecutor::memoryBytes() const {
  return successor_offset_.capacity() * sizeof(uint32_t) + successors_.capacity() * sizeof(TaskId) +
         child_offset_.capacity() * sizeof(uint32_t) + children_.capacity() * sizeof(TaskId) +
         pending_.capacity() * sizeof(uint32_t) + start_.capacity() * sizeof(SimTime) +
         finish_.capacity() * sizeof(SimTime) + ready_.capacity() * sizeof(TaskId) + done_.capacity() * sizeof(TaskId) +
         contentions_.capacity() * sizeof(Contention) + stream_loads_.capacity() * sizeof(StreamLoad);
}

}  // namespace trainsim::sim
