// The schedule tests' helpers: a stage's order as text, and the iteration time of a plan's
// pipeline schedule with compute-only passes and free communication, what the order and its
// dependencies leave idle (pipeline_schedule.h).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "parallelism/parallel_plan.h"
#include "parallelism/pipeline_schedule.h"
#include "sim/engine.h"
#include "sim/flow_network.h"
#include "sim/task_executor.h"
#include "sim/task_graph.h"

namespace trainsim::parallelism::testing {

// "F0 F0c1 B0c1 W0c1 ...": each pass (F, B, W), its micro-batch and, past chunk 0, its chunk.
inline std::string orderText(const std::vector<PipelineStep>& order) {
  std::string result;
  for (const PipelineStep& step : order) {
    if (!result.empty()) result += ' ';
    result += step.pass == PassKind::kForward ? 'F' : step.pass == PassKind::kBackward ? 'B' : 'W';
    result += std::to_string(step.microbatch);
    if (step.chunk > 0) result += "c" + std::to_string(step.chunk);
  }
  return result;
}

// Every pass of every stage of `plan` (its pp, virtual_stages, schedule and placement) on one
// stream per stage: forwards tf, weight-gradient passes tw, backwards tb where the schedule
// splits them and tb + tw where it does not.
inline sim::SimTime computeOnlyPipelineTime(const ParallelPlan& plan, int64_t microbatches, sim::SimTime tf,
                                            sim::SimTime tb, sim::SimTime tw = 0) {
  sim::TaskGraph graph;
  std::map<std::tuple<int64_t, int, int32_t, int32_t>, sim::TaskId> tasks;
  std::vector<std::vector<PipelineStep>> orders;
  const bool split = splitsWeightGradients(plan.schedule);
  for (int64_t s = 0; s < plan.pp; ++s) {
    const sim::StreamId stream = graph.addStream(static_cast<int32_t>(s), "compute");
    orders.push_back(stageOrder(plan.schedule, plan.pp, plan.virtual_stages, microbatches, s));
    for (const auto& step : orders.back()) {
      const sim::SimTime duration = step.pass == PassKind::kForward  ? tf
                                    : step.pass == PassKind::kWeight ? tw
                                    : split                          ? tb
                                                                     : tb + tw;
      tasks[{s, static_cast<int>(step.pass), step.microbatch, step.chunk}] =
          graph.addCompute(duration, {}, sim::TaskOptions{stream, sim::kNoTask, 0});
    }
  }
  for (int64_t s = 0; s < plan.pp; ++s) {
    for (const auto& step : orders[static_cast<std::size_t>(s)]) {
      for (const auto& up : upstreamSteps(plan, s, step)) {
        graph.addDependency(tasks.at({up.stage, static_cast<int>(up.step.pass), up.step.microbatch, up.step.chunk}),
                            tasks.at({s, static_cast<int>(step.pass), step.microbatch, step.chunk}));
      }
    }
  }
  sim::Engine engine;
  sim::FlowNetwork network(engine, {});
  sim::TaskExecutor executor(engine, network, graph);
  const sim::SimTime time = executor.run();
  EXPECT_TRUE(executor.allFinished());
  return time;
}

// A plan of `stages` x `chunks` with `schedule`, for computeOnlyPipelineTime.
inline ParallelPlan pipelinePlan(PipelineSchedule schedule, int64_t stages, int64_t chunks = 1) {
  ParallelPlan plan;
  plan.pp = stages;
  plan.virtual_stages = chunks;
  plan.schedule = schedule;
  return plan;
}

}  // namespace trainsim::parallelism::testing
