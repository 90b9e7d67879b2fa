#include "sim/task_executor.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "sim/engine.h"
#include "sim/flow_network.h"
#include "sim/result.h"
#include "sim/task_graph.h"

namespace trainsim::sim {
namespace {

constexpr double kGBps = 1e9;

// An engine, a network of `links` 1 GB/s links, and a graph to fill.
struct Fixture {
  explicit Fixture(std::size_t links = 4) : network(engine, std::vector<double>(links, 1.0 * kGBps)) {}
  Engine engine;
  FlowNetwork network;
  TaskGraph graph;
};

struct RecordingObserver : TaskObserver {
  std::vector<TaskSpan> started;
  std::vector<TaskSpan> finished;
  void onTaskStarted(const TaskSpan& span) override { started.push_back(span); }
  void onTaskFinished(const TaskSpan& span) override { finished.push_back(span); }
};

TEST(TaskExecutorTest, TasksOnOneStreamRunInIssueOrder) {
  Fixture f;
  const StreamId s = f.graph.addStream(0, "compute");
  const TaskId a = f.graph.addCompute(10, {}, {.stream = s});
  const TaskId b = f.graph.addCompute(20, {}, {.stream = s});
  const TaskId c = f.graph.addCompute(5, {}, {.stream = s});
  TaskExecutor executor(f.engine, f.network, f.graph);
  EXPECT_EQ(executor.run(), 35);
  EXPECT_EQ(executor.startTime(a), 0);
  EXPECT_EQ(executor.finishTime(a), 10);
  EXPECT_EQ(executor.startTime(b), 10);
  EXPECT_EQ(executor.finishTime(b), 30);
  EXPECT_EQ(executor.startTime(c), 30);
  EXPECT_EQ(executor.finishTime(c), 35);
  EXPECT_EQ(f.graph.lastOnStream(s), c);
}

TEST(TaskExecutorTest, SeparateStreamsRunConcurrently) {
  Fixture f;
  const StreamId s0 = f.graph.addStream(0, "compute");
  const StreamId s1 = f.graph.addStream(0, "comm");
  const StreamId s2 = f.graph.addStream(1, "compute");
  const TaskId a = f.graph.addCompute(10, {}, {.stream = s0});
  const TaskId b = f.graph.addCompute(20, {}, {.stream = s1});
  const TaskId c = f.graph.addCompute(30, {}, {.stream = s2});
  TaskExecutor executor(f.engine, f.network, f.graph);
  EXPECT_EQ(executor.run(), 30);
  for (const TaskId t : {a, b, c}) EXPECT_EQ(executor.startTime(t), 0);
  EXPECT_EQ(f.graph.streamInfo(s2).device, 1);
  EXPECT_EQ(f.graph.streamInfo(s1).name, "comm");
}

TEST(TaskExecutorTest, DependenciesAreRespected) {
  Fixture f;
  const StreamId s0 = f.graph.addStream(0, "a");
  const StreamId s1 = f.graph.addStream(0, "b");
  const TaskId a = f.graph.addCompute(10, {}, {.stream = s0});
  const TaskId b = f.graph.addCompute(25, {}, {.stream = s1});
  const TaskId c = f.graph.addCompute(5, {a, b}, {.stream = s0});  // waits for b on the other stream
  const TaskId d = f.graph.addCompute(1, {}, {.stream = s0});      // issue order: after c
  const TaskId e = f.graph.addCompute(2);                          // no stream, no deps
  const TaskId g = f.graph.addCompute(3);
  f.graph.addDependency(d, g);  // added after creation
  TaskExecutor executor(f.engine, f.network, f.graph);
  executor.run();
  EXPECT_EQ(executor.startTime(c), 25);
  EXPECT_EQ(executor.finishTime(c), 30);
  EXPECT_EQ(executor.startTime(d), 30);
  EXPECT_EQ(executor.startTime(e), 0);
  EXPECT_EQ(executor.startTime(g), 31);
  EXPECT_EQ(executor.makespan(), 34);
  EXPECT_TRUE(executor.allFinished());
  (void)a;
}

TEST(TaskExecutorTest, FlowTasksGoThroughTheNetwork) {
  Fixture f;
  const std::vector<LinkId> links{0, 1};
  const RouteId route = f.graph.addRoute(links, 2000);
  const TaskId compute = f.graph.addCompute(kMicrosecond);
  const TaskId x = f.graph.addFlow(route, 1e6, {compute});
  const TaskId y = f.graph.addFlow(route, 1e6, {compute});
  const TaskId after = f.graph.addCompute(10, {x, y});
  TaskExecutor executor(f.engine, f.network, f.graph);
  executor.run();
  // Two flows share 1 GB/s: 2 ms each, then the route latency.
  EXPECT_EQ(executor.startTime(x), kMicrosecond);
  EXPECT_EQ(executor.finishTime(x), kMicrosecond + 2 * kMillisecond + 2000);
  EXPECT_EQ(executor.finishTime(y), kMicrosecond + 2 * kMillisecond + 2000);
  EXPECT_EQ(executor.finishTime(after), kMicrosecond + 2 * kMillisecond + 2010);
  const RunSummary summary = summarizeRun(f.engine, f.network, executor);
  EXPECT_EQ(summary.makespan, executor.finishTime(after));
  EXPECT_DOUBLE_EQ(summary.links[0].bytes_carried, 2e6);
  EXPECT_DOUBLE_EQ(summary.links[1].bytes_carried, 2e6);
  EXPECT_EQ(summary.links[0].busy_time, 2 * kMillisecond);
  EXPECT_NEAR(linkUtilisation(summary.links[0], 1.0 * kGBps, 2 * kMillisecond), 1.0, 1e-12);
  EXPECT_EQ(summary.tasks_finished, 4u);
}

TEST(TaskExecutorTest, BundleRoutesCarryTheirMultiplicities) {
  Fixture f;
  const std::vector<LinkId> path{0, 1};
  const std::vector<LinkId> bundle_links{1, 2};
  const std::vector<uint32_t> members{2, 1};
  const RouteId plain = f.graph.addRoute(path, 0);
  const RouteId bundle = f.graph.addBundleRoute(bundle_links, members, 0);
  EXPECT_TRUE(f.graph.routeMultiplicity(plain).empty());
  ASSERT_EQ(f.graph.routeMultiplicity(bundle).size(), 2u);
  EXPECT_EQ(f.graph.routeMultiplicity(bundle)[0], 2u);
  // The plain flow and the bundle's 2 members share link 1: 1/3 GB/s each.
  const TaskId x = f.graph.addFlow(plain, 1e6);
  const TaskId y = f.graph.addFlow(bundle, 1e6);
  TaskExecutor executor(f.engine, f.network, f.graph);
  executor.run();
  EXPECT_EQ(executor.finishTime(x), 3 * kMillisecond);
  EXPECT_EQ(executor.finishTime(y), 3 * kMillisecond);
  const RunSummary summary = summarizeRun(f.engine, f.network, executor);
  EXPECT_DOUBLE_EQ(summary.links[1].bytes_carried, 3e6);
  EXPECT_DOUBLE_EQ(summary.links[2].bytes_carried, 1e6);
}

TEST(TaskExecutorTest, FlowRateCapIsApplied) {
  Fixture f;
  const std::vector<LinkId> links{0};
  const RouteId route = f.graph.addRoute(links, 0);
  const TaskId x = f.graph.addFlow(route, 1e6, {}, {}, 0.25 * kGBps);
  TaskExecutor executor(f.engine, f.network, f.graph);
  executor.run();
  EXPECT_EQ(executor.finishTime(x), 4 * kMillisecond);
}

TEST(TaskExecutorTest, GroupCompletesWhenItsChildrenComplete) {
  Fixture f;
  const StreamId comm = f.graph.addStream(0, "comm");
  const std::vector<LinkId> l0{0};
  const std::vector<LinkId> l1{1};
  const RouteId r0 = f.graph.addRoute(l0, 0);
  const RouteId r1 = f.graph.addRoute(l1, 0);
  const TaskId before = f.graph.addCompute(100);
  // A "collective" on the comm stream: two flows in parallel, then one after the first.
  const TaskId group = f.graph.addGroup({before}, {.stream = comm, .tag = 7});
  const TaskId s1 = f.graph.addFlow(r0, 1e6, {}, {.parent = group});
  const TaskId s2 = f.graph.addFlow(r1, 3e6, {}, {.parent = group});
  const TaskId s3 = f.graph.addFlow(r0, 1e6, {s1}, {.parent = group});
  const TaskId next_on_stream = f.graph.addCompute(10, {}, {.stream = comm});
  TaskExecutor executor(f.engine, f.network, f.graph);
  RecordingObserver observer;
  executor.addObserver(&observer);
  executor.run();
  EXPECT_EQ(executor.startTime(group), 100);
  EXPECT_EQ(executor.startTime(s1), 100);  // children wait for the group to start
  EXPECT_EQ(executor.startTime(s2), 100);
  EXPECT_EQ(executor.finishTime(s1), 100 + kMillisecond);
  EXPECT_EQ(executor.startTime(s3), 100 + kMillisecond);
  EXPECT_EQ(executor.finishTime(s3), 100 + 2 * kMillisecond);
  EXPECT_EQ(executor.finishTime(s2), 100 + 3 * kMillisecond);
  EXPECT_EQ(executor.finishTime(group), 100 + 3 * kMillisecond);
  EXPECT_EQ(executor.startTime(next_on_stream), 100 + 3 * kMillisecond);
  EXPECT_EQ(f.graph.tag(group), 7u);
  EXPECT_EQ(f.graph.kind(group), TaskKind::kGroup);
  EXPECT_EQ(f.graph.parent(s3), group);

  // Observers saw every task once, with the executor's times.
  ASSERT_EQ(observer.finished.size(), f.graph.taskCount());
  EXPECT_EQ(observer.started.size(), f.graph.taskCount());
  for (const TaskSpan& span : observer.finished) {
    EXPECT_EQ(span.start, executor.startTime(span.task));
    EXPECT_EQ(span.finish, executor.finishTime(span.task));
    EXPECT_EQ(span.stream, f.graph.stream(span.task));
    EXPECT_EQ(span.kind, f.graph.kind(span.task));
    EXPECT_EQ(span.tag, f.graph.tag(span.task));
  }
  for (const TaskSpan& span : observer.started) EXPECT_EQ(span.finish, kTimeNever);
  // A child finishes before its group.
  std::vector<std::size_t> position(f.graph.taskCount());
  for (std::size_t i = 0; i < observer.finished.size(); ++i) position[observer.finished[i].task] = i;
  EXPECT_LT(position[s2], position[group]);
  EXPECT_EQ(observer.finished[position[group]].tag, 7u);
  EXPECT_EQ(observer.finished[position[group]].stream, comm);
}

TEST(TaskExecutorTest, EmptyGroupAndNestedGroups) {
  Fixture f;
  const TaskId empty = f.graph.addGroup();
  const TaskId outer = f.graph.addGroup({empty});
  const TaskId inner = f.graph.addGroup({}, {.parent = outer});
  const TaskId leaf = f.graph.addCompute(40, {}, {.parent = inner});
  const TaskId tail = f.graph.addCompute(1, {outer});
  TaskExecutor executor(f.engine, f.network, f.graph);
  executor.run();
  EXPECT_EQ(executor.finishTime(empty), 0);
  EXPECT_EQ(executor.startTime(leaf), 0);
  EXPECT_EQ(executor.finishTime(inner), 40);
  EXPECT_EQ(executor.finishTime(outer), 40);
  EXPECT_EQ(executor.finishTime(tail), 41);
}

TEST(TaskExecutorTest, CycleLeavesTasksUnfinished) {
  Fixture f;
  const TaskId a = f.graph.addCompute(1);
  const TaskId b = f.graph.addCompute(1, {a});
  const TaskId c = f.graph.addCompute(1);
  const TaskId d = f.graph.addCompute(1, {c});
  f.graph.addDependency(d, c);
  TaskExecutor executor(f.engine, f.network, f.graph);
  executor.run();
  EXPECT_TRUE(executor.finished(b));
  EXPECT_FALSE(executor.finished(c));
  EXPECT_FALSE(executor.allFinished());
  EXPECT_EQ(executor.finishedCount(), 2u);
  EXPECT_EQ(executor.startTime(d), kTimeNever);
}

TEST(TaskExecutorTest, LongChainOfZeroDurationTasksDoesNotRecurse) {
  Fixture f;
  const StreamId s = f.graph.addStream(0, "s");
  for (int i = 0; i < 200000; ++i) f.graph.addCompute(0, {}, {.stream = s});
  f.graph.addCompute(5, {}, {.stream = s});
  TaskExecutor executor(f.engine, f.network, f.graph);
  EXPECT_EQ(executor.run(), 5);
  EXPECT_TRUE(executor.allFinished());
}

TEST(TaskExecutorTest, TaskRecordsAreSmall) {
  Fixture f;
  const StreamId s = f.graph.addStream(0, "s");
  constexpr int kTasks = 1 << 20;
  f.graph.reserve(kTasks, kTasks);
  for (int i = 0; i < kTasks; ++i) f.graph.addCompute(1, {}, {.stream = s});
  TaskExecutor executor(f.engine, f.network, f.graph);
  // Graph: 21 B/task + 8 B per dependency; executor: ~32 B/task + 4 B per dependency.
  EXPECT_LT(f.graph.memoryBytes(), 32u * kTasks);
  EXPECT_LT(executor.memoryBytes(), 40u * kTasks);
  EXPECT_EQ(executor.run(), kTasks);
}

// A random layered DAG of compute and flow tasks on a few streams.
std::vector<SimTime> randomGraphFinishTimes(uint32_t seed) {
  Fixture f(8);
  std::mt19937 rng(seed);
  std::vector<StreamId> streams;
  for (int i = 0; i < 6; ++i) streams.push_back(f.graph.addStream(i / 2, "s"));
  std::vector<RouteId> routes;
  for (int i = 0; i < 10; ++i) {
    std::vector<LinkId> links;
    for (int h = 0; h < 3; ++h) links.push_back(static_cast<LinkId>(rng() % 8));
    std::sort(links.begin(), links.end());
    links.erase(std::unique(links.begin(), links.end()), links.end());
    routes.push_back(f.graph.addRoute(links, static_cast<SimTime>(rng() % 5000)));
  }
  std::vector<TaskId> tasks;
  for (int i = 0; i < 3000; ++i) {
    std::vector<TaskId> deps;
    for (int k = 0; k < 2 && !tasks.empty(); ++k) deps.push_back(tasks[rng() % tasks.size()]);
    const TaskOptions options{.stream = rng() % 3 == 0 ? kNoStream : streams[rng() % streams.size()]};
    if (rng() % 2 == 0) {
      tasks.push_back(f.graph.addCompute(static_cast<SimTime>(rng() % 100000), deps, options));
    } else {
      tasks.push_back(f.graph.addFlow(routes[rng() % routes.size()], (rng() % 1000 + 1) * 1000.0, deps, options));
    }
  }
  TaskExecutor executor(f.engine, f.network, f.graph);
  executor.run();
  EXPECT_TRUE(executor.allFinished());
  std::vector<SimTime> times;
  for (TaskId t = 0; t < f.graph.taskCount(); ++t) {
    EXPECT_GE(executor.startTime(t), 0);
    times.push_back(executor.finishTime(t));
  }
  // Every dependency is respected.
  for (const Dependency& d : f.graph.dependencies()) {
    EXPECT_LE(executor.finishTime(d.before), executor.startTime(d.after));
  }
  return times;
}

TEST(TaskExecutorTest, IdenticalRunsGiveIdenticalFinishTimes) {
  const std::vector<SimTime> first = randomGraphFinishTimes(5);
  const std::vector<SimTime> second = randomGraphFinishTimes(5);
  EXPECT_EQ(first, second);
}

// ---- Contention ----------------------------------------------------------------------------

TEST(TaskExecutorTest, ContenderSlowsTheComputeItOverlaps) {
  // A 100 ps compute task; a contender taking a quarter of the SMs runs over [0, 40).
  // 40 ps at 3/4 speed do 30 ps of work; the remaining 70 run at full speed: done at 110.
  Fixture f;
  const StreamId compute = f.graph.addStream(0, "compute");
  const StreamId comm = f.graph.addStream(0, "comm");
  const TaskId work = f.graph.addCompute(100, {}, {.stream = compute});
  const TaskId nccl = f.graph.addCompute(40, {}, {.stream = comm});
  f.graph.addContention(nccl, compute, 0.25);
  TaskExecutor executor(f.engine, f.network, f.graph);
  EXPECT_EQ(executor.run(), 110);
  EXPECT_EQ(executor.finishTime(work), 110);
  EXPECT_EQ(executor.finishTime(nccl), 40);
}

TEST(TaskExecutorTest, ContenderStartingMidTaskSlowsTheRest) {
  // The contender starts at 60 (after a 60 ps delay) and outlasts the compute task: the
  // last 40 ps of work run at half speed, 80 ps.
  Fixture f;
  const StreamId compute = f.graph.addStream(0, "compute");
  const TaskId work = f.graph.addCompute(100, {}, {.stream = compute});
  const TaskId delay = f.graph.addCompute(60);
  const TaskId nccl = f.graph.addCompute(1000, {delay});
  f.graph.addContention(nccl, compute, 0.5);
  TaskExecutor executor(f.engine, f.network, f.graph);
  executor.run();
  EXPECT_EQ(executor.finishTime(work), 140);
}

TEST(TaskExecutorTest, ConcurrentContendersAddUpAndOnlyTheirStreamSlows) {
  // Two contenders of 0.25 each over [0, 50): the stream runs at half speed, 25 ps of work
  // done by 50, 75 more at full speed -> 125. Another stream of the same device is untouched.
  Fixture f;
  const StreamId compute = f.graph.addStream(0, "compute");
  const StreamId other = f.graph.addStream(0, "other");
  const TaskId work = f.graph.addCompute(100, {}, {.stream = compute});
  const TaskId untouched = f.graph.addCompute(100, {}, {.stream = other});
  const TaskId a = f.graph.addCompute(50);
  const TaskId b = f.graph.addCompute(50);
  f.graph.addContention(a, compute, 0.25);
  f.graph.addContention(b, compute, 0.25);
  TaskExecutor executor(f.engine, f.network, f.graph);
  executor.run();
  EXPECT_EQ(executor.finishTime(work), 125);
  EXPECT_EQ(executor.finishTime(untouched), 100);
}

TEST(TaskExecutorTest, GroupContendsFromItsStartToItsLastChild) {
  // A collective-like group: starts at 0, its one flow moves 100 bytes at 1 GB/s (100 ns).
  // A 200 ns compute task beside it at 0.2 contention: 100 ns at 0.8 = 80 ns of work, then
  // 120 at full speed -> 220 ns. Compute tasks issued after it on the stream are not slowed.
  Fixture f;
  const StreamId compute = f.graph.addStream(0, "compute");
  const LinkId link = 0;
  const RouteId route = f.graph.addRoute(std::span<const LinkId>(&link, 1), 0);
  const TaskId group = f.graph.addGroup();
  f.graph.addFlow(route, 100.0, {}, {.parent = group});
  f.graph.addContention(group, compute, 0.2);
  const TaskId work = f.graph.addCompute(200'000, {}, {.stream = compute});
  const TaskId after = f.graph.addCompute(50'000, {}, {.stream = compute});
  TaskExecutor executor(f.engine, f.network, f.graph);
  executor.run();
  EXPECT_EQ(executor.finishTime(group), 100'000);
  EXPECT_EQ(executor.finishTime(work), 220'000);
  EXPECT_EQ(executor.finishTime(after), 270'000);
}

TEST(TaskExecutorTest, FullyContendedComputeStallsUntilAContenderEnds) {
  Fixture f;
  const StreamId compute = f.graph.addStream(0, "compute");
  const TaskId work = f.graph.addCompute(10, {}, {.stream = compute});
  const TaskId a = f.graph.addCompute(30);
  const TaskId b = f.graph.addCompute(20);
  f.graph.addContention(a, compute, 0.6);
  f.graph.addContention(b, compute, 0.6);
  // [0, 20): stalled; [20, 30): speed 0.4 -> 4 ps of work; then 6 ps at full speed -> 36.
  TaskExecutor executor(f.engine, f.network, f.graph);
  executor.run();
  EXPECT_EQ(executor.finishTime(work), 36);
}

TEST(TaskExecutorTest, RunsWithContentionAreReproducible) {
  auto run = [] {
    Fixture f;
    std::vector<StreamId> streams;
    for (int d = 0; d < 4; ++d) streams.push_back(f.graph.addStream(d, "compute"));
    std::mt19937 random(7);
    std::vector<SimTime> finishes;
    std::vector<TaskId> tasks;
    for (int i = 0; i < 200; ++i) {
      const StreamId s = streams[random() % streams.size()];
      tasks.push_back(f.graph.addCompute(1 + random() % 1000, {}, {.stream = s}));
      if (i % 3 == 0) {
        const TaskId c = f.graph.addCompute(1 + random() % 3000, {tasks[random() % tasks.size()]});
        f.graph.addContention(c, streams[random() % streams.size()], 0.1 + 0.1 * static_cast<double>(random() % 5));
      }
    }
    TaskExecutor executor(f.engine, f.network, f.graph);
    executor.run();
    EXPECT_TRUE(executor.allFinished());
    for (TaskId t : tasks) finishes.push_back(executor.finishTime(t));
    return finishes;
  };
  EXPECT_EQ(run(), run());
}

// A task graph longer than the clock's range is an input error naming the limit, not an
// assertion or a wrapped-around time.
TEST(TaskExecutorTest, GraphLongerThanTheClockIsAnInputError) {
  Fixture f;
  const StreamId s = f.graph.addStream(0, "compute");
  f.graph.addCompute(kTimeLimit - 10, {}, {.stream = s});
  f.graph.addCompute(100, {}, {.stream = s});
  TaskExecutor executor(f.engine, f.network, f.graph);
  try {
    (void)executor.run();
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.error().code, ExitCode::kInvalidInput);
    EXPECT_NE(e.error().message.find("46 days"), std::string::npos) << e.error().message;
  }
  // Up to the limit itself is fine.
  Fixture g;
  const StreamId t = g.graph.addStream(0, "compute");
  g.graph.addCompute(kTimeLimit - 100, {}, {.stream = t});
  g.graph.addCompute(100, {}, {.stream = t});
  TaskExecutor fits(g.engine, g.network, g.graph);
  EXPECT_EQ(fits.run(), kTimeLimit);
}

}  // namespace
}  // namespace trainsim::sim
