// The training validation suite: its rows (configs/validation/training/) build valid
// experiments, a few small ones run to finite, sane predictions, and the sources that meet
// issue 4's accuracy goal (MAPE <= 10% per source) keep meeting it on their default rows.
// `trainsim validate training` prints the table (docs/training-validation.md).
#include "validation/training_suite.h"
#include "tests/shipped_simulation_options.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace trainsim::validation {
namespace {

const ConfigPaths kPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS};

// Small rows, one or more per source, that simulate in well under a second.
const std::vector<std::string> kFastRows = {"megatron-sc21-t1-001", "megatron-sc21-t1-005", "korthikanti-2022-001",
                                            "korthikanti-2022-002", "mcore-h100-weak-001",  "mcore-h100-weak-002",
                                            "bridge-h100-fp8-001",  "dgxc-h100-002",        "korthikanti-t4-005"};

const TrainingRows& suiteRows() {
  static const TrainingRows rows = [] {
    auto loaded = loadTrainingRows(kPaths);
    if (!loaded.ok()) throw std::runtime_error(loaded.error().toString());
    return std::move(loaded).value();
  }();
  return rows;
}

// The row's experiment as its file gives it (the suite's cluster cut applied).
parallelism::Experiment experimentOf(const TrainingRow& row) {
  auto experiment = trainingExperiment(row, kPaths);
  if (!experiment.ok()) throw std::runtime_error(experiment.error().toString());
  return std::move(experiment).value();
}

const TrainingSuiteResult& fastSuite() {
  static const TrainingSuiteResult cached = [] {
    TrainingSuiteOptions options;
    options.simulation = shippedSimulationOptions();
    options.only = kFastRows;
    auto result = runTrainingSuite(kPaths, options);
    if (!result.ok()) throw std::runtime_error(result.error().toString());
    return std::move(result).value();
  }();
  return cached;
}

TEST(TrainingMeasurementsTest, RowsAreUniqueCitedAndConsistent) {
  std::set<std::string> ids;
  for (const auto& row : suiteRows().rows) {
    EXPECT_TRUE(ids.insert(row.id).second) << "duplicate " << row.id;
    EXPECT_EQ(row.id.rfind(row.source + "-", 0), 0u) << row.id << " is not a row of " << row.source;
    EXPECT_NO_THROW((void)suiteRows().source(row.source)) << row.id;
    EXPECT_GT(row.published, 0.0) << row.id;
    EXPECT_FALSE(row.assumptions.empty()) << row.id;
    // The experiment's own parallel sizes, as its file writes them, multiply to its GPUs.
    const ConfigNode plan = row.experimentNode().child("parallelism");
    const auto size = [&](const char* key) { return plan.has(key) ? plan.child(key).asPositiveInteger() : 1; };
    EXPECT_EQ(plan.child("gpus").asPositiveInteger(), size("tp") * size("pp") * size("cp") * size("dp")) << row.id;
    const ConfigNode training = row.experimentNode().child("training");
    EXPECT_EQ(training.child("global_batch_size").asPositiveInteger() %
                  (size("dp") * training.child("micro_batch_size").asPositiveInteger()),
              0)
        << row.id;
  }
  // training.yaml's 29 rows less the two strong-scaling ones, 8 Megatron-Bridge H100 rows, 12
  // DGX Cloud Benchmarking rows, Korthikanti et al.'s 5 per-layer times and 8 Megatron-Bridge
  // B200 / GB200 rows, 5 MLPerf Training GPT-3 H100 rows, 4 MLPerf Training Blackwell rows,
  // NeMo's 17 long-sequence rows and the 12 pre-training rows of NeMo 24.07's performance
  // summary; of other stacks, llm-foundry's 13 one-node FSDP1 rows, IBM's 4 FSDP1 rows and 2
  // hybrid-sharded ones,
  // torchtitan's 8 A100 rows, 10 rows on the 500 W H100 96GB, 6 vanilla and async TP rows on
  // the same GPU and 2 H200 rows, BLOOM's 12 and MT-NLG's 3 Megatron-DeepSpeed rows,
  // SC21's 6 ZeRO-3 rows and MaxText's 13 single-slice TPU rows; of mixture-of-experts runs, Megatron-Bridge's 32, NeMo
  // AutoModel's 4, Megatron-Core's Mixtral row, the 9 GB300 / GB200 / H100 rows of the Megatron-Core MoE report and
  // DeepSeek-V3's own run on 2,048 H800; of pipeline schedules, Qi et al.'s 60 1F1B, ZB-1p and ZB-V runs on A100.
  EXPECT_EQ(ids.size(), 284u);
  for (const auto& source : suiteRows().sources) EXPECT_FALSE(source.citation.empty()) << source.id;
}

TEST(TrainingMeasurementsTest, EveryRowBuildsAValidExperiment) {
  for (const auto& row : suiteRows().rows) {
    const auto experiment = trainingExperiment(row, kPaths);
    ASSERT_TRUE(experiment.ok()) << row.id << ": " << experiment.error().toString();
    const ConfigNode written = row.experimentNode();
    EXPECT_EQ(experiment->name, row.id) << row.id;
    EXPECT_EQ(experiment->model.name, row.model) << row.id;
    const ConfigNode plan = written.child("parallelism");
    EXPECT_EQ(experiment->plan.gpus, plan.child("gpus").asPositiveInteger()) << row.id;
    EXPECT_EQ(experiment->plan.dp, plan.child("dp").asPositiveInteger()) << row.id;
    EXPECT_EQ(experiment->plan.virtual_stages, plan.child("virtual_stages").asPositiveInteger()) << row.id;
    // The row's attention kernel reaches the simulator through the experiment, as a user's
    // would: written in the row, or given by the row's software stack.
    const ConfigNode training = written.child("training");
    if (training.has("flash_attention")) {
      EXPECT_EQ(experiment->training.flash_attention, training.child("flash_attention").asBool()) << row.id;
    } else {
      ASSERT_TRUE(experiment->stack) << row.id << ": neither flash_attention nor a stack";
      EXPECT_EQ(experiment->training.flash_attention, experiment->stack->training.flash_attention) << row.id;
    }
    EXPECT_GE(experiment->cluster.nodes * experiment->cluster.gpus_per_node, experiment->plan.gpus) << row.id;
  }
}

TEST(TrainingSuiteTest, SmallRowsGiveFiniteSanePredictions) {
  const auto& suite = fastSuite();
  ASSERT_EQ(suite.rows.size(), kFastRows.size());
  EXPECT_EQ(suite.failed, 0);
  EXPECT_EQ(suite.skipped_slow, 0);
  EXPECT_EQ(suite.compared, static_cast<int>(kFastRows.size()));
  for (const auto& comparison : suite.rows) {
    const auto& row = comparison.row;
    ASSERT_TRUE(comparison.ran) << row.id << ": " << comparison.failure;
    ASSERT_TRUE(comparison.experiment.has_value()) << row.id;
    const parallelism::Experiment& experiment = *comparison.experiment;
    const auto& result = comparison.result;
    EXPECT_TRUE(std::isfinite(comparison.predicted) && comparison.predicted > 0.0) << row.id;
    EXPECT_TRUE(std::isfinite(result.iteration_time_s) && result.iteration_time_s > 0.0) << row.id;
    // Sane, not accurate: within a factor of three of the published figure.
    EXPECT_GT(comparison.error, -2.0 / 3.0) << row.id;
    EXPECT_LT(comparison.error, 2.0) << row.id;
    EXPECT_NEAR(comparison.error, comparison.predicted / row.published - 1.0, 1e-12) << row.id;
    // Like with like: the compared figure is the one the source publishes.
    switch (suiteRows().source(row.source).metric) {
      case TrainingMetric::kHardwareTflopsPerGpu:
        EXPECT_EQ(comparison.predicted, result.hardware_tflops_per_gpu) << row.id;
        // Full recomputation: hardware FLOPs exceed model FLOPs by the rerun forward pass.
        EXPECT_GT(result.hardware_tflops_per_gpu, result.tflops_per_gpu) << row.id;
        break;
      case TrainingMetric::kModelTflopsPerGpu: EXPECT_EQ(comparison.predicted, result.tflops_per_gpu) << row.id; break;
      case TrainingMetric::kIterationTime: EXPECT_EQ(comparison.predicted, result.iteration_time_s) << row.id; break;
      case TrainingMetric::kTokensPerSecondPerGpu:
        EXPECT_EQ(comparison.predicted, result.tokens_per_s / static_cast<double>(experiment.plan.gpus)) << row.id;
        break;
      case TrainingMetric::kLayerTime:
        // A layer's share of the iteration: its layers take most of it, not more.
        EXPECT_LT(1e-3 * comparison.predicted * static_cast<double>(experiment.model.layers), result.iteration_time_s)
            << row.id;
        EXPECT_GT(1e-3 * comparison.predicted * static_cast<double>(experiment.model.layers),
                  0.8 * result.iteration_time_s)
            << row.id;
        break;
    }
    EXPECT_GT(result.mfu, 0.0) << row.id;
    EXPECT_LT(result.mfu, 1.0) << row.id;
    EXPECT_TRUE(result.memory.fits()) << row.id;
  }
}

// A layer_time_ms row's prediction is the marginal cost of a layer. Selective recomputation
// reruns each layer's core attention and nothing else (no collective), so the selective row
// takes, per layer, what its op profile's recomputed work takes per layer more than the row
// without recomputation: the identity holds to rounding.
TEST(TrainingSuiteTest, LayerTimeIsTheMarginalCostOfALayer) {
  TrainingSuiteOptions options;
  options.simulation = shippedSimulationOptions();
  options.only = {"korthikanti-t4-001", "korthikanti-t4-004"};
  const auto result = runTrainingSuite(kPaths, options);
  ASSERT_TRUE(result.ok()) << result.error().toString();
  ASSERT_EQ(result->rows.size(), 2u);
  const auto& none = result->rows[0];
  const auto& selective = result->rows[1];
  ASSERT_TRUE(none.ran && selective.ran) << none.failure << selective.failure;
  const auto experiment = trainingExperiment(selective.row, kPaths);
  ASSERT_TRUE(experiment.ok());
  const auto profile = parallelism::computeOpProfile(*experiment, shippedSimulationOptions());
  ASSERT_TRUE(profile.ok());
  double recompute_s = 0.0;
  for (const auto& op : profile->rows) recompute_s += op.recompute_s;
  EXPECT_GT(recompute_s, 0.0);
  const double per_layer_ms = 1e3 * recompute_s / static_cast<double>(experiment->model.layers);
  EXPECT_NEAR(selective.predicted - none.predicted, per_layer_ms, 1e-6 * per_layer_ms);
}

TEST(TrainingSuiteTest, MapeIsTheMeanAbsoluteErrorPerSourceAndOverall) {
  const auto& suite = fastSuite();
  double total = 0.0;
  for (const auto& accuracy : suite.sources) {
    double sum = 0.0;
    int count = 0;
    for (const auto& comparison : suite.rows) {
      if (comparison.row.source != accuracy.source.id) continue;
      sum += std::fabs(comparison.error);
      ++count;
    }
    EXPECT_EQ(accuracy.compared, count) << accuracy.source.id;
    EXPECT_NEAR(accuracy.mape, sum / count, 1e-12) << accuracy.source.id;
    total += sum;
  }
  EXPECT_EQ(suite.sources.size(), 6u);
  EXPECT_NEAR(suite.mape, total / suite.compared, 1e-12);
}

// Issue 4's goal is MAPE <= 10% on each source and <= 5% over all rows. On the default rows
// (the six slowest skipped), with each GPU type's default training-rate fraction
// (perf::ComputeParameters::training_rate_fraction, fitted by validation/training_rate_fit.h;
// docs/training-validation.md changes 34 and 35) and Megatron-Core's unpublished micro-batch
// and chunk counts chosen as the fastest plan that fits (validation/unpublished_plan_choice.h):
// SC21 7.1%, Korthikanti 3.0% / 3.8%, Megatron-Core H100 4.3%, Megatron-Bridge H100 FP8 7.5%,
// DGX Cloud 4.3%, Megatron-Bridge B200 / GB200 1.8%, MLPerf GPT-3 175B on H100 5.0%, MLPerf
// B200 / GB200 3.2%, NeMo long-sequence 5.0%, NeMo 24.07 3.9%; overall 4.5% over 92 rows
// (12.6% with the kernels at their microbenchmark rates). The bounds guard these figures.
TEST(TrainingSuiteTest, DefaultRowsStayWithinTheirAccuracyBounds) {
  TrainingSuiteOptions options;
  options.simulation = shippedSimulationOptions();
  // The fitted sources (the validation-only mixture-of-experts ones have a test of their own).
  for (const auto& row : suiteRows().rows) {
    if (!row.slow && suiteRows().source(row.source).rate_fit) options.only.push_back(row.id);
  }
  const auto result = runTrainingSuite(kPaths, options);
  ASSERT_TRUE(result.ok()) << result.error().toString();
  const auto& suite = *result;
  ASSERT_EQ(suite.rows.size(), 152u);
  EXPECT_EQ(suite.failed, 0);
  ASSERT_EQ(suite.sources.size(), 19u);
  for (const auto& accuracy : suite.sources) {
    const std::string& id = accuracy.source.id;
    EXPECT_GE(accuracy.compared, id == "torchtitan-h200" ? 2 : 3) << id;  // Trainy published two runs
    const double bound = id.starts_with("megatron-sc21")       ? 0.075
                         : id.starts_with("korthikanti-t4")    ? 0.04
                         : id.starts_with("korthikanti")       ? 0.032
                         : id.starts_with("mcore")             ? 0.046
                         : id.starts_with("bridge-blackwell")  ? 0.02
                         : id.starts_with("bridge")            ? 0.078
                         : id.starts_with("dgxc")              ? 0.046
                         : id.starts_with("mlperf-h100")       ? 0.053
                         : id.starts_with("mlperf-blackwell")  ? 0.035
                         : id.starts_with("nemo-long-context") ? 0.053
                         : id.starts_with("nemo-2407")         ? 0.042
                         // Other stacks, at their stack's own fitted fraction (in sample).
                         // (llm-foundry 6.0% and IBM 8.2% at pytorch-fsdp's fractions, BLOOM 7.3%
                         // and MT-NLG 4.4% at megatron-deepspeed's: each pair shares one fraction;
                         // llm-foundry's rows run fast and IBM's slow at the shared one.)
                         : id.starts_with("llmfoundry-mpt")  ? 0.065
                         : id.starts_with("ibm-fms-fsdp")    ? 0.09
                         : id.starts_with("torchtitan-a100") ? 0.025
                         : id.starts_with("torchtitan-h100") ? 0.055
                         // (its second H100 96GB source, 6.1%, and its H200 one, 0.7%, of two rows)
                         : id.starts_with("torchtitan-asynctp-h100") ? 0.065
                         : id.starts_with("torchtitan-h200")         ? 0.015
                         : id.starts_with("bloom-jean-zay")          ? 0.08
                         : id.starts_with("mt-nlg-530b")             ? 0.05
                                                                     : 0.10;
    EXPECT_LE(accuracy.mape, bound) << id;
  }
  // The overall goal.
  EXPECT_LE(suite.mape, 0.05);
}

// The DGX Cloud Benchmarking rows come in pairs, one plan run in BF16 and in FP8: the
// measured ratio of their step times is what FP8 buys on that plan (1.34 for Llama 3.1 8B
// and 70B, 1.53 for 405B, 1.51 for GPT-3 175B, 1.36 for Nemotron-4 15B, 1.46 for 340B). The
// model's ratio stays within 7.5% of it (8B: 1.27, the farthest).
TEST(TrainingSuiteTest, Fp8SpeedUpMatchesTheMeasuredPairs) {
  TrainingSuiteOptions options;
  options.simulation = shippedSimulationOptions();
  for (const auto& row : suiteRows().rows) {
    if (row.source == "dgxc-h100") options.only.push_back(row.id);
  }
  const auto result = runTrainingSuite(kPaths, options);
  ASSERT_TRUE(result.ok()) << result.error().toString();
  const auto& suite = *result;
  int pairs = 0;
  const auto precision = [](const TrainingRowComparison& comparison) {
    return comparison.experiment->training.precision;
  };
  const auto gpus = [](const TrainingRowComparison& comparison) { return comparison.experiment->plan.gpus; };
  for (const auto& bf16 : suite.rows) {
    ASSERT_TRUE(bf16.experiment.has_value()) << bf16.row.id << ": " << bf16.failure;
    if (bf16.row.source != "dgxc-h100" || precision(bf16) != topology::Precision::kBf16) continue;
    for (const auto& fp8 : suite.rows) {
      const auto& a = bf16.row;
      const auto& b = fp8.row;
      if (b.source != a.source || precision(fp8) != topology::Precision::kFp8 || b.model != a.model ||
          gpus(fp8) != gpus(bf16)) {
        continue;
      }
      ASSERT_TRUE(bf16.ran && fp8.ran) << a.id << " " << b.id;
      const double published = a.published / b.published;
      const double predicted = bf16.predicted / fp8.predicted;
      EXPECT_GT(predicted, 1.0) << a.id;
      EXPECT_NEAR(predicted / published, 1.0, 0.075) << a.id << " / " << b.id;
      ++pairs;
    }
  }
  EXPECT_EQ(pairs, 6);
}

// NeMo's long-sequence H100 table holds 4M tokens per step from 128K tokens on cp 4 to 1M
// tokens on cp 32: 555 -> 536 TFLOP/s per GPU (-3.4%), as each ring exchange of K and V
// hides under an attention step. The model follows (-0.1%); with the exchanges run after
// the pass instead, it lost 13% over the same rows (513 -> 448).
TEST(TrainingSuiteTest, LongSequenceThroughputHoldsAsContextParallelismGrows) {
  TrainingSuiteOptions options;
  options.simulation = shippedSimulationOptions();
  options.only = {"nemo-long-context-006", "nemo-long-context-009"};
  const auto result = runTrainingSuite(kPaths, options);
  ASSERT_TRUE(result.ok()) << result.error().toString();
  const auto& rows = result->rows;
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_TRUE(rows[0].ran && rows[1].ran);
  EXPECT_EQ(rows[0].experiment->plan.cp, 4);
  EXPECT_EQ(rows[1].experiment->plan.cp, 32);
  const double published = rows[1].row.published / rows[0].row.published;
  const double predicted = rows[1].predicted / rows[0].predicted;
  EXPECT_NEAR(predicted, published, 0.04);
}

TEST(TrainingSuiteTest, OnlyTheLargestRowsAreMarkedSlow) {
  // Running the default suite takes tens of seconds, so only the marking is checked here:
  // slow rows are the multi-thousand-GPU ones, and the small rows above are not among them.
  int slow = 0;
  for (const auto& row : suiteRows().rows) {
    if (!row.slow) continue;
    ++slow;
    EXPECT_GE(experimentOf(row).plan.gpus, 1024) << row.id;
  }
  EXPECT_GT(slow, 0);
  EXPECT_LE(slow, 8);
}

TEST(TrainingSuiteTest, UnknownRowIdIsAnError) {
  TrainingSuiteOptions options;
  options.simulation = shippedSimulationOptions();
  options.only = {"no-such-row"};
  const auto result = runTrainingSuite(kPaths, options);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("no-such-row"), std::string::npos);
}

}  // namespace
}  // namespace trainsim::validation
