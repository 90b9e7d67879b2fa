// The training suite's data files (configs/validation/training/, validation/training_rows.h):
// the shipped ones load, and a malformed one is refused with the file, line, column and key
// to change, as every other configuration file of the project is.
#include "validation/training_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <string>

#include "tests/scratch_config_dir.h"
#include "tests/shipped_simulation_options.h"
#include "validation/training_suite.h"

namespace trainsim::validation {
namespace {

namespace fs = std::filesystem;

const ConfigPaths kPaths{TRAINSIM_CONFIG_DIR_FOR_TESTS};

// A config directory holding one training source file, demo.yaml, and the index that lists it.
class SourceDir {
 public:
  explicit SourceDir(const std::string& demo) {
    write("sources.yaml", "sources:\n  - demo\n");
    write("demo.yaml", demo);
  }
  void write(const std::string& name, const std::string& text) const {
    dir_.write("validation/training/" + name, text);
  }
  [[nodiscard]] ConfigPaths paths() const { return dir_.paths(); }
  [[nodiscard]] std::string file(const std::string& name) const { return dir_.file("validation/training/" + name); }

 private:
  ScratchConfigDir dir_{"trainsim_training_rows_test"};
};

// One row of Korthikanti et al.'s 22B layer on one DGX A100; `row_extra` lands among the
// row's keys, `training_extra` in its experiment's training section.
std::string demoSource(const std::string& row_extra = "", const std::string& training_extra = "") {
  return "id: demo\n"
         "title: \"Demo\"\n"
         "citation: >-\n"
         "  A test source,\n"
         "  folded over two lines\n"
         "metric: iteration_time_s\n"
         "metric_definition: \"seconds per iteration\"\n"
         "rows:\n"
         "  - id: demo-001\n"
         "    model: \"22B\"\n"
         "    published: {iteration_time_s: 1.5}\n"
         "    slow: false\n" +
         row_extra +
         "    assumptions: \"none\"\n"
         "    experiment:\n"
         "      name: demo-001\n"
         "      model:\n"
         "        architecture: gpt\n"
         "        layers: 4\n"
         "        hidden_size: 6144\n"
         "        ffn_hidden_size: 24576\n"
         "        attention_heads: 64\n"
         "        vocab_size: 51200\n"
         "      cluster: dgx-a100\n"
         "      training:\n"
         "        seq_len: 2048\n"
         "        global_batch_size: 4\n"
         "        micro_batch_size: 4\n"
         "        precision: fp16\n" +
         training_extra +
         "      parallelism:\n"
         "        gpus: 8\n"
         "        tp: 8\n";
}

TEST(TrainingRowsTest, TheShippedFilesHoldEverySourceAndRowInTheSuitesOrder) {
  const auto rows = loadTrainingRows(kPaths);
  ASSERT_TRUE(rows.ok()) << rows.error().toString();
  ASSERT_EQ(rows->sources.size(), 27u);
  EXPECT_EQ(rows->sources.front().id, "megatron-sc21-t1");
  EXPECT_EQ(rows->sources.back().id, "deepseek-v3-moe");
  EXPECT_EQ(rows->rows.size(), 284u);
  // The mixture-of-experts sources (ids with "-moe": bridge-moe, automodel-moe, mcore-moe,
  // mcore-moe-report, deepseek-v3-moe; files training/*-moe*.yaml), MaxText's TPU runs (torus collectives
  // not modelled as XLA runs them) and Qi et al.'s pipeline schedules (zero-bubble-qi2024: kept off
  // the A100's fraction) and SC21's ZeRO-3 runs (DeepSpeed's ZeRO-3 of 2021, which the model runs
  // 1.2-3.4x fast: docs/training-validation.md) are validation only; every other source is fitted.
  for (const auto& source : rows->sources) {
    const bool moe = source.id.find("-moe") != std::string::npos;
    EXPECT_EQ(source.rate_fit, !moe && source.id != "maxtext-tpu" && source.id != "zero-bubble-qi2024" &&
                                   source.id != "megatron-sc21-zero3")
        << source.id;
  }
  // Grouped by source, in the sources' order.
  std::size_t source = 0;
  for (const auto& row : rows->rows) {
    while (source < rows->sources.size() && rows->sources[source].id != row.source) ++source;
    ASSERT_LT(source, rows->sources.size()) << row.id << " is out of its source's order";
  }
  EXPECT_EQ(rows->find("mcore-h100-weak-004")->source, "mcore-h100-weak");
  EXPECT_EQ(rows->find("no-such-row"), nullptr);
}

TEST(TrainingRowsTest, AFoldedCitationReadsAsOneLine) {
  const SourceDir dir(demoSource());
  const auto rows = loadTrainingRows(dir.paths());
  ASSERT_TRUE(rows.ok()) << rows.error().toString();
  EXPECT_EQ(rows->sources[0].citation, "A test source, folded over two lines");
  EXPECT_EQ(rows->sources[0].metric, TrainingMetric::kIterationTime);
  ASSERT_EQ(rows->rows.size(), 1u);
  EXPECT_EQ(rows->rows[0].published, 1.5);
  EXPECT_TRUE(rows->rows[0].micro_batch_published);
}

TEST(TrainingRowsTest, AnUnknownRowKeyIsAnErrorAtItsPosition) {
  const SourceDir dir(demoSource("    micro_batch_publishd: false\n"));
  const auto rows = loadTrainingRows(dir.paths());
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.error().code, ExitCode::kInvalidInput);
  EXPECT_EQ(rows.error().where, dir.file("demo.yaml") + ":13:5");
  EXPECT_EQ(rows.error().key_path, "rows[0].micro_batch_publishd");
  EXPECT_NE(rows.error().message.find("did you mean 'micro_batch_published'"), std::string::npos)
      << rows.error().toString();
}

TEST(TrainingRowsTest, AValueOfTheWrongTypeIsAnErrorAtItsPosition) {
  const SourceDir dir(demoSource("    virtual_stages_published: sometimes\n"));
  const auto rows = loadTrainingRows(dir.paths());
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.error().toString(), dir.file("demo.yaml") +
                                         ":13:31: rows[0].virtual_stages_published: expected true or false, found "
                                         "\"sometimes\"");
}

TEST(TrainingRowsTest, APublishedFigureMustBeInTheSourcesMetric) {
  std::string text = demoSource();
  text.replace(text.find("{iteration_time_s: 1.5}"), 23, "{tokens_per_s_per_gpu: 1.5}");
  const SourceDir dir(text);
  const auto rows = loadTrainingRows(dir.paths());
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.error().where, dir.file("demo.yaml") + ":11:17");
  EXPECT_EQ(rows.error().key_path, "rows[0].published.tokens_per_s_per_gpu");
  EXPECT_NE(rows.error().message.find("unknown key"), std::string::npos) << rows.error().toString();
}

TEST(TrainingRowsTest, RowIdsBelongToTheirSourceAndAreUnique) {
  std::string other = demoSource();
  other.replace(other.find("  - id: demo-001"), 16, "  - id: mcore-001");
  const SourceDir foreign(other);
  const auto not_its_own = loadTrainingRows(foreign.paths());
  ASSERT_FALSE(not_its_own.ok());
  EXPECT_EQ(not_its_own.error().where, foreign.file("demo.yaml") + ":9:9");
  EXPECT_EQ(not_its_own.error().key_path, "rows[0].id");

  std::string twice = demoSource();
  const std::string row = twice.substr(twice.find("  - id: demo-001"));
  const SourceDir duplicated(twice + row);
  const auto given_twice = loadTrainingRows(duplicated.paths());
  ASSERT_FALSE(given_twice.ok());
  EXPECT_EQ(given_twice.error().key_path, "rows[1].id");
  EXPECT_NE(given_twice.error().message.find("given twice"), std::string::npos) << given_twice.error().toString();
}

TEST(TrainingRowsTest, EverySourceFileIsListedAndEveryListedOneExists) {
  const SourceDir dir(demoSource());
  dir.write("stray.yaml", demoSource());
  const auto unlisted = loadTrainingRows(dir.paths());
  ASSERT_FALSE(unlisted.ok());
  EXPECT_EQ(unlisted.error().where, dir.file("stray.yaml"));
  EXPECT_NE(unlisted.error().message.find("sources.yaml does not list"), std::string::npos);

  dir.write("sources.yaml", "sources:\n  - demo\n  - missing\n");
  const auto missing = loadTrainingRows(dir.paths());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().where, dir.file("sources.yaml") + ":3:5");
  EXPECT_NE(missing.error().message.find("no source file"), std::string::npos) << missing.error().toString();

  dir.write("sources.yaml", "sources:\n  - demo\n");
  dir.write("demo.yaml", "id: other\n" + demoSource().substr(demoSource().find('\n') + 1));
  const auto renamed = loadTrainingRows(dir.paths());
  ASSERT_FALSE(renamed.ok());
  EXPECT_EQ(renamed.error().where, dir.file("demo.yaml") + ":1:5");
  EXPECT_EQ(renamed.error().key_path, "id");
}

// A row's experiment goes through the experiment loader a user's file does: an unknown key
// in it fails that row, positioned in the source file.
TEST(TrainingRowsTest, ARowsExperimentIsCheckedByTheExperimentLoader) {
  const SourceDir dir(demoSource("", "        flash_atention: false\n"));
  const auto rows = loadTrainingRows(dir.paths());
  ASSERT_TRUE(rows.ok()) << rows.error().toString();
  ConfigPaths paths = dir.paths();
  // The row's cluster preset comes from the shipped presets.
  fs::create_directories(fs::path(paths.config_dir) / "clusters");
  fs::copy_file(fs::path(kPaths.config_dir) / "clusters" / "dgx-a100.yaml",
                fs::path(paths.config_dir) / "clusters" / "dgx-a100.yaml");
  fs::copy_file(fs::path(kPaths.config_dir) / "gpus.yaml", fs::path(paths.config_dir) / "gpus.yaml");
  const auto experiment = trainingExperiment(rows->rows[0], paths);
  ASSERT_FALSE(experiment.ok());
  EXPECT_EQ(experiment.error().where, dir.file("demo.yaml") + ":29:9");
  EXPECT_EQ(experiment.error().key_path, "rows[0].experiment.training.flash_atention");

  const auto suite = runTrainingSuite(*rows, paths);
  ASSERT_TRUE(suite.ok()) << suite.error().toString();
  ASSERT_EQ(suite->rows.size(), 1u);
  EXPECT_EQ(suite->failed, 1);
  EXPECT_EQ(suite->rows[0].failure, experiment.error().toString());
}

// A row's published peak memory needs its source to say what the figure counts, and is
// compared with the memory model's peak per GPU.
TEST(TrainingRowsTest, APublishedPeakMemoryIsComparedWithTheModelsPeak) {
  std::string text = demoSource();
  text.replace(text.find("{iteration_time_s: 1.5}"), 23, "{iteration_time_s: 1.5, peak_memory_GiB: 20}");
  {
    const SourceDir dir(text);
    const auto rows = loadTrainingRows(dir.paths());
    ASSERT_FALSE(rows.ok());
    EXPECT_EQ(rows.error().key_path, "rows[0].published.peak_memory_GiB");
    EXPECT_NE(rows.error().message.find("memory_definition"), std::string::npos) << rows.error().toString();
  }
  text.replace(text.find("rows:\n"), 6, "memory_definition: \"torch.cuda.max_memory_reserved\"\nrows:\n");
  const SourceDir dir(text);
  const auto rows = loadTrainingRows(dir.paths());
  ASSERT_TRUE(rows.ok()) << rows.error().toString();
  EXPECT_EQ(rows->sources[0].memory_definition, "torch.cuda.max_memory_reserved");
  ASSERT_TRUE(rows->rows[0].published_memory_GiB.has_value());
  EXPECT_EQ(*rows->rows[0].published_memory_GiB, 20.0);
  ConfigPaths paths = dir.paths();
  fs::create_directories(fs::path(paths.config_dir) / "clusters");
  fs::copy_file(fs::path(kPaths.config_dir) / "clusters" / "dgx-a100.yaml",
                fs::path(paths.config_dir) / "clusters" / "dgx-a100.yaml");
  fs::copy_file(fs::path(kPaths.config_dir) / "gpus.yaml", fs::path(paths.config_dir) / "gpus.yaml");
  TrainingSuiteOptions options;
  options.simulation = shippedSimulationOptions();
  const auto suite = runTrainingSuite(*rows, paths, options);
  ASSERT_TRUE(suite.ok()) << suite.error().toString();
  const TrainingRowComparison& comparison = suite->rows[0];
  ASSERT_TRUE(comparison.ran) << comparison.failure;
  ASSERT_TRUE(comparison.predicted_memory_GiB.has_value());
  const double peak_GiB = comparison.result.memory.peakBytes() / (1024.0 * 1024.0 * 1024.0);
  EXPECT_DOUBLE_EQ(*comparison.predicted_memory_GiB, peak_GiB);
  EXPECT_DOUBLE_EQ(comparison.memory_error, peak_GiB / 20.0 - 1.0);
  ASSERT_EQ(suite->sources.size(), 1u);
  EXPECT_EQ(suite->sources[0].memory_compared, 1);
  EXPECT_DOUBLE_EQ(suite->sources[0].memory_mape, std::fabs(comparison.memory_error));
  EXPECT_DOUBLE_EQ(suite->sources[0].memory_bias, comparison.memory_error);
}

// The experiment a row prints is its file's mapping, overrides applied, in the layout the
// suite has always printed: one key per line, quoted where the file quotes, flow mappings on
// one line.
TEST(TrainingRowsTest, ARowsExperimentPrintsAsItsFileWritesIt) {
  const SourceDir dir(demoSource());
  const auto rows = loadTrainingRows(dir.paths());
  ASSERT_TRUE(rows.ok()) << rows.error().toString();
  EXPECT_EQ(trainingClusterOverride(rows->rows[0]), "cluster.nodes=1");
  const std::string printed = trainingExperimentYaml(rows->rows[0], {parseOverride("training.micro_batch_size=2")});
  EXPECT_EQ(printed,
            "name: demo-001\nmodel:\n  architecture: gpt\n  layers: 4\n  hidden_size: 6144\n"
            "  ffn_hidden_size: 24576\n  attention_heads: 64\n  vocab_size: 51200\ncluster: dgx-a100\n"
            "training:\n  seq_len: 2048\n  global_batch_size: 4\n  micro_batch_size: 2\n  precision: fp16\n"
            "parallelism:\n  gpus: 8\n  tp: 8\n");
  // The override reached that copy only.
  EXPECT_NE(trainingExperimentYaml(rows->rows[0]).find("  micro_batch_size: 4\n"), std::string::npos);
}

}  // namespace
}  // namespace trainsim::validation
