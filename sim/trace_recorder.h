// Records a simulated run as a Chrome / Perfetto trace-event JSON file (ui.perfetto.dev):
// one process per simulated GPU, with a track per stream (compute) and a track per kind of
// communication (tp_comm, dp_comm, pp_send, ...) holding the collectives that GPU takes part
// in and the transfers it sends.
//
// Collectives are groups of flows shared by several GPUs and sit on no stream: a collective
// is shown on every GPU that sends or receives one of its flows, a stand-alone transfer (a
// pipeline send) on its sender. Without the cluster (or for tasks that move no bytes
// between GPUs) they go to a "network" process. The flows inside collectives are left out:
// they would drown the trace.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/task_executor.h"
#include "sim/task_graph.h"
#include "topology/cluster.h"

namespace trainsim::sim {

class TraceRecorder : public TaskObserver {
 public:
  // Names for task tags ("compute", "tp_comm", ...); tags without a name print as numbers.
  explicit TraceRecorder(std::function<std::string(uint32_t)> tag_name = {});

  // Call before the run: remembers the graph's streams and, with the cluster the graph's
  // routes run on, the GPUs of each collective and transfer.
  void beginRun(const TaskGraph& graph, const topology::Cluster* cluster = nullptr);
  void onTaskFinished(const TaskSpan& span) override;

  // The trace-event JSON, events sorted by (process, track, start) so output is deterministic.
  void write(std::ostream& out) const;
  [[nodiscard]] std::size_t eventCount() const { return spans_.size(); }

 private:
  std::function<std::string(uint32_t)> tag_name_;
  std::vector<StreamInfo> streams_;
  std::vector<TaskSpan> spans_;
  std::vector<bool> in_group_;  // per task: a child of a group (a collective's flow)
  // GPUs (ranks) of each stream-less task: devices_[device_offset_[t] .. device_offset_[t + 1]).
  std::vector<uint32_t> device_offset_;
  std::vector<int32_t> devices_;
};

}  // namespace trainsim::sim
