// The Perfetto trace (sim/trace_recorder.*): one process per GPU, collectives on the tracks
// of every GPU taking part, pipeline sends on their sender, markers left out, overlapping
// slices of one kind moved to a second lane, deterministic bytes.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../topology/test_clusters.h"
#include "perf/collective.h"
#include "perf/collective_builder.h"
#include "perf/communication_parameters.h"
#include "sim/engine.h"
#include "sim/flow_network.h"
#include "sim/task_executor.h"
#include "sim/task_graph.h"
#include "sim/trace_recorder.h"
#include "tests/shipped_defaults.h"
#include "topology/router.h"

namespace trainsim::sim {
namespace {

constexpr uint32_t kComputeTag = 1;
constexpr uint32_t kCollectiveTag = 2;
constexpr uint32_t kSendTag = 3;

std::string tagName(uint32_t tag) {
  switch (tag) {
    case kComputeTag: return "compute";
    case kCollectiveTag: return "tp_comm";
    case kSendTag: return "pp_send";
    default: return std::to_string(tag);
  }
}

struct Slice {
  int64_t pid;
  std::string track;
  std::string name;
  double ts;
  double dur;
};

// Runs a graph on 2 DGX A100 nodes: GPU 0..3 compute, then an all-reduce among GPUs 0-3
// (two of them, concurrently: they overlap on one track), then GPU 3 sends to GPU 8.
std::string traceOfSmallRun(bool with_cluster) {
  const topology::Cluster cluster = topology::testing::presetCluster("dgx-a100", {parseOverride("nodes=2")});
  topology::Router router(cluster);
  const perf::CommunicationParameters parameters = shippedCommunication();
  TaskGraph graph;
  std::vector<TaskId> computes;
  for (int32_t gpu = 0; gpu < 4; ++gpu) {
    const StreamId stream = graph.addStream(gpu, "compute");
    computes.push_back(graph.addCompute(secondsToSimTime(1e-3), {}, {stream, kNoTask, kComputeTag}));
    graph.addCompute(0, {}, {stream, kNoTask, kComputeTag});  // a marker: not in the trace
  }
  perf::CollectiveBuilder builder(cluster, router, graph, parameters);
  const perf::CollectiveRequest request{perf::CollectiveOp::kAllReduce, {0, 1, 2, 3}, 64.0 * 1024 * 1024, {}, {}};
  const perf::CollectiveChoice choice = valueOrThrow(builder.choose(request));
  const TaskId first = builder.add(request, choice, computes, {kNoStream, kNoTask, kCollectiveTag});
  builder.add(request, choice, computes, {kNoStream, kNoTask, kCollectiveTag});
  const RouteId route = graph.addRoute(router.route(cluster.accelerator(3), cluster.accelerator(8)));
  graph.addFlow(route, 1e6, {first}, {kNoStream, kNoTask, kSendTag});

  Engine engine;
  FlowNetwork network(engine, perf::CollectiveBuilder::effectiveCapacities(cluster, parameters));
  TaskExecutor executor(engine, network, graph);
  TraceRecorder trace(tagName);
  trace.beginRun(graph, with_cluster ? &cluster : nullptr);
  executor.addObserver(&trace);
  executor.run();
  EXPECT_TRUE(executor.allFinished());
  std::ostringstream out;
  trace.write(out);
  return out.str();
}

std::vector<Slice> slicesOf(const std::string& text) {
  const auto json = nlohmann::json::parse(text);
  std::map<std::pair<int64_t, int64_t>, std::string> tracks;
  for (const auto& event : json["traceEvents"]) {
    if (event["ph"] == "M" && event["name"] == "thread_name") {
      tracks[{event["pid"].get<int64_t>(), event["tid"].get<int64_t>()}] = event["args"]["name"];
    }
  }
  std::vector<Slice> slices;
  for (const auto& event : json["traceEvents"]) {
    if (event["ph"] != "X") continue;
    const int64_t pid = event["pid"];
    slices.push_back({pid, tracks.at({pid, event["tid"].get<int64_t>()}), event["name"], event["ts"], event["dur"]});
  }
  return slices;
}

TEST(TraceRecorderTest, CollectivesAppearOnEveryParticipatingGpu) {
  const std::vector<Slice> slices = slicesOf(traceOfSmallRun(true));
  std::map<int64_t, std::multiset<std::string>> by_gpu;
  for (const Slice& slice : slices) by_gpu[slice.pid].insert(slice.track + ":" + slice.name);
  ASSERT_EQ(by_gpu.size(), 4u) << "GPUs 0-3 only: no network process, the receiver of the send shows nothing";
  for (int64_t gpu = 0; gpu < 4; ++gpu) {
    const auto& tracks = by_gpu[gpu];
    EXPECT_EQ(tracks.count("compute:compute"), 1u) << "gpu " << gpu << ": the zero-length marker is left out";
    // The two all-reduces run at once: one on the tp_comm track, one on a second lane.
    EXPECT_EQ(tracks.count("tp_comm:tp_comm"), 1u) << "gpu " << gpu;
    EXPECT_EQ(tracks.count("tp_comm 2:tp_comm"), 1u) << "gpu " << gpu;
  }
  EXPECT_EQ(by_gpu[3].count("pp_send:pp_send transfer"), 1u);
  EXPECT_EQ(by_gpu[0].count("pp_send:pp_send transfer"), 0u);
}

TEST(TraceRecorderTest, CollectivesStartAfterTheComputeTheyDependOn) {
  for (const Slice& slice : slicesOf(traceOfSmallRun(true))) {
    if (slice.name == "compute") {
      EXPECT_DOUBLE_EQ(slice.ts, 0.0);
      EXPECT_DOUBLE_EQ(slice.dur, 1000.0);  // 1 ms in microseconds
    } else {
      EXPECT_GE(slice.ts, 1000.0) << slice.track;
      EXPECT_GT(slice.dur, 0.0) << slice.track;
    }
  }
}

TEST(TraceRecorderTest, WithoutTheClusterCollectivesGoToANetworkProcess) {
  const std::vector<Slice> slices = slicesOf(traceOfSmallRun(false));
  int network = 0;
  for (const Slice& slice : slices) {
    if (slice.pid == -1) ++network;
  }
  EXPECT_EQ(network, 3);  // two all-reduces and one send
}

// A delay off the streams right after a GPU's compute (what an overlapped tensor-parallel
// collective leaves exposed after a pass) shows on that GPU, not on the network process.
TEST(TraceRecorderTest, ADelayAfterAStreamTaskShowsOnItsGpu) {
  const topology::Cluster cluster = topology::testing::presetCluster("dgx-a100", {});
  const perf::CommunicationParameters parameters = shippedCommunication();
  TaskGraph graph;
  const StreamId stream = graph.addStream(2, "compute");
  const TaskId compute = graph.addCompute(secondsToSimTime(1e-3), {}, {stream, kNoTask, kComputeTag});
  graph.addCompute(secondsToSimTime(0.5e-3), {compute}, {kNoStream, kNoTask, kCollectiveTag});
  graph.addCompute(0, {compute}, {kNoStream, kNoTask, kCollectiveTag});  // zero length: left out
  Engine engine;
  FlowNetwork network(engine, perf::CollectiveBuilder::effectiveCapacities(cluster, parameters));
  TaskExecutor executor(engine, network, graph);
  TraceRecorder trace(tagName);
  trace.beginRun(graph, &cluster);
  executor.addObserver(&trace);
  executor.run();
  std::ostringstream out;
  trace.write(out);
  const std::vector<Slice> slices = slicesOf(out.str());
  ASSERT_EQ(slices.size(), 2u);
  for (const Slice& slice : slices) EXPECT_EQ(slice.pid, 2) << slice.track;
  EXPECT_EQ(slices[1].track, "tp_comm");
  EXPECT_DOUBLE_EQ(slices[1].ts, 1000.0);
  EXPECT_DOUBLE_EQ(slices[1].dur, 500.0);
}

TEST(TraceRecorderTest, OutputIsDeterministic) { EXPECT_EQ(traceOfSmallRun(true), traceOfSmallRun(true)); }

}  // namespace
}  // namespace trainsim::sim
