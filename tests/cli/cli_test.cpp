// End-to-end tests of the `trainsim` executable: exit codes, error messages and output
// formats of SPEC.md, run as a user would (stdout, stderr and the exit status captured).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/trainsim_run.h"

namespace {

namespace fs = std::filesystem;
namespace cli_testing = trainsim::cli_testing;

using Result = cli_testing::TrainsimRun;
using TempDir = cli_testing::ScratchDir;

// Runs `trainsim ARGS...` with the source tree's presets; captures stdout, stderr, exit code.
// With `stdout_to`, stdout goes to that file instead (and `out` stays empty).
Result trainsim(const std::vector<std::string>& args, bool with_config_dir = true, int timeout_s = 120,
                const std::string& stdout_to = "") {
  return cli_testing::runTrainsim(args, timeout_s, with_config_dir, stdout_to);
}

nlohmann::json parseJson(const Result& result) {
  try {
    return nlohmann::json::parse(result.out);
  } catch (const std::exception& error) {
    ADD_FAILURE() << "stdout is not JSON (" << error.what() << "):\n" << result.out;
    return nlohmann::json();
  }
}

std::vector<std::string> dataLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) {
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  }
  return lines;
}

// ---------------------------------------------------------------------------------------
// The command line itself.

TEST(CliTest, VersionExitsZero) {
  const Result result = trainsim({"--version"}, false);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.rfind("trainsim ", 0), 0u) << result.out;
}

TEST(CliTest, HelpExitsZeroAndListsCommands) {
  const Result result = trainsim({"--help"}, false);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  for (const char* command : {"topology", "collective", "simulate", "sweep", "memory", "calibrate", "validate"}) {
    EXPECT_NE(result.out.find(command), std::string::npos) << command << " missing from:\n" << result.out;
  }
  for (const char* command : {"topology", "collective"}) {
    const Result sub = trainsim({command, "--help"});
    EXPECT_EQ(sub.exit_code, 0) << command << ": " << sub.err;
    EXPECT_FALSE(sub.out.empty()) << command;
  }
}

TEST(CliTest, UnknownCommandOrOptionIsInvalidInput) {
  EXPECT_EQ(trainsim({"bogus"}).exit_code, 2);
  EXPECT_EQ(trainsim({}).exit_code, 2);
  const Result option = trainsim({"topology", "dgx-h100", "--no-such-option"});
  EXPECT_EQ(option.exit_code, 2);
  EXPECT_FALSE(option.err.empty());
  EXPECT_EQ(trainsim({"collective"}).exit_code, 2);  // --cluster is required
}

TEST(CliTest, CommandLineErrorsHaveTheErrorPrefixOfEveryOtherError) {
  // Regression test for a bug found in review (fixed): CLI11's messages had no prefix.
  const Result option = trainsim({"topology", "dgx-h100", "--no-such-option"});
  EXPECT_EQ(option.exit_code, 2);
  EXPECT_EQ(option.err,
            "trainsim: error: The following argument was not expected: --no-such-option\n"
            "Run with --help for more information.\n");
  const Result required = trainsim({"collective"});
  EXPECT_EQ(required.exit_code, 2);
  EXPECT_EQ(required.err.rfind("trainsim: error: --cluster is required\n", 0), 0u) << required.err;
  const Result number = trainsim({"collective", "--cluster", "dgx-a100", "--gpus", "many"});
  EXPECT_EQ(number.exit_code, 2);
  EXPECT_EQ(number.err.rfind("trainsim: error: ", 0), 0u) << number.err;
  EXPECT_NE(number.err.find("many"), std::string::npos) << number.err;
  for (const std::vector<std::string>& args : {std::vector<std::string>{"bogus"}, std::vector<std::string>{}}) {
    const Result result = trainsim(args);
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err.rfind("trainsim: error: ", 0), 0u) << result.err;
  }
  // --help is no error: exit 0, on stdout.
  const Result help = trainsim({"simulate", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(help.err.empty()) << help.err;
}

TEST(CliTest, ADirectoryGivenAsAFileIsInvalidInputNamingIt) {
  // Regression test for a bug found in review (fixed): "internal error: basic_filebuf::underflow"
  // with exit 1.
  TempDir dir;
  const std::string path = dir.path().string();
  const std::string log = (dir.path() / "run.log").string();
  const std::string out = (dir.path() / "out.yaml").string();
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::string experiment = ": is a directory, expected an experiment YAML file\n";
  const std::string cluster = ": is a directory, expected a cluster YAML file\n";
  const std::string calibration = ": is a directory, expected a calibration file (written by trainsim calibrate)\n";
  const std::vector<Case> cases = {
      {{"simulate", path}, experiment},
      {{"memory", path}, experiment},
      {{"sweep", path}, experiment},
      {{"topology", path}, cluster},
      {{"collective", "--cluster", path}, cluster},
      {{"calibrate", "--cluster", path, "--nccl-tests", log, "--out", out}, cluster},
      {{"calibrate", "--cluster", "dgx-a100", "--nccl-tests", path, "--out", out},
       ": is a directory, expected an nccl-tests log file\n"},
      {{"calibrate", "--cluster", "dgx-a100", "--harness", path, "--out", out},
       ": is a directory, expected a trainsim-calib-nccl or trainsim-calib-gemm results file\n"},
      {{"simulate", "llama3-8b-dgx-h100", "--calibration", path}, calibration},
      {{"memory", "llama3-8b-dgx-h100", "--calibration", path}, calibration},
      {{"collective", "--cluster", "dgx-a100", "--calibration", path}, calibration},
      {{"sweep", "llama3-8b-dgx-h100", "--calibration", path}, calibration},
      {{"validate", "collectives", "--calibration", path}, calibration},
  };
  for (const auto& c : cases) {
    const Result result = trainsim(c.args);
    EXPECT_EQ(result.exit_code, 2) << c.args[0] << " " << c.args[1];
    EXPECT_EQ(result.err, "trainsim: error: " + path + c.expected) << c.args[0] << " " << c.args[1];
    EXPECT_TRUE(result.out.empty()) << result.out;
  }
}

// Regression test for the input-robustness audit: a collective that takes longer than the
// simulated clock's range (every link at the smallest bandwidth the loader takes, 1 MB/s;
// 4 TiB: ~8 x 10^6 s) aborted on an assertion (exit 134). It is an input error now.
TEST(CliTest, ACollectivePastTheSimulatedClockIsAnInputError) {
  TempDir dir;
  const std::string path = (dir.path() / "slow.yaml").string();
  std::ofstream(path) << "name: slow\ngpu: h100-sxm\nnodes: 1\ngpus_per_node: 4\n"
                         "intra_node: {fabric: nvswitch, nvls: false, bandwidth_GBps: 0.001}\n"
                         "pcie: {bandwidth_GBps: 0.001, socket_interconnect_GBps: 0.001}\n";
  const Result result = trainsim({"collective", "--cluster", path, "-b", "4096G", "-e", "4096G"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("trainsim: error: the simulation needs more than the clock's 46 days"), std::string::npos)
      << result.err;
  // A day's worth is still timed.
  const Result day = trainsim({"collective", "--cluster", path, "-b", "64G", "-e", "64G"});
  EXPECT_EQ(day.exit_code, 0) << day.err;
}

TEST(CliTest, WriteErrorsExitOneNamingTheOutput) {
  // Regression test for a bug found in review (fixed): --json /dev/full, --trace /dev/full and
  // stdout on /dev/full exited 0.
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  TempDir dir;
  const std::string file_error = "trainsim: error: /dev/full: cannot write the output: No space left on device\n";
  const std::string stdout_error = "trainsim: error: stdout: cannot write the output: No space left on device\n";
  const std::vector<std::vector<std::string>> to_file = {
      {"simulate", "llama3-8b-dgx-h100", "--json", "/dev/full"},
      {"simulate", "llama3-8b-dgx-h100", "--trace", "/dev/full"},
      {"memory", "llama3-8b-dgx-h100", "--json", "/dev/full"},
      {"topology", "dgx-h100", "--no-bisection", "--json", "/dev/full"},
      {"topology", "dgx-h100", "--no-bisection", "--dot", "/dev/full"},
      {"collective", "--cluster", "dgx-a100", "--gpus", "16", "-b", "1M", "-e", "1M", "--json", "/dev/full"},
  };
  for (const auto& args : to_file) {
    const Result result = trainsim(args, true, 120, (dir.path() / "stdout").string());
    EXPECT_EQ(result.exit_code, 1) << args[0] << " " << args.back();
    EXPECT_EQ(result.err, file_error) << args[0];
  }
  const std::vector<std::vector<std::string>> to_stdout = {
      {"simulate", "llama3-8b-dgx-h100"},
      {"simulate", "llama3-8b-dgx-h100", "--json", "-"},
      {"simulate", "llama3-8b-dgx-h100", "--trace", "-"},
      {"memory", "llama3-8b-dgx-h100"},
      {"topology", "dgx-h100", "--no-bisection"},
      {"topology", "dgx-h100", "--no-bisection", "--json", "-"},
      {"collective", "--cluster", "dgx-a100", "--gpus", "16", "-b", "1M", "-e", "1M"},
      {"collective", "--cluster", "dgx-a100", "--gpus", "16", "-b", "1M", "-e", "1M", "--json", "-"},
      {"--help"},
  };
  for (const auto& args : to_stdout) {
    const Result result = trainsim(args, true, 120, "/dev/full");
    EXPECT_EQ(result.exit_code, 1) << args[0] << " " << args.back();
    EXPECT_EQ(result.err, stdout_error) << args[0] << " " << args.back();
  }
  // A file that cannot be created: exit 1 (SPEC.md, issue 40), with the reason.
  const Result missing = trainsim({"memory", "llama3-8b-dgx-h100", "--json", "/nonexistent/trainsim/m.json"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err,
            "trainsim: error: /nonexistent/trainsim/m.json: cannot write the output file: No such file or directory\n");
}

TEST(CliTest, OnlyOneOutputMayGoToStdout) {
  // Regression test for a bug found in review (fixed): `simulate --json - --trace -` mixed the
  // two on stdout.
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"simulate", "llama3-8b-dgx-h100", "--json", "-", "--trace", "-"}, "--json - --trace -"},
      {{"topology", "dgx-h100", "--json", "-", "--dot", "-"}, "--json - --dot -"},
      {{"sweep", "llama3-8b-dgx-h100", "--json", "-", "--csv", "-"}, "--json - --csv -"},
      {{"sweep", "llama3-8b-dgx-h100", "--csv", "-", "--plot", "-"}, "--csv - --plot -"},
  };
  for (const auto& c : cases) {
    const Result result = trainsim(c.args);
    EXPECT_EQ(result.exit_code, 2) << c.expected;
    EXPECT_EQ(result.err,
              "trainsim: error: " + c.expected + ": only one output can go to stdout (-); write the other to a file\n");
    EXPECT_TRUE(result.out.empty()) << result.out;
  }
  // One output on stdout carries nothing else (SPEC.md): the trace alone is JSON, the dot
  // file alone is a graph.
  const Result trace = trainsim({"simulate", "llama3-8b-dgx-h100", "--trace", "-"});
  ASSERT_EQ(trace.exit_code, 0) << trace.err;
  EXPECT_TRUE(parseJson(trace).is_object());
  const Result dot = trainsim({"topology", "dgx-h100", "--no-bisection", "--dot", "-"});
  ASSERT_EQ(dot.exit_code, 0) << dot.err;
  EXPECT_EQ(dot.out.rfind("graph \"dgx-h100\" {", 0), 0u) << dot.out.substr(0, 200);
  EXPECT_EQ(dot.out.substr(dot.out.size() - 2), "}\n");
}

TEST(CliTest, AnUnevenPipelineSplitIsShownInTheTextAndTheJson) {
  const std::vector<std::string> args = {"simulate",
                                         "llama3-8b-dgx-h100",
                                         "--symmetric",
                                         "--set",
                                         "parallelism.pp=2",
                                         "--set",
                                         "parallelism.dp=2",
                                         "--set",
                                         "parallelism.first_stage_layers=17",
                                         "--set",
                                         "parallelism.last_stage_layers=15"};
  const Result text = trainsim(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("plan: tp 1 pp 2 (17 + 15 layers) dp 2"), std::string::npos) << text.out;
  std::vector<std::string> json_args = args;
  json_args.insert(json_args.end(), {"--json", "-"});
  const Result json = trainsim(json_args);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto parallelism = parseJson(json).at("parallelism");
  EXPECT_EQ(parallelism.at("first_stage_layers"), 17);
  EXPECT_EQ(parallelism.at("last_stage_layers"), 15);
  // An even split carries neither key.
  const Result even = trainsim({"simulate", "llama3-8b-dgx-h100", "--symmetric", "--json", "-"});
  ASSERT_EQ(even.exit_code, 0) << even.err;
  EXPECT_FALSE(parseJson(even).at("parallelism").contains("first_stage_layers"));
}

TEST(CliTest, CommandLineNumbersOutOfRangeAreInvalidInput) {
  // Regression test for a bug found in review (fixed): --gpus 0 meant every GPU, -f inf was
  // accepted, -f 1.0000001 ran for minutes, --top -1 wrapped to 2^64 - 1, --threads 0 and
  // --max-simulations -1 were accepted.
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<std::string> collective = {"collective", "--cluster", "dgx-a100"};
  auto with = [](std::vector<std::string> args, const std::vector<std::string>& extra) {
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  const std::vector<Case> cases = {
      {with(collective, {"--gpus", "0"}), "--gpus: expected at least 2 GPUs, found 0"},
      {with(collective, {"--gpus", "-8"}), "--gpus: expected at least 2 GPUs, found -8"},
      {with(collective, {"--gpus", "16", "--gpus-per-node", "0"}),
       "--gpus-per-node: expected a positive number of GPUs per node, found 0"},
      {with(collective, {"--gpus", "16", "-f", "inf"}),
       "--step-factor: expected a finite factor of at least 1.01, found inf"},
      {with(collective, {"--gpus", "16", "-f", "1.0000001"}),
       "--step-factor: expected a finite factor of at least 1.01, found 1.0000001"},
      {with(collective, {"--gpus", "16", "-f", "1.01", "-b", "8", "-e", "1G"}),
       "--step-factor: 1.01 gives 1881 sizes from 8 to 1073741824 bytes, more than the 1000 a run prints; use a "
       "larger factor or a narrower --min-bytes..--max-bytes"},
      {{"sweep", "llama3-8b-dgx-h100", "--top", "-1"}, "--top: expected at least 1 plan, found -1"},
      {{"sweep", "llama3-8b-dgx-h100", "--top", "0"}, "--top: expected at least 1 plan, found 0"},
      {{"sweep", "llama3-8b-dgx-h100", "--threads", "0"}, "--threads: expected 1 to 1024 worker threads, found 0"},
      {{"sweep", "llama3-8b-dgx-h100", "--threads", "1000000"},
       "--threads: expected 1 to 1024 worker threads, found 1000000"},
      {{"sweep", "llama3-8b-dgx-h100", "--max-simulations", "-1"},
       "--max-simulations: expected a count of 0 (no cap) or more, found -1"},
      {{"simulate", "llama3-8b-dgx-h100", "--threads", "0"}, "--threads: expected 1 to 1024 threads, found 0"},
  };
  for (const auto& c : cases) {
    const Result result = trainsim(c.args, true, 30);
    EXPECT_EQ(result.exit_code, 2) << c.expected;
    EXPECT_EQ(result.err, "trainsim: error: " + c.expected + "\n");
    EXPECT_TRUE(result.out.empty()) << result.out.substr(0, 300);
  }
  // The bounds themselves are accepted: -f 1.01 over a narrow range, --gpus 2.
  const Result fine = trainsim(with(collective, {"--gpus", "2", "-f", "1.01", "-b", "1M", "-e", "2M", "--json", "-"}));
  ASSERT_EQ(fine.exit_code, 0) << fine.err;
  EXPECT_EQ(parseJson(fine).size(), 70u);
}

TEST(CliTest, SimulateGivesTheSameBytesOnAnyThreadCount) {
  // GPT-3 175B: 192 micro-batches, extrapolated from runs of 32, 48 and 64 side by side.
  const std::vector<std::string> args = {"simulate", "gpt3-175b-selene", "--symmetric", "--json", "-"};
  auto threads = [&](const char* count) {
    std::vector<std::string> with = args;
    with.insert(with.end(), {"--threads", count});
    return with;
  };
  const Result one = trainsim(threads("1"));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  for (const char* count : {"2", "3"}) {
    const Result many = trainsim(threads(count));
    ASSERT_EQ(many.exit_code, 0) << many.err;
    EXPECT_EQ(many.out, one.out) << count << " threads";
  }
}

// ---------------------------------------------------------------------------------------
// topology

TEST(CliTest, TopologyJsonHasTheDocumentedKeys) {
  const Result result = trainsim({"topology", "dgx-h100", "--json", "-"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json json = parseJson(result);
  for (const char* key :
       {"cluster", "gpu", "nodes", "gpus_per_node", "gpus", "devices", "links", "scale_up_bandwidth_per_gpu_GBps",
        "network_injection_per_gpu_GBps", "bisection_bandwidth_GBps"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  EXPECT_EQ(json["cluster"], "dgx-h100");
  EXPECT_EQ(json["gpu"], "h100-sxm");
  EXPECT_EQ(json["nodes"], 32);
  EXPECT_EQ(json["gpus_per_node"], 8);
  EXPECT_EQ(json["gpus"], 256);
  EXPECT_EQ(json["devices"]["gpu"], 256);
  EXPECT_DOUBLE_EQ(json["scale_up_bandwidth_per_gpu_GBps"].get<double>(), 450.0);
  EXPECT_DOUBLE_EQ(json["network_injection_per_gpu_GBps"].get<double>(), 50.0);
  EXPECT_GT(json["bisection_bandwidth_GBps"].get<double>(), 0.0);
  EXPECT_FALSE(json.contains("path"));
}

TEST(CliTest, TopologyPathGoesThroughOwnNicAndLeaf) {
  const Result result = trainsim({"topology", "dgx-h100", "--path", "0", "8"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("path n0/gpu0 -> n1/gpu0"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("n0/nic0"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("leaf"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("n1/nic0"), std::string::npos) << result.out;

  const Result json_result = trainsim({"topology", "dgx-h100", "--no-bisection", "--path", "0", "8", "--json", "-"});
  ASSERT_EQ(json_result.exit_code, 0) << json_result.err;
  const nlohmann::json json = parseJson(json_result);
  EXPECT_TRUE(json["bisection_bandwidth_GBps"].is_null());
  EXPECT_EQ(json["path"]["from"], "n0/gpu0");
  EXPECT_EQ(json["path"]["to"], "n1/gpu0");
  EXPECT_EQ(json["path"]["hops"], json["path"]["links"].size());
}

TEST(CliTest, TopologyPathOutOfRangeIsInvalidInput) {
  const Result result = trainsim({"topology", "dgx-h100", "--no-bisection", "--path", "0", "256"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err, "trainsim: error: --path: GPU rank 256 is out of range; the cluster has ranks 0..255\n");
}

TEST(CliTest, BadOverrideValueIsInvalidInputWithExactMessage) {
  const Result result = trainsim({"topology", "dgx-h100", "--set", "inter_node.nic_bandwidth_Gbps=fast"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err,
            "trainsim: error: --set inter_node.nic_bandwidth_Gbps=fast: inter_node.nic_bandwidth_Gbps: expected a "
            "positive number, found \"fast\"\n");
  EXPECT_TRUE(result.out.empty()) << result.out;
}

TEST(CliTest, MalformedYamlNamesFileLineAndColumn) {
  TempDir dir;
  const fs::path file = dir.path() / "bad.yaml";
  std::ofstream(file) << "name: bad\ngpu: h100-sxm\nnodes: [1, 2\n";
  const Result result = trainsim({"topology", file.string()});
  EXPECT_EQ(result.exit_code, 2);
  const std::string prefix = "trainsim: error: " + file.string() + ":4:1: ";
  EXPECT_EQ(result.err.rfind(prefix, 0), 0u) << result.err;
  EXPECT_NE(result.err.find("invalid YAML"), std::string::npos) << result.err;
}

TEST(CliTest, BadValueInAFileNamesFileLineColumnAndKeyPath) {
  TempDir dir;
  const fs::path file = dir.path() / "cluster.yaml";
  std::ofstream(file) << "name: x\ngpu: h100-sxm\nnodes: 2\ngpus_per_node: 8\ninter_node:\n  nics_per_node: 8\n"
                         "  nic_bandwidth_Gbps: fast\n";
  const Result result = trainsim({"topology", file.string()});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err, "trainsim: error: " + file.string() +
                            ":7:23: inter_node.nic_bandwidth_Gbps: expected a positive number, found \"fast\"\n");
}

TEST(CliTest, UnknownKeyInAFileIsInvalidInput) {
  TempDir dir;
  const fs::path file = dir.path() / "cluster.yaml";
  std::ofstream(file) << "name: x\ngpu: h100-sxm\nnodes: 1\ngpus_per_nod: 8\n";
  const Result result = trainsim({"topology", file.string()});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err,
            "trainsim: error: " + file.string() + ":4:1: gpus_per_nod: unknown key (did you mean 'gpus_per_node'?)\n");
}

TEST(CliTest, BadFlashAttentionValueNamesFileLineColumnAndKey) {
  TempDir dir;
  const fs::path file = dir.path() / "experiment.yaml";
  std::ofstream(file) << "model: gpt3-175b\ncluster: dgx-a100\ntraining:\n  seq_len: 2048\n  global_batch_size: 8\n"
                         "  flash_attention: maybe\n";
  for (const char* command : {"simulate", "memory", "sweep"}) {
    const Result result = trainsim({command, file.string()});
    EXPECT_EQ(result.exit_code, 2) << command;
    EXPECT_EQ(result.err, "trainsim: error: " + file.string() +
                              ":6:20: training.flash_attention: expected true or false, found \"maybe\"\n")
        << command;
  }
}

TEST(CliTest, SimulateNamesUnfusedAttentionOnThePlanLine) {
  const Result flash = trainsim({"simulate", "gpt3-175b-selene", "--symmetric"});
  const Result unfused =
      trainsim({"simulate", "gpt3-175b-selene", "--symmetric", "--set", "training.flash_attention=false"});
  ASSERT_EQ(flash.exit_code, 0) << flash.err;
  ASSERT_EQ(unfused.exit_code, 0) << unfused.err;
  EXPECT_EQ(flash.out.find("unfused attention"), std::string::npos) << flash.out;
  EXPECT_NE(unfused.out.find(", 1f1b, unfused attention\n"), std::string::npos) << unfused.out;
}

// The summary names the fraction of the kernels' microbenchmark rates it ran them at and
// where it came from: the GPU type's default (perf::ComputeParameters::training_rate_fraction)
// or none for a GPU without one.
TEST(CliTest, SimulateNamesTheKernelRateFractionInForce) {
  const Result h100 = trainsim({"simulate", "llama3-8b-dgx-h100"});
  ASSERT_EQ(h100.exit_code, 0) << h100.err;
  EXPECT_NE(h100.out.find("kernel rates        0.883 of microbenchmark rates inside a step (h100-sxm default;"),
            std::string::npos)
      << h100.out;
  const Result mi300x = trainsim({"simulate", "mixtral-8x7b-mi300x"});
  ASSERT_EQ(mi300x.exit_code, 0) << mi300x.err;
  EXPECT_NE(mi300x.out.find("kernel rates        1 of microbenchmark rates inside a step (no default for this GPU)"),
            std::string::npos)
      << mi300x.out;
}

// The parameters training.stack_overrides sets are named in the text, the JSON and the HTML
// report, with a stack and without one; a run with none has an empty list.
TEST(CliTest, SimulateNamesTheStackOverridesInForce) {
  const std::string memory = "training.stack_overrides.compute.memory_efficiency=[{gpu: h100-sxm, fraction: 0.5}]";
  const std::string gap = "training.stack_overrides.compute.dispatch_kernel_gap_us=2";
  const Result stackless = trainsim({"simulate", "llama3-8b-dgx-h100", "--set", memory, "--set", gap});
  ASSERT_EQ(stackless.exit_code, 0) << stackless.err;
  EXPECT_NE(
      stackless.out.find(
          "stack overrides     compute.memory_efficiency, compute.dispatch_kernel_gap_us (training.stack_overrides)\n"),
      std::string::npos)
      << stackless.out;
  const auto json = parseJson(trainsim({"simulate", "llama3-8b-dgx-h100", "--set", "training.stack=torchtitan", "--set",
                                        memory, "--ignore-memory", "--json", "-"}));
  EXPECT_EQ(json["stack_overrides"], nlohmann::json::array({"compute.memory_efficiency"}));
  const auto plain = parseJson(trainsim({"simulate", "llama3-8b-dgx-h100", "--json", "-"}));
  EXPECT_EQ(plain["stack_overrides"], nlohmann::json::array());
  const Result html = trainsim({"simulate", "llama3-8b-dgx-h100", "--set", memory, "--html", "-"});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_NE(html.out.find("stack overrides: compute.memory_efficiency"), std::string::npos);
}

// The kernel-rate line names where the in-step fraction comes from: the GPU's default, the
// stack's file, or the experiment's stack_overrides (with a stack or without).
TEST(CliTest, SimulateSaysWhereTheKernelRateFractionComesFrom) {
  auto line = [](const std::vector<std::string>& sets) {
    std::vector<std::string> args = {"simulate", "llama3-8b-dgx-h100", "--ignore-memory"};
    for (const auto& set : sets) {
      args.push_back("--set");
      args.push_back(set);
    }
    const Result result = trainsim(args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const auto at = result.out.find("kernel rates        ");
    return at == std::string::npos ? std::string() : result.out.substr(at, result.out.find('\n', at) - at);
  };
  const std::string fraction =
      "training.stack_overrides.compute.training_rate_fraction=[{gpu: h100-sxm, fraction: 0.8}]";
  EXPECT_NE(line({}).find("(h100-sxm default;"), std::string::npos) << line({});
  const std::string stack = line({"training.stack=pytorch-fsdp"});
  EXPECT_NE(stack.find("0.739 of microbenchmark rates inside a step (pytorch-fsdp on h100-sxm;"), std::string::npos)
      << stack;
  const std::string overridden = line({"training.stack=pytorch-fsdp", fraction});
  EXPECT_NE(overridden.find("0.8 of microbenchmark rates inside a step (training.stack_overrides on h100-sxm)"),
            std::string::npos)
      << overridden;
  const std::string stackless = line({fraction});
  EXPECT_NE(stackless.find("(training.stack_overrides on h100-sxm)"), std::string::npos) << stackless;
  // A stack without a fraction of this GPU type: the GPU's default times the stack's factor.
  const std::string factored =
      line({"training.stack=torchtitan", "training.stack_overrides.compute.training_rate_stack_factor=0.5"});
  EXPECT_NE(factored.find("0.442 of microbenchmark rates inside a step (h100-sxm default x torchtitan's factor 0.5 "
                          "for GPUs it was not fitted on;"),
            std::string::npos)
      << factored;
}

// A cluster's GPU power limit below the power its rates hold at slows the math, and the
// summary says by how much.
TEST(CliTest, SimulateRunsTheMathAtTheClocksOfTheGpuPowerLimit) {
  const Result full = trainsim({"simulate", "llama3-8b-dgx-h100", "--json", "-"});
  const Result capped =
      trainsim({"simulate", "llama3-8b-dgx-h100", "--set", "cluster.gpu_power_limit_W=350", "--json", "-"});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  ASSERT_EQ(capped.exit_code, 0) << capped.err;
  const double full_s = nlohmann::json::parse(full.out)["iteration_time_s"].get<double>();
  const double capped_s = nlohmann::json::parse(capped.out)["iteration_time_s"].get<double>();
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(full.out)["kernel_rates"]["gpu_clock_ratio"].get<double>(), 1.0);
  EXPECT_NEAR(nlohmann::json::parse(capped.out)["kernel_rates"]["gpu_clock_ratio"].get<double>(),
              std::pow(350.0 / 700.0, 0.243), 1e-12);
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(capped.out)["kernel_rates"]["training_rate_fraction"].get<double>(), 0.883);
  // (350 / 700)^0.243 = 0.845 of the clocks: the compute-bound step slows by at most 1 / 0.845.
  EXPECT_GT(capped_s, full_s * 1.05);
  EXPECT_LT(capped_s, full_s / 0.845 + 1e-9);
  const Result text = trainsim({"simulate", "llama3-8b-dgx-h100", "--set", "cluster.gpu_power_limit_W=350"});
  EXPECT_NE(text.out.find("power limit         350 W where its rates hold at 700 W: math at 0.845 of their clocks\n"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(trainsim({"simulate", "llama3-8b-dgx-h100"}).out.find("power limit"), std::string::npos);
}

// A software stack (training.stack) is named on its own line with its dispatch mode, its
// host's waiting shows in the breakdown, and the JSON carries both, with the expected error
// of published runs of that stack (or of the defaults' sources, for a run naming none).
TEST(CliTest, SimulateReportsTheSoftwareStackAndTheExpectedError) {
  // (--ignore-memory: the example's plan holds more than 80 GB with torchtitan's eager
  // element-wise chains; the stack's report is what this checks.)
  const Result text =
      trainsim({"simulate", "llama3-8b-dgx-h100", "--set", "training.stack=torchtitan", "--ignore-memory"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("software stack      torchtitan ("), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("), eager dispatch\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  host dispatch     "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("expected error      iteration time +-"), std::string::npos) << text.out;
  const auto json = parseJson(trainsim(
      {"simulate", "llama3-8b-dgx-h100", "--set", "training.stack=torchtitan", "--ignore-memory", "--json", "-"}));
  EXPECT_EQ(json["stack"]["name"], "torchtitan");
  EXPECT_EQ(json["stack"]["dispatch"], "eager");
  EXPECT_TRUE(json["breakdown_s"].contains("host_dispatch_exposed"));
  ASSERT_TRUE(json["expected_error"].is_object());
  EXPECT_NE(json["expected_error"]["basis"].get<std::string>().find("torchtitan"), std::string::npos);
  const auto plain = parseJson(trainsim({"simulate", "llama3-8b-dgx-h100", "--json", "-"}));
  EXPECT_TRUE(plain["stack"].is_null());
  EXPECT_EQ(plain["breakdown_s"]["host_dispatch_exposed"], 0.0);
  EXPECT_GT(plain["expected_error"]["mape"].get<double>(), 0.0);
  // An unknown stack is an input error naming the override.
  const Result unknown = trainsim({"simulate", "llama3-8b-dgx-h100", "--set", "training.stack=lightning"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("training.stack"), std::string::npos) << unknown.err;
}

TEST(CliTest, SimulateOpsListsTheBusiestStagesComputeOpByOp) {
  const Result text = trainsim({"simulate", "llama3-8b-dgx-h100", "--ops"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("compute by op (stage 0 of 1, the busiest"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  mlp_gate_up "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  optimizer_step "), std::string::npos) << text.out;
  const Result json = trainsim({"simulate", "llama3-8b-dgx-h100", "--ops", "--json", "-"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json result = parseJson(json);
  ASSERT_TRUE(result.contains("ops"));
  const auto& ops = result["ops"];
  double sum = ops["optimizer_s"].get<double>();
  for (const auto& row : ops["rows"]) {
    EXPECT_NEAR(row["total_s"].get<double>(),
                row["forward_s"].get<double>() + row["backward_s"].get<double>() + row["recompute_s"].get<double>(),
                1e-12);
    sum += row["total_s"].get<double>();
  }
  EXPECT_NEAR(ops["total_s"].get<double>(), sum, 1e-9 * sum);
  // dp only on one node: no pipeline, so the stage's compute is the critical GPU's compute.
  EXPECT_NEAR(ops["total_s"].get<double>(), result["breakdown_s"]["compute"].get<double>(), 1e-6 * sum);
  // Without --ops the JSON is as before.
  const Result plain = trainsim({"simulate", "llama3-8b-dgx-h100", "--json", "-"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_FALSE(parseJson(plain).contains("ops"));
}

// ---------------------------------------------------------------------------------------
// collective

TEST(CliTest, CollectiveJsonRowsHaveNcclTestsColumns) {
  const Result result =
      trainsim({"collective", "--cluster", "dgx-a100", "--gpus", "16", "-b", "1M", "-e", "4M", "--json", "-"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json rows = parseJson(result);
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(rows.size(), 3u);
  const std::vector<double> sizes = {1048576.0, 2097152.0, 4194304.0};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    for (const char* key : {"bytes", "time_us", "algbw_GBps", "busbw_GBps"}) {
      ASSERT_TRUE(row.contains(key)) << key;
      ASSERT_TRUE(row[key].is_number()) << key;
    }
    EXPECT_EQ(row["bytes"].get<double>(), sizes[i]);
    const double time_us = row["time_us"].get<double>();
    const double algbw = row["algbw_GBps"].get<double>();
    EXPECT_GT(time_us, 0.0);
    EXPECT_NEAR(algbw, sizes[i] / (time_us * 1e-6) / 1e9, 1e-9 * algbw);
    EXPECT_NEAR(row["busbw_GBps"].get<double>(), algbw * 2.0 * 15.0 / 16.0, 1e-12 * algbw);
  }
  // Bigger messages reach more bandwidth.
  EXPECT_LT(rows[0]["algbw_GBps"].get<double>(), rows[2]["algbw_GBps"].get<double>());
}

TEST(CliTest, CollectiveTextTableHasOneRowPerSize) {
  const Result result = trainsim(
      {"collective", "--cluster", "dgx-a100", "--gpus", "16", "--op", "all_gather", "-b", "1K", "-e", "1M", "-f", "4"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto lines = dataLines(result.out);
  ASSERT_EQ(lines.size(), 6u) << result.out;  // 1K 4K 16K 64K 256K 1M
  EXPECT_EQ(lines.front().find("1024"), lines.front().find_first_not_of(' ')) << lines.front();
  EXPECT_NE(lines.back().find("1048576"), std::string::npos) << lines.back();
  for (const auto& line : lines) EXPECT_NE(line.find("float"), std::string::npos) << line;

  const Result json_result = trainsim({"collective", "--cluster", "dgx-a100", "--gpus", "16", "--op", "all_gather",
                                       "-b", "1K", "-e", "1M", "-f", "4", "--json", "-"});
  ASSERT_EQ(json_result.exit_code, 0) << json_result.err;
  const nlohmann::json rows = parseJson(json_result);
  ASSERT_EQ(rows.size(), 6u);
  for (const auto& row : rows) {
    // all_gather: busbw = algbw x (n-1)/n.
    EXPECT_NEAR(row["busbw_GBps"].get<double>(), row["algbw_GBps"].get<double>() * 15.0 / 16.0,
                1e-12 * row["algbw_GBps"].get<double>());
  }
}

TEST(CliTest, CollectiveTooManyGpusIsInvalidInput) {
  const Result result = trainsim({"collective", "--cluster", "dgx-a100", "--gpus", "100000", "-b", "1M", "-e", "1M"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err,
            "trainsim: error: --gpus: 100000 GPUs asked but the cluster has 1120; add nodes with --set nodes=N\n");
  EXPECT_TRUE(result.out.empty()) << result.out;
}

TEST(CliTest, CollectiveGpusPerNodeMustDivideGpus) {
  const Result result =
      trainsim({"collective", "--cluster", "dgx-a100", "--gpus-per-node", "3", "--gpus", "16", "-b", "1M", "-e", "1M"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(
      result.err,
      "trainsim: error: --gpus-per-node: expected a divisor of the GPU count that is at most the 8 GPUs of a node, "
      "found 3\n");
}

TEST(CliTest, CollectiveGpusPerNodeSpreadsTheGroup) {
  // 16 GPUs as 2 per node span 8 nodes; as 8 per node, 2 nodes: the first is slower.
  const auto time = [](const char* per_node) {
    const Result result = trainsim({"collective", "--cluster", "dgx-a100", "--gpus", "16", "--gpus-per-node", per_node,
                                    "-b", "256M", "-e", "256M", "--json", "-"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return parseJson(result).at(0).at("time_us").get<double>();
  };
  EXPECT_GT(time("2"), time("8"));
}

TEST(CliTest, CollectiveNvlsOnDgxA100IsInvalidInput) {
  const Result result =
      trainsim({"collective", "--cluster", "dgx-a100", "--gpus", "8", "--algo", "nvls", "-b", "1M", "-e", "1M"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err,
            "trainsim: error: --algo: nvls is not available for all_reduce on this group; available: ring\n");
}

TEST(CliTest, CollectiveBadArgumentsAreInvalidInput) {
  const std::vector<std::vector<std::string>> cases = {
      {"--gpus", "1", "-b", "1M", "-e", "1M"},
      {"--gpus", "16", "-b", "1M", "-e", "1M", "--op", "all_reduce_x"},
      {"--gpus", "16", "-b", "1M", "-e", "1M", "--algo", "butterfly"},
      {"--gpus", "16", "-b", "1M", "-e", "1M", "--proto", "ll"},
      {"--gpus", "16", "-b", "1X", "-e", "1M"},
      {"--gpus", "16", "-b", "4M", "-e", "1M"},
      {"--gpus", "16", "-b", "1M", "-e", "1M", "-f", "1"},
      {"--gpus", "16", "-b", "1M", "-e", "1M", "--set", "nodes=zero"},
      {"--gpus", "16", "-b", "1M", "-e", "1M", "--gpus", "8"},  // an option given twice (CLI11)
  };
  for (const auto& extra : cases) {
    std::vector<std::string> args = {"collective", "--cluster", "dgx-a100"};
    args.insert(args.end(), extra.begin(), extra.end());
    const Result result = trainsim(args);
    std::string shown;
    for (const auto& arg : extra) shown += " " + arg;
    EXPECT_EQ(result.exit_code, 2) << shown << ": " << result.err;
    EXPECT_FALSE(result.err.empty()) << shown;
    EXPECT_TRUE(result.out.empty()) << shown << ": " << result.out;
  }
  EXPECT_EQ(trainsim({"collective", "--cluster", "dgx-a100", "--gpus", "1", "-b", "1M", "-e", "1M"}).err,
            "trainsim: error: --gpus: expected at least 2 GPUs, found 1\n");
  EXPECT_EQ(trainsim({"collective", "--cluster", "dgx-a100", "--gpus", "16", "-b", "1X"}).err,
            "trainsim: error: --min-bytes: expected a size such as 8, 64K, 32M or 1G, found \"1X\"\n");
}

TEST(CliTest, CollectiveNegativeGpusPerNodeIsReportedAsSuch) {
  const Result result =
      trainsim({"collective", "--cluster", "dgx-a100", "--gpus", "16", "--gpus-per-node", "-2", "-b", "8", "-e", "8"});
  EXPECT_EQ(result.exit_code, 2);
  // Regression test for a bug found in review (fixed).
  EXPECT_EQ(result.err.rfind("trainsim: error: --gpus-per-node: ", 0), 0u) << result.err;
}

TEST(CliTest, CollectiveSizesBeyondTheSimulatedRangeAreInvalidInput) {
  // Regression test for a bug found in review (fixed).
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"1e18", "1e18"}, {"8", "inf"}, {"inf", "inf"}, {"1e300", "1e300"}};
  for (const auto& [min_bytes, max_bytes] : cases) {
    const Result result = trainsim(
        {"collective", "--cluster", "dgx-a100", "--gpus", "16", "-b", min_bytes, "-e", max_bytes, "-f", "1024"}, true,
        10);
    EXPECT_EQ(result.exit_code, 2) << "-b " << min_bytes << " -e " << max_bytes << ": " << result.err;
    EXPECT_EQ(result.err.rfind("trainsim: error: ", 0), 0u) << result.err;
  }
}

TEST(CliTest, CollectiveOutputIsDeterministic) {
  const std::vector<std::string> args = {"collective", "--cluster", "dgx-a100", "--gpus", "16", "-b", "8", "-e", "1G"};
  const Result first = trainsim(args);
  const Result second = trainsim(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(first.out, second.out);
  EXPECT_EQ(dataLines(first.out).size(), 28u);  // 8 B .. 1 GiB by powers of 2

  std::vector<std::string> json_args = args;
  json_args.insert(json_args.end(), {"--json", "-"});
  const Result json_first = trainsim(json_args);
  const Result json_second = trainsim(json_args);
  ASSERT_EQ(json_first.exit_code, 0) << json_first.err;
  EXPECT_EQ(json_first.out, json_second.out);
}

TEST(CliTest, ValidateGemmPrintsEachPublishedShapeAndItsJson) {
  const Result text = trainsim({"validate", "gemm"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("h100-sxm        fp8        32768x32768x32768     1382.2"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("MAPE"), std::string::npos);
  const Result json_result = trainsim({"validate", "gemm", "--json", "-"});
  ASSERT_EQ(json_result.exit_code, 0) << json_result.err;
  const nlohmann::json json = parseJson(json_result);
  ASSERT_TRUE(json.is_array());
  ASSERT_EQ(json.size(), 5u);
  EXPECT_EQ(json[0]["id"], "azure-cublaslt");
  EXPECT_EQ(json[0]["rows"].size(), 26u);
  for (const char* key : {"gpu", "precision", "m", "n", "k", "published_tflops", "predicted_tflops", "error"}) {
    EXPECT_TRUE(json[0]["rows"][0].contains(key)) << key;
  }
  EXPECT_EQ(json[1]["id"], "azure-cublaslt-gb200");
  EXPECT_EQ(json[1]["rows"].size(), 9u);
  EXPECT_EQ(json[2]["id"], "mamf");
  EXPECT_FALSE(json[2]["independent"].get<bool>());
  // A measured harness source prints its summary: the model as shipped, then calibrated on
  // the other workloads' shapes and on all of them; its JSON carries every row.
  EXPECT_NE(text.out.find("354 measured shapes (h100-sxm at bf16) of 26 workloads"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("calibrated on the other workloads' shapes:"), std::string::npos);
  EXPECT_EQ(json[3]["id"], "harness-h100-bf16");
  EXPECT_EQ(json[3]["rows"].size(), 354u);
  EXPECT_EQ(json[3]["workloads"], 26);
  for (const char* key : {"mape", "bias", "throughput_error"}) {
    EXPECT_TRUE(json[3]["held_out"].contains(key)) << key;
    EXPECT_TRUE(json[3]["in_sample"].contains(key)) << key;
  }
  for (const char* key : {"batch", "label", "held_out_tflops", "in_sample_tflops"}) {
    EXPECT_TRUE(json[3]["rows"][0].contains(key)) << key;
  }
  // Calibrated in sample, the class efficiencies reproduce the measured set's total time.
  EXPECT_NEAR(json[3]["in_sample"]["throughput_error"].get<double>(), 0.0, 0.005);
  EXPECT_NEAR(json[4]["in_sample"]["throughput_error"].get<double>(), 0.0, 0.005);
  const Result unknown = trainsim({"validate", "gemms"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("available: collectives, training, gemm, all"), std::string::npos) << unknown.err;
}

// `validate training --fit-rate-fraction` on two small rows, one A100 and one H100: each GPU
// type gets its own fraction, the one that brings its single row to its published figure
// (within the interpolation between grid points), and the errors at fraction 1 are the
// rows' errors at the kernel rates.
TEST(CliTest, ValidateFitRateFractionFitsEachGpuTypeToItsRows) {
  const Result fit = trainsim({"validate", "training", "--fit-rate-fraction", "--row", "korthikanti-2022-001", "--row",
                               "mcore-h100-weak-001", "--json", "-"});
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  const auto json = parseJson(fit);
  EXPECT_EQ(json["grid"].size(), 10u);
  EXPECT_EQ(json["rows"].get<int>(), 2);
  ASSERT_EQ(json["gpus"].size(), 2u);
  for (const auto& gpu : json["gpus"]) {
    EXPECT_GT(gpu["fraction"].get<double>(), 0.6) << gpu.dump();
    EXPECT_LT(gpu["fraction"].get<double>(), 1.05) << gpu.dump();
    EXPECT_FALSE(gpu["at_grid_edge"].get<bool>());
    ASSERT_EQ(gpu["sources"].size(), 1u);
    EXPECT_LT(gpu["sources"][0]["mape_fitted"].get<double>(), 0.002) << gpu.dump();
    EXPECT_FALSE(gpu["sources"][0].contains("held_out_fraction"));  // one source: nothing to hold out
  }
  // Megatron-Core's 1.7B row (at the micro-batch 4 the suite chooses for it) runs 17.1%
  // fast at the kernel rates: its fraction lies below 1.
  EXPECT_EQ(json["gpus"][1]["gpu"], "h100-sxm");
  EXPECT_NEAR(json["gpus"][1]["sources"][0]["mape_kernel_rates"].get<double>(), 0.171, 0.002);
  EXPECT_LT(json["gpus"][1]["fraction"].get<double>(), 0.9);
  // Only the training suite has rows to fit.
  EXPECT_EQ(trainsim({"validate", "gemm", "--fit-rate-fraction"}).exit_code, 2);
}

TEST(CliTest, ValidatePrintExperimentGivesTheYamlTheRowSimulates) {
  // The printed experiment, simulated with the --set its first line names, reproduces the
  // row's prediction: the same tokens/s per GPU as `validate training --row`.
  const std::string id = "bridge-h100-fp8-001";
  const Result printed = trainsim({"validate", "training", "--row", id, "--print-experiment"});
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  const std::string header = "# " + id + ": trainsim simulate FILE --set cluster.nodes=1\n";
  ASSERT_EQ(printed.out.rfind(header, 0), 0u) << printed.out;
  TempDir dir;
  const std::string path = (dir.path() / "row.yaml").string();
  std::ofstream(path) << printed.out;
  const Result simulated = trainsim({"simulate", path, "--set", "cluster.nodes=1", "--json", "-"});
  ASSERT_EQ(simulated.exit_code, 0) << simulated.err;
  const Result validated = trainsim({"validate", "training", "--row", id, "--json", "-"});
  ASSERT_EQ(validated.exit_code, 0) << validated.err;
  const double predicted = parseJson(validated)["rows"][0]["predicted"].get<double>();
  EXPECT_DOUBLE_EQ(parseJson(simulated)["tokens_per_s"].get<double>() / 8.0, predicted);
  // A row whose source leaves the micro-batch size and chunks out prints at the ones the
  // suite chose, and says so; simulated, it gives the suite's prediction.
  const std::string chosen_id = "mcore-h100-weak-004";
  const Result chosen = trainsim({"validate", "training", "--row", chosen_id, "--print-experiment"});
  ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
  EXPECT_NE(chosen.out.find("\n# micro-batch 4, 1 chunk: not published; the fastest of 3 plans that fit\n"),
            std::string::npos)
      << chosen.out;
  EXPECT_NE(chosen.out.find("  micro_batch_size: 4\n"), std::string::npos) << chosen.out;
  const std::string chosen_path = (dir.path() / "chosen.yaml").string();
  std::ofstream(chosen_path) << chosen.out;
  const Result chosen_simulated = trainsim({"simulate", chosen_path, "--set", "cluster.nodes=48", "--json", "-"});
  ASSERT_EQ(chosen_simulated.exit_code, 0) << chosen_simulated.err;
  const Result chosen_validated = trainsim({"validate", "training", "--row", chosen_id, "--json", "-"});
  ASSERT_EQ(chosen_validated.exit_code, 0) << chosen_validated.err;
  const auto chosen_row = parseJson(chosen_validated)["rows"][0];
  EXPECT_EQ(chosen_row["micro_batch_size"].get<int>(), 4);
  EXPECT_FALSE(chosen_row["micro_batch_published"].get<bool>());
  EXPECT_EQ(chosen_row["plan_candidates_fitting"].size(), 3u);
  EXPECT_DOUBLE_EQ(parseJson(chosen_simulated)["tflops_per_gpu"].get<double>(), chosen_row["predicted"].get<double>());
  // Without a row, or for another suite, it is an input error.
  EXPECT_EQ(trainsim({"validate", "training", "--print-experiment"}).exit_code, 2);
  EXPECT_EQ(trainsim({"validate", "training", "--row", "no-such-row", "--print-experiment"}).exit_code, 2);
}

}  // namespace
