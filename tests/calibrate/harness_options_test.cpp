// Calibration harness: command lines of trainsim-calib-nccl and trainsim-calib-gemm.
#include <gtest/gtest.h>

#include "calibrate/harness/harness_options.h"

namespace trainsim::harness {
namespace {

using perf::CollectiveOp;

TEST(HarnessNcclOptionsTest, DefaultsMeasureEveryOpAndLayout) {
  const auto parsed = parseNcclHarnessArguments({});
  ASSERT_TRUE(parsed.ok()) << parsed.error().toString();
  const NcclHarnessOptions& options = parsed->options;
  EXPECT_FALSE(parsed->help);
  EXPECT_EQ(options.min_bytes, 8);
  EXPECT_EQ(options.max_bytes, int64_t{1} << 30);
  EXPECT_EQ(options.step_factor, 2.0);
  EXPECT_EQ(options.ops,
            (std::vector<CollectiveOp>{CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
                                       CollectiveOp::kAllToAll, CollectiveOp::kSendRecv}));
  EXPECT_EQ(options.layouts, (std::vector<LayoutKind>{LayoutKind::kIntraNode, LayoutKind::kOnePerNode,
                                                      LayoutKind::kTpLike, LayoutKind::kDpLike, LayoutKind::kWorld}));
  EXPECT_EQ(options.warmup, 5);
  EXPECT_EQ(options.iterations, 20);
  EXPECT_EQ(options.dtype, topology::Precision::kBf16);
  EXPECT_EQ(options.tp, 0);
  EXPECT_EQ(options.out, "trainsim-calib-nccl.yaml");
}

TEST(HarnessNcclOptionsTest, NcclTestsStyleOptions) {
  const auto parsed = parseNcclHarnessArguments(
      {"-b",        "1M",      "-e",        "4G",    "-f", "4",       "--ops", "all_gather,send_recv,all_gather",
       "--layouts", "dp_like", "--layouts", "world", "-w", "2",       "-n",    "50",
       "--dtype",   "fp32",    "--tp",      "4",     "-o", "out.yaml"});
  ASSERT_TRUE(parsed.ok()) << parsed.error().toString();
  const NcclHarnessOptions& options = parsed->options;
  EXPECT_EQ(options.min_bytes, int64_t{1} << 20);
  EXPECT_EQ(options.max_bytes, int64_t{4} << 30);
  EXPECT_EQ(options.step_factor, 4.0);
  EXPECT_EQ(options.ops, (std::vector<CollectiveOp>{CollectiveOp::kAllGather, CollectiveOp::kSendRecv}));
  EXPECT_EQ(options.layouts, (std::vector<LayoutKind>{LayoutKind::kDpLike, LayoutKind::kWorld}));
  EXPECT_EQ(options.warmup, 2);
  EXPECT_EQ(options.iterations, 50);
  EXPECT_EQ(options.dtype, topology::Precision::kFp32);
  EXPECT_EQ(options.tp, 4);
  EXPECT_EQ(options.out, "out.yaml");
}

TEST(HarnessNcclOptionsTest, HelpNeedsNothingElse) {
  const auto parsed = parseNcclHarnessArguments({"--help"});
  ASSERT_TRUE(parsed.ok());
  ASSERT_TRUE(parsed->help);
  EXPECT_NE(parsed->help->find("--layouts"), std::string::npos);
  EXPECT_NE(parsed->help->find("-b,--min-bytes"), std::string::npos);
}

TEST(HarnessNcclOptionsTest, BadValuesAreInputErrorsNamingTheOption) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--ops", "all_reduce,broadcast"}, "--ops"},
      {{"--ops", "allreduce"}, "--ops"},
      {{"--layouts", "rail"}, "--layouts"},
      {{"--dtype", "fp8"}, "--dtype"},
      {{"--dtype", "tf32"}, "--dtype"},
      {{"-b", "1G", "-e", "1M"}, "-e/--max-bytes"},
      {{"-b", "1.5K"}, "-b/--min-bytes"},
      {{"-f", "1"}, "-f/--step-factor"},
      {{"-n", "0"}, "--iters"},
      {{"-w", "-1"}, "--warmup"},
      {{"--tp", "-2"}, "--tp"},
  };
  for (const auto& [arguments, where] : cases) {
    const auto parsed = parseNcclHarnessArguments(arguments);
    ASSERT_FALSE(parsed.ok()) << arguments.front();
    EXPECT_EQ(parsed.error().code, ExitCode::kInvalidInput);
    EXPECT_EQ(parsed.error().where, where) << parsed.error().toString();
  }
  const auto unknown = parseNcclHarnessArguments({"--frobnicate"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("frobnicate"), std::string::npos);
}

TEST(HarnessGemmOptionsTest, Defaults) {
  const auto parsed = parseGemmHarnessArguments({});
  ASSERT_TRUE(parsed.ok()) << parsed.error().toString();
  const GemmHarnessOptions& options = parsed->options;
  EXPECT_TRUE(options.experiments.empty());
  EXPECT_FALSE(options.precision);
  EXPECT_TRUE(options.reference_shapes);
  EXPECT_TRUE(options.memory_bandwidth);
  EXPECT_FALSE(options.unfused_attention);
  EXPECT_EQ(options.workspace_bytes, int64_t{32} << 20);
  EXPECT_EQ(options.memory_min_bytes, int64_t{1} << 20);
  EXPECT_EQ(options.memory_max_bytes, int64_t{4} << 30);
  EXPECT_EQ(options.out, "trainsim-calib-gemm.yaml");
  EXPECT_FALSE(options.dry_run);
}

TEST(HarnessGemmOptionsTest, ExperimentsOverridesAndPrecision) {
  const auto parsed = parseGemmHarnessArguments({"--experiment", "llama3-8b-dgx-h100",
                                                 "--experiment", "my.yaml",
                                                 "--set",        "parallelism.tp=2",
                                                 "--set",        "training.seq_len=4096",
                                                 "--precision",  "fp8",
                                                 "--no-memory",  "--unfused-attention",
                                                 "--workspace",  "64M",
                                                 "--config-dir", "/tmp/configs",
                                                 "-n",           "7",
                                                 "-o",           "-",
                                                 "--dry-run"});
  ASSERT_TRUE(parsed.ok()) << parsed.error().toString();
  const GemmHarnessOptions& options = parsed->options;
  EXPECT_EQ(options.experiments, (std::vector<std::string>{"llama3-8b-dgx-h100", "my.yaml"}));
  ASSERT_EQ(options.overrides.size(), 2U);
  EXPECT_EQ(options.overrides[0].key_path, "parallelism.tp");
  EXPECT_EQ(options.overrides[0].value, "2");
  EXPECT_EQ(options.overrides[1].key_path, "training.seq_len");
  EXPECT_EQ(options.precision, topology::Precision::kFp8);
  EXPECT_FALSE(options.memory_bandwidth);
  EXPECT_TRUE(options.unfused_attention);
  EXPECT_EQ(options.workspace_bytes, int64_t{64} << 20);
  EXPECT_EQ(options.config_dir, "/tmp/configs");
  EXPECT_EQ(options.iterations, 7);
  EXPECT_EQ(options.out, "-");
  EXPECT_TRUE(options.dry_run);
}

TEST(HarnessGemmOptionsTest, BadCombinationsAreInputErrors) {
  const std::vector<std::vector<std::string>> cases = {
      {"--set", "parallelism.tp=2"},                     // no experiment to apply it to
      {"--experiment", "x", "--set", "parallelism.tp"},  // no '='
      {"--no-reference"},                                // nothing left to measure
      {"--precision", "fp64"},                           // no tensor-core GEMM
      {"--precision", "int8"},
      {"--memory-min-bytes", "1G", "--memory-max-bytes", "1M"},
      {"--workspace", "lots"},
      {"-n", "0"},
  };
  for (const auto& arguments : cases) {
    const auto parsed = parseGemmHarnessArguments(arguments);
    ASSERT_FALSE(parsed.ok()) << arguments.front() << " " << arguments.back();
    EXPECT_EQ(parsed.error().code, ExitCode::kInvalidInput) << parsed.error().toString();
  }
}

TEST(HarnessOptionsTest, ArgumentListSkipsTheProgramName) {
  const char* argv[] = {"trainsim-calib-gemm", "--experiment", "x"};
  EXPECT_EQ(argumentList(3, argv), (std::vector<std::string>{"--experiment", "x"}));
}

}  // namespace
}  // namespace trainsim::harness
