// End to end: a run too large to represent within --max-memory-gib is refused up front
// (exit 2, naming the figures and the budget), at the documented GPU limit of 2^20 GPUs,
// where it used to build for a minute and end in std::bad_alloc at 8-12 GB.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace {

struct CommandRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr
  double seconds = 0.0;
};

CommandRun trainsim(const std::string& arguments) {
  const std::string command = "timeout 120 " + std::string(TRAINSIM_EXECUTABLE) + " --config-dir " +
                              TRAINSIM_CONFIG_DIR_FOR_TESTS + " " + arguments + " 2>&1 </dev/null";
  CommandRun run;
  const auto start = std::chrono::steady_clock::now();
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  std::size_t read = 0;
  while ((read = fread(buffer, 1, sizeof(buffer), pipe)) > 0) run.output.append(buffer, read);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

// 2^20 GPUs: 131,072 DGX H100 nodes on a fat tree of 256-port switches.
const std::string kMillionGpuCluster = "--set nodes=131072 --set inter_node.switch_radix=256";
// Llama 3 8B data-parallel over every one of them, in 40M-parameter gradient buckets.
const std::string kMillionGpuPlan =
    "llama3-8b-dgx-h100 --set cluster.nodes=131072 --set cluster.inter_node.switch_radix=256 "
    "--set parallelism.gpus=1048576 --set parallelism.tp=1 --set parallelism.pp=1 --set parallelism.cp=1 --set "
    "parallelism.dp=auto "
    "--set training.global_batch_size=1048576 --set parallelism.ddp_bucket_size=40e6";

// The refusal is an estimate from the plan: it comes before the cluster graph (seconds and
// gigabytes at this size) is built. 1 s is the contract; a loaded CI machine gets slack.
constexpr double kRefusalSeconds = 5.0;

TEST(MemoryBudget, AMillionGpuSimulationIsRefusedUpFront) {
  for (const std::string mode : {"", " --symmetric"}) {
    const CommandRun run = trainsim("simulate " + kMillionGpuPlan + mode);
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(run.output.find("more than the 8 GiB memory budget"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("gradient reductions over 1048576 GPUs"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("--max-memory-gib"), std::string::npos) << run.output;
    EXPECT_LT(run.seconds, kRefusalSeconds) << run.output;
  }
}

TEST(MemoryBudget, AMillionGpuCollectiveIsRefusedUpFront) {
  const CommandRun run =
      trainsim("collective --cluster dgx-h100 " + kMillionGpuCluster + " --op all_reduce --gpus 1048576 -b 1G -e 1G");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("flows of all_reduce on 1048576 GPUs"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("more than the 8 GiB memory budget"), std::string::npos) << run.output;
  EXPECT_LT(run.seconds, kRefusalSeconds) << run.output;
}

TEST(MemoryBudget, AnAllToAllOfTensOfThousandsOfGpusIsRefused) {
  // Its flows are bundles, one per pair of nodes, but made of n (n - 1) routes of GPU pairs:
  // 4 x 10^9 at 65,536 GPUs, 6.7 x 10^7 at 8,192.
  for (const char* nodes : {"8192", "1024"}) {
    const CommandRun run = trainsim(std::string("collective --cluster dgx-h100 --set nodes=") + nodes +
                                    " --set inter_node.switch_radix=256 --op all_to_all");
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(run.output.find("routes of the GPU pairs of all_to_all on"), std::string::npos) << run.output;
    EXPECT_LT(run.seconds, kRefusalSeconds) << run.output;
  }
}

TEST(MemoryBudget, TheBudgetIsAnOption) {
  // A shipped run fits the default budget and not a tiny one.
  EXPECT_EQ(trainsim("collective --cluster dgx-h100 --op all_reduce --gpus 16 -b 1M -e 1M").exit_code, 0);
  const CommandRun tiny = trainsim("simulate llama3-8b-dgx-h100 --max-memory-gib 0.01");
  EXPECT_EQ(tiny.exit_code, 2) << tiny.output;
  EXPECT_NE(tiny.output.find("more than the 0.01 GiB memory budget"), std::string::npos) << tiny.output;
  const CommandRun zero = trainsim("collective --cluster dgx-h100 --op all_reduce --max-memory-gib 0");
  EXPECT_EQ(zero.exit_code, 2) << zero.output;
  EXPECT_NE(zero.output.find("--max-memory-gib: expected a positive number of GiB"), std::string::npos) << zero.output;
}

}  // namespace
