// Calibration harness: the GEMM shapes trainsim-calib-gemm takes from an experiment's
// per-GPU workload, the reference set, and the plan (precision, copy sizes).
#include <gtest/gtest.h>

#include <algorithm>

#include "base/config_paths.h"
#include "calibrate/harness/gemm_harness_plan.h"
#include "calibrate/harness/gemm_shape_list.h"
#include "parallelism/experiment_loader.h"

namespace trainsim::harness {
namespace {

const ConfigPaths kPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS};

parallelism::Experiment load(const std::string& name, const std::vector<std::string>& sets = {}) {
  std::vector<Override> overrides;
  for (const auto& set : sets) overrides.push_back(parseOverride(set));
  auto experiment = parallelism::loadExperiment(name, kPaths, overrides);
  if (!experiment.ok()) throw std::runtime_error(experiment.error().toString());
  return std::move(experiment).value();
}

struct Shape {
  int64_t m, n, k, batch;
  bool operator==(const Shape&) const = default;
};
std::vector<Shape> dims(const std::vector<HarnessGemmShape>& shapes) {
  std::vector<Shape> result;
  for (const auto& shape : shapes) result.push_back({shape.m, shape.n, shape.k, shape.batch});
  return result;
}
bool contains(const std::vector<HarnessGemmShape>& shapes, Shape wanted) {
  const auto all = dims(shapes);
  return std::find(all.begin(), all.end(), wanted) != all.end();
}

TEST(HarnessGemmShapesTest, LlamaWithTensorParallelismForwardAndBackward) {
  // Llama 3 8B (hidden 4096, 32 query heads and 8 KV heads of 128, SwiGLU ffn 14336, vocab
  // 128256) at seq 8192, micro-batch 1, tp 2, cp 1: 8192 tokens per GPU.
  const auto experiment = load("llama3-8b-dgx-h100", {"parallelism.tp=2", "parallelism.cp=1", "parallelism.dp=4"});
  const auto shapes = experimentGemmShapes(experiment);
  const int64_t t = 8192;
  const int64_t h = 4096;
  const int64_t qkv = (4096 + 2 * 1024) / 2;  // this rank's query, key and value columns
  const int64_t ffn = 14336 / 2;
  const int64_t vocab = 128256 / 2;
  // Forward X[t x k] W[k x n], then per GEMM the input gradient dY W^T (m, k, n) and the
  // weight gradient X^T dY (k, n, m); the logits last.
  const std::vector<Shape> expected = {
      {t, qkv, h, 1},     {t, h, h / 2, 1},   {t, 2 * ffn, h, 1}, {t, h, ffn, 1},  // forward
      {t, h, qkv, 1},     {h, qkv, t, 1},                                          // qkv backward
      {t, h / 2, h, 1},   {h / 2, h, t, 1},                                        // attention output
      {t, h, 2 * ffn, 1}, {h, 2 * ffn, t, 1},                                      // gate + up
      {t, ffn, h, 1},     {ffn, h, t, 1},                                          // down
      {t, vocab, h, 1},   {t, h, vocab, 1},   {h, vocab, t, 1},                    // logits
  };
  EXPECT_EQ(dims(shapes), expected);
  for (const auto& shape : shapes) EXPECT_EQ(shape.source, "llama3-8b-dgx-h100");
}

TEST(HarnessGemmShapesTest, TensorParallelOverlapListsTheChunksThatRunTogether) {
  // tp 2 with tp_comm_overlap: QKV forward runs as 2 ring-exchange chunks of 4,096 rows, both
  // at once (8,192 rows, as without the split); fc2 forward as 4 pipelined chunks of 2,048
  // rows, 3 at once: 6,144 rows is what the model times and what the harness should measure.
  const auto shapes = experimentGemmShapes(
      load("llama3-8b-dgx-h100", {"parallelism.tp=2", "parallelism.cp=1", "parallelism.dp=4",
                                  "parallelism.sequence_parallel=true", "parallelism.tp_comm_overlap=true"}));
  EXPECT_TRUE(contains(shapes, {8192, (4096 + 2 * 1024) / 2, 4096, 1}));
  EXPECT_TRUE(contains(shapes, {6144, 4096, 14336 / 2, 1}));
  EXPECT_FALSE(contains(shapes, {8192, 4096, 14336 / 2, 1}));
}

TEST(HarnessGemmShapesTest, ContextParallelismShortensTheTokenDimension) {
  // The shipped plan: tp 1, cp 2: 4096 query positions per GPU.
  const auto shapes = experimentGemmShapes(load("llama3-8b-dgx-h100"));
  EXPECT_TRUE(contains(shapes, {4096, 6144, 4096, 1}));
  EXPECT_TRUE(contains(shapes, {4096, 128256, 4096, 1}));
  EXPECT_FALSE(contains(shapes, {8192, 6144, 4096, 1}));
  // Shapes are distinct.
  auto all = dims(shapes);
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::size_t j = i + 1; j < all.size(); ++j) EXPECT_FALSE(all[i] == all[j]) << i << " " << j;
  }
}

TEST(HarnessGemmShapesTest, FusedAttentionIsNotAGemmButUnfusedAttentionIs) {
  const auto experiment = load("llama3-8b-dgx-h100", {"parallelism.cp=1", "parallelism.dp=8"});
  const int64_t heads = 32;
  const Shape scores{8192, 8192, 128, heads};  // per (sequence, head): Q K^T
  const Shape context{8192, 128, 8192, heads};
  const auto fused = experimentGemmShapes(experiment);
  EXPECT_FALSE(contains(fused, scores));
  parallelism::FlopsOptions unfused;
  unfused.fused_attention = false;
  const auto shapes = experimentGemmShapes(experiment, unfused);
  EXPECT_TRUE(contains(shapes, scores));
  EXPECT_TRUE(contains(shapes, context));
  EXPECT_GT(shapes.size(), fused.size());
}

TEST(HarnessGemmShapesTest, MoeExpertsAreGroupedGemmsOverTheLocalExperts) {
  // Mixtral 8x7B, ep 4: 2 local experts; 4096 tokens x top-2 spread over them = 4096 each.
  const auto shapes = experimentGemmShapes(load("mixtral-8x7b-h100", {"parallelism.ep=4"}));
  EXPECT_TRUE(contains(shapes, {4096, 2 * 14336, 4096, 2}));  // gate + up, forward
  EXPECT_TRUE(contains(shapes, {4096, 4096, 14336, 2}));      // down, forward
  EXPECT_TRUE(contains(shapes, {14336, 4096, 4096, 2}));      // down, weight gradient
  EXPECT_TRUE(contains(shapes, {4096, 8, 4096, 1}));          // the router
}

TEST(HarnessGemmShapesTest, ReferenceSetIsTheDocumentedOne) {
  const auto reference = referenceGemmShapes();
  EXPECT_EQ(reference.size(), 17U);
  for (const int64_t size : {1024, 2048, 4096, 8192, 16384}) EXPECT_TRUE(contains(reference, {size, size, size, 1}));
  EXPECT_TRUE(contains(reference, {64, 8192, 8192, 1}));
  EXPECT_TRUE(contains(reference, {8192, 8192, 256, 1}));
  EXPECT_TRUE(contains(reference, {4096, 32768, 4096, 1}));
  for (const auto& shape : reference) EXPECT_EQ(shape.source, "reference");
  std::vector<HarnessGemmShape> distinct;
  appendDistinctShapes(distinct, reference);
  EXPECT_EQ(distinct.size(), reference.size());
}

TEST(HarnessGemmShapesTest, AppendKeepsTheFirstSourceOfAShape) {
  std::vector<HarnessGemmShape> list = {{4096, 4096, 4096, 1, "my-experiment"}};
  appendDistinctShapes(list, {{4096, 4096, 4096, 1, "reference"}, {4096, 4096, 4096, 2, "reference"}});
  ASSERT_EQ(list.size(), 2U);
  EXPECT_EQ(list[0].source, "my-experiment");
  EXPECT_EQ(list[1].batch, 2);
}

GemmHarnessOptions gemmOptions(const std::vector<std::string>& arguments) {
  auto parsed = parseGemmHarnessArguments(arguments);
  if (!parsed.ok()) throw std::runtime_error(parsed.error().toString());
  return parsed->options;
}

TEST(HarnessGemmPlanTest, ExperimentShapesThenReferenceAtTheTrainingPrecision) {
  const auto plan = planGemmHarness(gemmOptions({"--experiment", "llama3-8b-dgx-h100", "--set",
                                                 "training.precision=fp8", "--config-dir", kPaths.config_dir}),
                                    "/nonexistent");
  ASSERT_TRUE(plan.ok()) << plan.error().toString();
  EXPECT_EQ(plan->precision, topology::Precision::kFp8);
  const auto experiment_shapes = experimentGemmShapes(load("llama3-8b-dgx-h100"));
  ASSERT_GT(plan->shapes.size(), experiment_shapes.size());
  EXPECT_EQ(plan->shapes.front().source, "llama3-8b-dgx-h100");
  EXPECT_EQ(plan->shapes.back().source, "reference");
  // (4096, 4096, 4096) is both an experiment shape and a reference one: measured once.
  EXPECT_EQ(std::count_if(plan->shapes.begin(), plan->shapes.end(),
                          [](const HarnessGemmShape& s) { return s.m == 4096 && s.n == 4096 && s.k == 4096; }),
            1);
  // 1M .. 4G by 4.
  EXPECT_EQ(plan->memory_bytes.front(), int64_t{1} << 20);
  EXPECT_EQ(plan->memory_bytes.back(), int64_t{4} << 30);
  EXPECT_EQ(plan->memory_bytes.size(), 7U);
}

TEST(HarnessGemmPlanTest, ReferenceOnlyDefaultsToBf16) {
  const auto plan = planGemmHarness(gemmOptions({"--no-memory"}), kPaths.config_dir);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->precision, topology::Precision::kBf16);
  EXPECT_EQ(plan->shapes.size(), referenceGemmShapes().size());
  EXPECT_TRUE(plan->memory_bytes.empty());
}

TEST(HarnessGemmPlanTest, ExperimentsTrainingInDifferentPrecisionsNeedAnExplicitOne) {
  // llama3-8b-dgx-h100 and llama2-70b-h100 train in bf16, gpt3-175b-selene in fp16.
  auto options = gemmOptions({"--experiment", "llama3-8b-dgx-h100", "--experiment", "llama2-70b-h100"});
  const auto same = planGemmHarness(options, kPaths.config_dir);
  ASSERT_TRUE(same.ok()) << same.error().toString();
  EXPECT_EQ(same->precision, topology::Precision::kBf16);

  options = gemmOptions({"--experiment", "llama3-8b-dgx-h100", "--experiment", "gpt3-175b-selene"});
  const auto conflict = planGemmHarness(options, kPaths.config_dir);
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.error().code, ExitCode::kInvalidInput);
  EXPECT_NE(conflict.error().message.find("--precision"), std::string::npos) << conflict.error().toString();

  options.precision = topology::Precision::kFp16;
  const auto resolved = planGemmHarness(options, kPaths.config_dir);
  ASSERT_TRUE(resolved.ok()) << resolved.error().toString();
  EXPECT_EQ(resolved->precision, topology::Precision::kFp16);
  for (const char* source : {"llama3-8b-dgx-h100", "gpt3-175b-selene"}) {
    EXPECT_TRUE(std::any_of(resolved->shapes.begin(), resolved->shapes.end(), [&](const HarnessGemmShape& s) {
      return s.source == source;
    })) << source;
  }
}

TEST(HarnessGemmPlanTest, DryRunDescribesEveryShapeAndCopy) {
  GemmHarnessPlan plan;
  plan.precision = topology::Precision::kFp8;
  plan.shapes = {{8192, 8192, 8192, 1, "reference"}, {4096, 28672, 4096, 2, "mixtral-8x7b-h100"}};
  plan.memory_bytes = {1048576, 4194304};
  const std::string text = describeGemmPlan(plan);
  EXPECT_NE(text.find("precision: fp8"), std::string::npos) << text;
  EXPECT_NE(text.find("2 GEMM shapes"), std::string::npos) << text;
  EXPECT_NE(text.find("    8192     8192     8192      1     1099.512  reference"), std::string::npos) << text;
  EXPECT_NE(text.find("    4096    28672     4096      2     1924.145  mixtral-8x7b-h100"), std::string::npos) << text;
  EXPECT_NE(text.find("copies of 1048576 4194304 bytes"), std::string::npos) << text;
  plan.memory_bytes.clear();
  EXPECT_NE(describeGemmPlan(plan).find("memory bandwidth: not measured"), std::string::npos);
}

TEST(HarnessGemmPlanTest, ExperimentErrorsAreTheLoadersInputErrors) {
  const auto missing = planGemmHarness(gemmOptions({"--experiment", "no-such-experiment"}), kPaths.config_dir);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ExitCode::kInvalidInput);
  const auto bad_set = planGemmHarness(gemmOptions({"--experiment", "llama3-8b-dgx-h100", "--set", "parallelism.tp=3"}),
                                       kPaths.config_dir);
  ASSERT_FALSE(bad_set.ok());
  EXPECT_EQ(bad_set.error().code, ExitCode::kInvalidInput);
}

}  // namespace
}  // namespace trainsim::harness
