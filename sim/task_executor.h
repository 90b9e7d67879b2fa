// Runs a TaskGraph on an Engine: compute tasks as timed events, flow tasks through the
// FlowNetwork, groups as joins of their children. Tasks start at the simulated instant
// their last dependency completes (and their parent group has started); within one
// instant, tasks are started and finished in a fixed order, so runs are reproducible.
//
// Contention (TaskGraph::addContention): a compute task on a contended stream progresses
// at 1 - (the fractions of the stream's contenders running now); each time a contender
// starts or ends, its remaining work is re-timed at the new speed. At a speed of zero or
// less it stalls until a contender ends.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/engine.h"
#include "sim/flow_network.h"
#include "sim/sim_time.h"
#include "sim/task_graph.h"

namespace trainsim::sim {

// One executed task, as observers see it.
struct TaskSpan {
  TaskId task = kNoTask;
  TaskKind kind = TaskKind::kCompute;
  StreamId stream = kNoStream;
  uint32_t tag = 0;
  SimTime start = 0;
  SimTime finish = kTimeNever;  // kTimeNever in onTaskStarted
};

// Subscribes to task starts and completions (tracing, per-stream timelines, breakdowns).
// More about the task (its parent, its route, the stream's device) is in the TaskGraph.
class TaskObserver {
 public:
  virtual ~TaskObserver() = default;
  virtual void onTaskStarted(const TaskSpan& /*span*/) {}
  virtual void onTaskFinished(const TaskSpan& span) = 0;
};

class TaskExecutor {
 public:
  // `graph`, `engine` and `network` must outlive the executor; the graph must not change
  // after the executor is built. The network must run on `engine`.
  TaskExecutor(Engine& engine, FlowNetwork& network, const TaskGraph& graph);
  TaskExecutor(const TaskExecutor&) = delete;
  TaskExecutor& operator=(const TaskExecutor&) = delete;

  // Observers are called in the order they were added; they must outlive the run.
  void addObserver(TaskObserver* observer);

  // Starts, at engine.now(), every task without unmet dependencies. Call once.
  void start();
  // start() (if not done yet), then runs the engine until it is idle; returns makespan().
  // Throws InputError when the run would pass the clock's range (sim::kTimeLimit).
  SimTime run();

  [[nodiscard]] bool allFinished() const { return finished_count_ == graph_.taskCount(); }
  [[nodiscard]] std::size_t finishedCount() const { return finished_count_; }
  [[nodiscard]] bool finished(TaskId task) const { return finish_[task] != kTimeNever; }
  // kTimeNever for a task that has not started / finished.
  [[nodiscard]] SimTime startTime(TaskId task) const { return start_[task]; }
  [[nodiscard]] SimTime finishTime(TaskId task) const { return finish_[task]; }
  // The latest finish time so far (0 when nothing finished).
  [[nodiscard]] SimTime makespan() const { return makespan_; }

  [[nodiscard]] const TaskGraph& graph() const { return graph_; }
  // Approximate heap bytes held by the executor (not counting the graph).
  [[nodiscard]] std::size_t memoryBytes() const;

 private:
  void onTaskDone(uint64_t task);
  // A compute task of a contended stream: payload = task | generation << 32.
  void onContendedComputeDone(uint64_t payload);
  void beginContended(TaskId task, StreamId stream);
  // Re-times the stream's running compute task at the current load (now).
  void retime(StreamId stream);
  void contend(TaskId task, bool starting);
  void drain();
  void begin(TaskId task);
  void finish(TaskId task);
  [[nodiscard]] TaskSpan span(TaskId task) const {
    return TaskSpan{task, graph_.kind(task), graph_.stream(task), graph_.tag(task), start_[task], finish_[task]};
  }

  Engine& engine_;
  FlowNetwork& network_;
  const TaskGraph& graph_;
  HandlerId done_handler_;
  HandlerId contended_done_handler_;
  std::vector<TaskObserver*> observers_;

  // Successors and children in CSR form.
  std::vector<uint32_t> successor_offset_;
  std::vector<TaskId> successors_;
  std::vector<uint32_t> child_offset_;
  std::vector<TaskId> children_;

  // Unmet dependencies (+1 until the parent starts); for a started group, unfinished children.
  std::vector<uint32_t> pending_;
  std::vector<SimTime> start_;
  std::vector<SimTime> finish_;
  std::size_t finished_count_ = 0;
  SimTime makespan_ = 0;
  bool started_ = false;
  bool draining_ = false;

  // Contention: the graph's entries in task order, and per stream (sized only when the
  // graph has contention) the load, the running compute task and its work left.
  std::vector<Contention> contentions_;
  struct StreamLoad {
    bool contended = false;
    uint32_t contenders = 0;
    uint32_t generation = 0;
    double load = 0.0;
    TaskId running = kNoTask;
    double work_left_ps = 0.0;  // at full speed, as of `updated`
    SimTime updated = 0;
  };
  std::vector<StreamLoad> stream_loads_;

  // FIFO work lists of the current instant.
  std::vector<TaskId> ready_;
  std::size_t ready_head_ = 0;
  std::vector<TaskId> done_;
  std::size_t done_head_ = 0;
};

}  // namespace trainsim::sim
