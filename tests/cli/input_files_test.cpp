// Input files end to end (issue 40): what is not a regular file, a file over the size limit
// and text that is not UTF-8 are exit 2 at once, naming the file (and line and column).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "trainsim_run.h"

namespace trainsim::cli_testing {
namespace {

// Regression test for issue 40: `simulate /dev/zero` read 8.6 GB, then exited 1.
TEST(InputFiles, ADeviceIsRefusedAtOnce) {
  if (!fs::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  const std::string refused = "/dev/zero: is not a regular file (a character device), expected ";
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"simulate", "/dev/zero"}, refused + "a YAML file"},
      {{"memory", "/dev/zero"}, refused + "a YAML file"},
      {{"topology", "/dev/zero"}, refused + "a YAML file"},
      {{"collective", "--cluster", "/dev/zero", "--op", "all_reduce"}, refused + "a YAML file"},
      {{"simulate", "llama3-8b-dgx-h100", "--calibration", "/dev/zero"}, refused + "a YAML file"},
      {{"calibrate", "--cluster", "dgx-a100", "--nccl-tests", "/dev/zero", "--out", "-"},
       refused + "an nccl-tests log file"},
      {{"calibrate", "--cluster", "dgx-a100", "--attention", "/dev/zero", "--out", "-"},
       refused + "a cudnn-frontend sdpa benchmark CSV"},
      {{"calibrate", "--cluster", "dgx-a100", "--harness", "/dev/zero", "--out", "-"}, refused + "a YAML file"},
  };
  for (const auto& c : cases) {
    const TrainsimRun run = runTrainsim(c.args, 20);
    EXPECT_EQ(run.exit_code, 2) << c.args[0] << " " << c.args[1] << "\n" << run.err;
    EXPECT_NE(run.err.find(c.expected), std::string::npos) << run.err;
    EXPECT_LT(run.seconds, 5.0) << c.args[0];
  }
}

TEST(InputFiles, AFifoIsRefusedWithoutWaitingForAWriter) {
  const ScratchDir dir;
  const std::string fifo = dir / "experiment.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const TrainsimRun run = runTrainsim({"simulate", fifo}, 20);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(run.err, "trainsim: error: " + fifo + ": is not a regular file (a FIFO), expected a YAML file\n");
}

// Regression test for issue 40: a 50 MB YAML file took up to 8.4 GB before the error on its
// first line. The size is refused before parsing.
TEST(InputFiles, AFileOverTheSizeLimitIsRefusedBeforeParsing) {
  const ScratchDir dir;
  const std::string big = dir / "big.yaml";
  {
    std::ofstream file(big, std::ios::binary);
    file << "x: [";
    for (int i = 0; i < 2'600'000; ++i) file << "1,";
    file << "1]\n";
  }
  ASSERT_GT(fs::file_size(big), std::uintmax_t{4} << 20);
  const TrainsimRun run = runTrainsim({"simulate", big}, 60);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(run.err, "trainsim: error: " + big + ": is larger than the 4 MiB limit on a YAML file\n");
  EXPECT_LT(run.seconds, 5.0);
}

// Regression test for issue 40: a name that is not UTF-8 made every --json writer fail with
// exit 1 and a 0-byte file.
TEST(InputFiles, ANameThatIsNotUtf8IsAnErrorAtItsPosition) {
  const ScratchDir dir;
  const std::string experiment = dir / "experiment.yaml";
  std::ofstream(experiment) << "name: run-\xE9t\xE9\nmodel: llama3-8b\ncluster: dgx-h100\n"
                               "training: {seq_len: 2048, global_batch_size: 8}\nparallelism: {gpus: 8}\n";
  const std::string json = dir / "result.json";
  const TrainsimRun run = runTrainsim({"simulate", experiment, "--json", json});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(run.err, "trainsim: error: " + experiment +
                         ":1:11: invalid YAML: not UTF-8 text (byte 0xE9); YAML and JSON files are UTF-8\n");
  EXPECT_FALSE(fs::exists(json));
  // The same name by --set is blamed on the --set.
  const TrainsimRun set = runTrainsim({"simulate", "llama3-8b-dgx-h100", "--set", "name=\xFF", "--json", json});
  EXPECT_EQ(set.exit_code, 2) << set.err;
  EXPECT_EQ(set.err,
            "trainsim: error: --set name=\xFF: expected KEY=VALUE, found not UTF-8 text (byte 0xFF) at byte 6\n");
  EXPECT_FALSE(fs::exists(json));
}

// Regression test for issue 40: `--set cluster.gpu.intra_node_bandwidth_GBps=0` was blamed on
// a line of the cluster file.
TEST(InputFiles, ASetThatBreaksACheckOfTwoKeysIsBlamed) {
  const ScratchDir dir;
  const std::string cluster = dir / "cluster.yaml";
  std::ofstream(cluster) << "name: inline-gpu\ngpu:\n  peak_tflops: {bf16: 989}\n  memory_GiB: 80\n"
                            "  memory_bandwidth_GBps: 3350\n  intra_node_bandwidth_GBps: 450\n"
                            "  default_fabric: nvswitch\nnodes: 1\ngpus_per_node: 8\n";
  const std::string experiment = dir / "experiment.yaml";
  std::ofstream(experiment) << "model: llama3-8b\ncluster: " << cluster
                            << "\ntraining: {seq_len: 2048, global_batch_size: 8}\n";
  const TrainsimRun bandwidth = runTrainsim({"memory", experiment, "--set", "cluster.gpu.intra_node_bandwidth_GBps=0"});
  EXPECT_EQ(bandwidth.exit_code, 2);
  EXPECT_EQ(bandwidth.err,
            "trainsim: error: --set cluster.gpu.intra_node_bandwidth_GBps=0: gpu.intra_node_bandwidth_GBps: expected "
            "a positive number (default_fabric nvswitch needs the GPU's scale-up bandwidth, per GPU, per direction), "
            "found \"0\"\n");
  // The same through the cluster file's own --set, and for a GPU whose file gives no bandwidth.
  const TrainsimRun topology = runTrainsim({"topology", cluster, "--set", "gpu.intra_node_bandwidth_GBps=0"});
  EXPECT_EQ(topology.exit_code, 2);
  EXPECT_EQ(topology.err.rfind("trainsim: error: --set gpu.intra_node_bandwidth_GBps=0: ", 0), 0u) << topology.err;
  std::ofstream(cluster) << "name: inline-gpu\ngpu:\n  peak_tflops: {bf16: 989}\n  memory_GiB: 80\n"
                            "  memory_bandwidth_GBps: 3350\nnodes: 1\ngpus_per_node: 8\n";
  const TrainsimRun fabric = runTrainsim({"topology", cluster, "--set", "gpu.default_fabric=nvswitch"});
  EXPECT_EQ(fabric.exit_code, 2);
  EXPECT_EQ(fabric.err,
            "trainsim: error: --set gpu.default_fabric=nvswitch: gpu.default_fabric: default_fabric nvswitch needs "
            "intra_node_bandwidth_GBps (per GPU, per direction)\n");
  // A PCIe GPU (no NVLink bandwidth in the catalog) set to an NVSwitch fabric: blamed on that --set.
  std::ofstream(cluster) << "name: pcie\ngpu: l40s\nnodes: 1\ngpus_per_node: 8\nintra_node: {latency_us: 1}\n";
  const TrainsimRun intra = runTrainsim({"topology", cluster, "--set", "intra_node.fabric=nvswitch"});
  EXPECT_EQ(intra.exit_code, 2);
  EXPECT_EQ(intra.err.rfind("trainsim: error: --set intra_node.fabric=nvswitch: intra_node.fabric: the GPU l40s has "
                            "no NVLink bandwidth",
                            0),
            0u)
      << intra.err;
}

// parallelism.recompute_num_layers beyond the model's layers, or without full recomputation:
// exit 2 at the key's line and column, from simulate and from sweep (which keeps the value
// for its candidates and checks it as simulate does).
TEST(InputFiles, ARecomputeNumLayersTheModelCannotTakeIsBlamedOnItsLine) {
  const ScratchDir dir;
  const std::string experiment = dir / "experiment.yaml";
  std::ofstream(experiment) << "model: llama3-8b\ncluster: dgx-h100\ntraining: {seq_len: 2048, global_batch_size: 8}\n"
                               "parallelism:\n  recompute: full\n  recompute_num_layers: 40\n";
  const std::string beyond = "recompute_num_layers = 40 exceeds the model's 32 layers; use at most 32\n";
  for (const char* command : {"simulate", "sweep"}) {
    const TrainsimRun run = runTrainsim({command, experiment});
    EXPECT_EQ(run.exit_code, 2) << command;
    EXPECT_EQ(run.err, "trainsim: error: " + experiment + ":6:25: parallelism.recompute_num_layers: " + beyond)
        << command;
  }
  const TrainsimRun selective = runTrainsim(
      {"sweep", experiment, "--set", "parallelism.recompute=selective", "--set", "parallelism.recompute_num_layers=4"});
  EXPECT_EQ(selective.exit_code, 2);
  EXPECT_NE(selective.err.find("--set parallelism.recompute_num_layers=4: parallelism.recompute_num_layers: "
                               "recompute_num_layers = 4 needs recompute: full"),
            std::string::npos)
      << selective.err;
}

}  // namespace
}  // namespace trainsim::cli_testing
