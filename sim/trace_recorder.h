// Records a simulated run as a Chrome / Perfetto trace-event JSON file (ui.perfetto.dev):
// one process per simulated GPU with a track per stream, and a "network" process holding
// the collectives and transfers, one track per task tag.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/task_executor.h"
#include "sim/task_graph.h"

namespace trainsim::sim {

class TraceRecorder : public TaskObserver {
 public:
  // Names for task tags ("compute", "tp_comm", ...); tags without a name print as numbers.
  explicit TraceRecorder(std::function<std::string(uint32_t)> tag_name = {});

  // Call before the run: remembers the graph's streams (device and name) and, for tasks
  // without a stream, which collective (group) they belong to.
  void beginRun(const TaskGraph& graph);
  void onTaskFinished(const TaskSpan& span) override;

  // The trace-event JSON, events sorted by (process, track, start) so output is deterministic.
  void write(std::ostream& out) const;
  [[nodiscard]] std::size_t eventCount() const { return spans_.size(); }

 private:
  std::function<std::string(uint32_t)> tag_name_;
  std::vector<StreamInfo> streams_;
  std::vector<TaskSpan> spans_;
  std::vector<bool> in_group_;  // per task: a child of a group (a collective's flow)
};

}  // namespace trainsim::sim
