// The memory estimate of an iteration (iteration_memory.h) counts at least the tasks and
// flows IterationBuilder builds, on the shipped experiments and on plans that exercise each
// kind of collective (ZeRO 1 and 3, context and expert parallelism, interleaving, host
// dispatch), in full and in symmetric mode.
#include "parallelism/iteration_memory.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "parallelism/experiment_loader.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::parallelism {
namespace {

struct Case {
  std::string experiment;
  std::vector<std::string> overrides;
};

TEST(IterationMemory, CountsAtLeastTheTasksOfTheSimulatedGraph) {
  const std::vector<Case> cases = {
      {"llama3-8b-dgx-h100", {}},
      {"mixtral-8x7b-h100", {}},
      {"mixtral-8x7b-mi300x", {}},
      {"mixtral-8x7b-h100",
       {"parallelism.tp=2", "parallelism.dp=8", "parallelism.sequence_parallel=true", "parallelism.etp=1",
        "parallelism.moe_a2a_overlap=true"}},
      {"llama2-70b-h100", {"training.global_batch_size=64"}},
      {"gpt3-175b-selene", {"training.global_batch_size=128", "parallelism.gpus=256", "parallelism.dp=auto"}},
      {"gpt3-175b-selene",
       {"training.global_batch_size=64", "parallelism.gpus=256", "parallelism.dp=auto", "parallelism.zero=1"}},
      {"gpt3-175b-selene",
       {"training.global_batch_size=64", "parallelism.gpus=256", "parallelism.dp=auto", "parallelism.virtual_stages=2",
        "parallelism.sequence_parallel=true", "parallelism.tp_comm_overlap=true"}},
      {"llama3-8b-dgx-h100",
       {"parallelism.zero=3", "parallelism.cp=1", "parallelism.gpus=16", "parallelism.dp=auto", "cluster.nodes=2"}},
      {"llama3-8b-dgx-h100", {"training.dispatch=eager", "training.stack=pytorch-fsdp"}},
      // Eager MoE on short sequences: each forward waits on its host at the dispatch sync.
      {"mixtral-8x7b-h100", {"training.stack=megatron-core", "training.seq_len=128"}},
      // ZeRO-3 in transformer blocks: every pass in blocks, and with pipeline parallelism.
      {"llama3-8b-dgx-h100",
       {"training.stack=torchtitan", "parallelism.zero=3", "parallelism.cp=1", "parallelism.gpus=16",
        "parallelism.dp=auto", "cluster.nodes=2", "training.global_batch_size=32"}},
      {"llama3-8b-dgx-h100",
       {"training.stack=torchtitan", "parallelism.zero=3", "parallelism.cp=1", "parallelism.gpus=16",
        "parallelism.pp=2", "parallelism.dp=auto", "cluster.nodes=2", "training.global_batch_size=32"}},
  };
  for (const Case& c : cases) {
    std::vector<Override> overrides;
    for (const auto& text : c.overrides) overrides.push_back(parseOverride(text));
    const auto loaded = loadExperiment(c.experiment, shippedConfigPaths(), overrides);
    ASSERT_TRUE(loaded.ok()) << c.experiment << ": " << loaded.error().toString();
    const Experiment& experiment = loaded.value();
    for (bool symmetric : {false, true}) {
      SimulationOptions options = shippedSimulationOptions();
      applySoftwareStack(experiment, options);
      options.iteration.symmetric = symmetric;
      // One run of every micro-batch: its task count is the graph's, the largest one built.
      options.every_microbatch = true;
      const auto result = simulateIteration(experiment, options);
      ASSERT_TRUE(result.ok()) << c.experiment << ": " << result.error().toString();
      const auto estimate = estimateIterationMemory(experiment, options);
      ASSERT_TRUE(estimate.ok()) << c.experiment << ": " << estimate.error().toString();
      const double counted =
          estimate.value().count(sim::MemoryKind::kTasks) + estimate.value().count(sim::MemoryKind::kFlows);
      const auto built = static_cast<double>(result.value().tasks);
      EXPECT_GE(counted, built) << c.experiment << (symmetric ? " symmetric" : " full");
      // An upper bound, not a wild one: the budget refuses only what is really large. The
      // counts follow the builder; what is left is the flows of an all-reduce across nodes,
      // counted as the double binary tree's where the tuner may take the ring (up to 1.38x
      // here).
      EXPECT_LE(counted, 1.5 * built) << c.experiment << (symmetric ? " symmetric" : " full");
    }
  }
}

// Runs side by side hold their graphs at once: the estimate on two threads is the check's
// run and the second's together, more than the check's alone.
TEST(IterationMemory, RunsSideBySideAreCountedTogether) {
  auto experiment = loadExperiment("gpt3-175b-selene", shippedConfigPaths(), {}).value();
  SimulationOptions options = shippedSimulationOptions();
  const sim::MemoryEstimate one = estimateIterationMemory(experiment, options).value();
  options.threads = 2;
  const sim::MemoryEstimate two = estimateIterationMemory(experiment, options).value();
  options.threads = 3;
  const sim::MemoryEstimate three = estimateIterationMemory(experiment, options).value();
  EXPECT_GT(two.bytes(), 1.3 * one.bytes());
  EXPECT_LT(two.bytes(), 2.0 * one.bytes());
  EXPECT_GT(three.bytes(), two.bytes());
  EXPECT_GT(two.count(sim::MemoryKind::kTasks), one.count(sim::MemoryKind::kTasks));
}

}  // namespace
}  // namespace trainsim::parallelism
