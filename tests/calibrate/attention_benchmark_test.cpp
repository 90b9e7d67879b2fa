// cudnn-frontend sdpa benchmark CSVs (both layouts, read from files the test writes) and the
// attention-rate fit over them: which rows it takes, and its arithmetic.
#include <unistd.h>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "calibrate/attention_benchmark_csv.h"
#include "calibrate/attention_fit.h"

namespace trainsim::calibrate {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Writes `text` to a file of its own and reads it back as a benchmark.
class AttentionBenchmarkFile : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() / ("trainsim_attention_test_" + std::to_string(::getpid()) + "_" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(directory_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = (directory_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  Expected<AttentionBenchmark> load(const std::string& name, const std::string& text) const {
    return loadAttentionBenchmarkCsv(write(name, text));
  }

  fs::path directory_;
};

// artifacts/sdpa_bf16_benchmark_results_NVIDIA_GB200.csv's layout; of these rows only the
// causal cuDNN BF16 one at 8,192 fits: a short sequence, a FlashAttention row, an FP8 row (a
// *_fp8 backend) and a non-causal row beside it.
const char* kArtifacts =
    "batch_size,q_seqlen,kv_seqlen,num_q_heads,num_kv_heads,head_dim,is_causal,backend,forward_time,"
    "backward_time,fwd_tflops_per_sec,bwd_tflops_per_sec\n"
    "1,2048,2048,128,8,128,True,cudnn_fe,0.129,0.525,1069.000,655.000\n"
    "1,8192,8192,128,8,128,True,cudnn_fe,1.389,4.542,1584.000,1211.000\n"
    "1,8192,8192,128,8,128,True,pyt_flash_attention,5.308,16.249,414.000,338.000\n"
    "1,8192,8192,128,8,128,True,cudnn_fe_fp8,1.162,4.359,1893.000,1261.000\n"
    "1,8192,8192,128,8,128,False,cudnn_fe,2.000,6.000,2000.000,1500.000\n";

TEST_F(AttentionBenchmarkFile, ReadsTheArtifactsLayout) {
  const auto benchmark = load("gb200.csv", kArtifacts);
  ASSERT_TRUE(benchmark.ok()) << benchmark.error().toString();
  EXPECT_EQ(benchmark->layout, "artifacts");
  EXPECT_THAT(benchmark->source, HasSubstr("gb200.csv"));
  ASSERT_EQ(benchmark->rows.size(), 5u);
  const auto& row = benchmark->rows[1];
  EXPECT_EQ(row.line, 3);
  EXPECT_EQ(row.backend, "cudnn_fe");
  EXPECT_EQ(row.data_type, "bf16");
  EXPECT_EQ(row.mask, AttentionMask::kCausal);
  EXPECT_EQ(row.q_seqlen, 8192);
  EXPECT_EQ(row.kv_seqlen, 8192);
  ASSERT_TRUE(row.forward && row.backward);
  EXPECT_DOUBLE_EQ(row.forward->time_ms, 1.389);
  EXPECT_DOUBLE_EQ(row.forward->tflops, 1584.0);
  EXPECT_DOUBLE_EQ(row.backward->time_ms, 4.542);
  EXPECT_DOUBLE_EQ(row.backward->tflops, 1211.0);
  EXPECT_EQ(benchmark->rows[3].backend, "cudnn_fe");  // cudnn_fe_fp8: cuDNN at FP8
  EXPECT_EQ(benchmark->rows[3].data_type, "fp8");
  EXPECT_EQ(benchmark->rows[4].mask, AttentionMask::kNone);
  EXPECT_TRUE(benchmark->gpu_names.empty());

  const auto fit = fitAttention(*benchmark);
  ASSERT_TRUE(fit.ok()) << fit.error().toString();
  EXPECT_TRUE(fit->causal);
  EXPECT_EQ(fit->rows, 1);
  EXPECT_EQ(fit->min_q_seqlen, 8192);
  EXPECT_EQ(fit->max_q_seqlen, 8192);
  EXPECT_DOUBLE_EQ(fit->forwardTflops(), 1584.0);
  EXPECT_DOUBLE_EQ(fit->backwardTflops(), 1211.0);
  EXPECT_TRUE(fit->notes.empty());
}

// The June 2025 B200 artifacts (benchmark/sdpa_benchmark_bf16_training at 87a1bcd, cuDNN
// 9.10.2): the PyTorch math backend ran out of memory from 16,384 tokens on and its time reads
// "inf" beside a rate of 0. Those passes did not complete: absent, the cuDNN rows beside them read.
TEST_F(AttentionBenchmarkFile, AnInfiniteTimeIsAPassThatDidNotComplete) {
  const auto benchmark =
      load("b200-2506.csv",
           "batch_size,q_seqlen,kv_seqlen,num_q_heads,num_kv_heads,head_dim,is_causal,backend,forward_time,"
           "backward_time,fwd_tflops_per_sec,bwd_tflops_per_sec\n"
           "1,16384,16384,128,8,128,True,pyt_math,inf,inf,0.000,0.000\n"
           "1,16384,16384,128,8,128,True,pyt_cudnn,6.475,20.466,1358.566,1074.499\n");
  ASSERT_TRUE(benchmark.ok()) << benchmark.error().toString();
  ASSERT_EQ(benchmark->rows.size(), 2u);
  EXPECT_FALSE(benchmark->rows[0].forward || benchmark->rows[0].backward);
  ASSERT_TRUE(benchmark->rows[1].forward && benchmark->rows[1].backward);
  const auto fit = fitAttention(*benchmark);
  ASSERT_TRUE(fit.ok()) << fit.error().toString();
  EXPECT_EQ(fit->rows, 1);
  EXPECT_DOUBLE_EQ(fit->forwardTflops(), 1358.566);
  // A negative infinity is no such marker: refused at its cell.
  const auto negative = load("bad.csv",
                             "batch_size,q_seqlen,kv_seqlen,num_q_heads,num_kv_heads,head_dim,is_causal,backend,"
                             "forward_time,backward_time,fwd_tflops_per_sec,bwd_tflops_per_sec\n"
                             "1,16384,16384,128,8,128,True,cudnn_fe,-inf,1.0,100.0,100.0\n");
  ASSERT_FALSE(negative.ok());
  EXPECT_THAT(negative.error().toString(), HasSubstr("bad.csv:2:"));
}

TEST_F(AttentionBenchmarkFile, ReadsThePrecisionColumnVariantAsCudnn) {
  // artifacts/sdpa_fp8_benchmark_results_NVIDIA_B200.csv: a precision column, no backend.
  const auto benchmark = load("b200.csv",
                              "batch_size,q_seqlen,kv_seqlen,num_q_heads,num_kv_heads,head_dim,is_causal,precision,"
                              "forward_time,backward_time,fwd_tflops_per_sec,bwd_tflops_per_sec\n"
                              "1,2048,2048,128,8,128,True,bf16,0.151,0.630,907.547,545.088\n"
                              "1,8192,8192,128,8,128,True,fp8,1.464,4.382,1502.114,1254.687\n"
                              "1,8192,8192,128,8,128,True,bf16,1.589,5.526,1384.231,994.850\n");
  ASSERT_TRUE(benchmark.ok()) << benchmark.error().toString();
  ASSERT_EQ(benchmark->rows.size(), 3u);
  EXPECT_EQ(benchmark->rows[1].backend, "cudnn_fe");
  EXPECT_EQ(benchmark->rows[1].data_type, "fp8");
  EXPECT_EQ(benchmark->rows[2].data_type, "bf16");
  const auto fit = fitAttention(*benchmark);
  ASSERT_TRUE(fit.ok()) << fit.error().toString();
  EXPECT_EQ(fit->rows, 1);
  EXPECT_DOUBLE_EQ(fit->forwardTflops(), 1384.231);
  EXPECT_DOUBLE_EQ(fit->backwardTflops(), 994.850);
}

TEST_F(AttentionBenchmarkFile, FindsColumnsByNameInAnyOrder) {
  const auto benchmark = load("shuffled.csv",
                              "bwd_tflops_per_sec,backend,q_seqlen,forward_time,is_causal,kv_seqlen,"
                              "fwd_tflops_per_sec,backward_time\n"
                              "1211,cudnn_fe,8192,1.389,True,4096,1584,4.542\n");
  ASSERT_TRUE(benchmark.ok()) << benchmark.error().toString();
  ASSERT_EQ(benchmark->rows.size(), 1u);
  const auto& row = benchmark->rows[0];
  EXPECT_EQ(row.q_seqlen, 8192);
  EXPECT_EQ(row.kv_seqlen, 4096);
  EXPECT_DOUBLE_EQ(row.forward->time_ms, 1.389);
  EXPECT_DOUBLE_EQ(row.forward->tflops, 1584.0);
  EXPECT_DOUBLE_EQ(row.backward->time_ms, 4.542);
  EXPECT_DOUBLE_EQ(row.backward->tflops, 1211.0);
}

// results/*/*.csv's layout: of these rows the fit takes the causal cuDNN bfloat16 ones at
// 8,192 (top_left) and 16,384 (bottom_right); not the no_mask, fp8, FlashAttention, 2,048,
// deterministic-backward or failed (empty times, a quoted message with a comma) rows.
const char* kResults =
    "config_name,model_name,backend,data_type,attn_mask,batch_size,q_seqlen,kv_seqlen,num_q_heads,num_kv_heads,"
    "head_dim_qk,head_dim_vo,profile_pass,deterministic_bwd,fwd_time_ms,bwd_time_ms,fwd_tflops,bwd_tflops,max_diff,"
    "num_iterations,success,error_message,gpu_name,cudnn_version,cudnn_backend_version\n"
    "llama3.1,llama3.1,cudnn,bfloat16,top_left,1,8192,8192,64,8,128,128,both,False,0.704,2.150,1563.000,1279.000,"
    "0.000,10,True,,NVIDIA GB200,1.18.0,91801\n"
    "llama3.1,llama3.1,cudnn,bfloat16,no_mask,1,8192,8192,64,8,128,128,both,False,1.286,3.901,1709.000,1409.000,"
    "0.000,10,True,,NVIDIA GB200,1.18.0,91801\n"
    "llama3.1,llama3.1,cudnn,fp8,top_left,1,8192,8192,64,8,128,128,both,False,0.553,1.860,1987.000,1478.000,"
    "0.000,10,True,,NVIDIA GB200,1.18.0,91801\n"
    "llama3.1,llama3.1,flash_attention_4,bfloat16,top_left,1,8192,8192,64,8,128,128,both,False,0.650,2.000,"
    "1690.000,1370.000,0.000,10,True,,NVIDIA GB200,1.18.0,91801\n"
    "llama3.1,llama3.1,cudnn,bfloat16,top_left,1,2048,2048,64,8,128,128,both,False,0.066,0.206,1042.000,836.000,"
    "0.000,10,True,,NVIDIA GB200,1.18.0,91801\n"
    "llama3.1,llama3.1,cudnn,bfloat16,top_left,1,8192,8192,64,8,128,128,both,True,0.704,3.000,1563.000,917.000,"
    "0.000,10,True,,NVIDIA GB200,1.18.0,91801\n"
    "llama3.1,llama3.1,cudnn,bfloat16,top_left,1,32768,32768,64,8,128,128,both,False,,,,,,10,False,"
    "\"out of memory, at 32768\",NVIDIA GB200,1.18.0,91801\n"
    "llama3.1,llama3.1,cudnn,bfloat16,bottom_right,1,16384,16384,64,8,128,128,both,False,2.606,7.845,1687.000,"
    "1402.000,0.000,10,True,,NVIDIA GB200,1.18.0,91801\n";

TEST_F(AttentionBenchmarkFile, ReadsTheResultsLayoutAndSkipsFailedRuns) {
  const auto benchmark = load("llama.csv", kResults);
  ASSERT_TRUE(benchmark.ok()) << benchmark.error().toString();
  EXPECT_EQ(benchmark->layout, "results");
  EXPECT_EQ(benchmark->failed_rows, 1);
  ASSERT_EQ(benchmark->rows.size(), 7u);
  EXPECT_EQ(benchmark->rows[0].backend, "cudnn");
  EXPECT_EQ(benchmark->rows[0].data_type, "bfloat16");
  EXPECT_EQ(benchmark->rows[0].mask, AttentionMask::kCausal);
  EXPECT_EQ(benchmark->rows[1].mask, AttentionMask::kNone);
  EXPECT_TRUE(benchmark->rows[5].deterministic_backward);
  EXPECT_EQ(benchmark->rows[6].line, 9);
  EXPECT_EQ(benchmark->rows[6].mask, AttentionMask::kCausal);  // bottom_right
  EXPECT_THAT(benchmark->gpu_names, ::testing::ElementsAre("NVIDIA GB200"));

  const auto fit = fitAttention(*benchmark);
  ASSERT_TRUE(fit.ok()) << fit.error().toString();
  EXPECT_TRUE(fit->causal);
  EXPECT_EQ(fit->rows, 2);
  EXPECT_EQ(fit->min_q_seqlen, 8192);
  EXPECT_EQ(fit->max_q_seqlen, 16384);
  EXPECT_DOUBLE_EQ(fit->forwardTflops(), (1563.0 * 0.704 + 1687.0 * 2.606) / (0.704 + 2.606));
  EXPECT_DOUBLE_EQ(fit->backwardTflops(), (1279.0 * 2.150 + 1402.0 * 7.845) / (2.150 + 7.845));
}

TEST_F(AttentionBenchmarkFile, FitIsTotalFlopsOverTotalTimeOnTheInclusiveSeqRange) {
  // By hand: forward (1500 x 1 + 1700 x 3) / (1 + 3) = 6600 / 4 = 1650 TFLOP/s; backward
  // (1000 x 2 + 1300 x 6) / (2 + 6) = 9800 / 8 = 1225 (a plain mean would give 1600 and 1150).
  // 4,096 and 16,384 are in the range, 4,095 and 16,385 are not.
  const std::string header =
      "batch_size,q_seqlen,kv_seqlen,num_q_heads,num_kv_heads,head_dim,is_causal,backend,forward_time,"
      "backward_time,fwd_tflops_per_sec,bwd_tflops_per_sec\n";
  const auto benchmark = load("two.csv", header +
                                             "1,4095,4095,8,8,128,True,cudnn_fe,1,1,100,100\n"
                                             "1,4096,4096,8,8,128,True,cudnn_fe,1,2,1500,1000\n"
                                             "1,16384,16384,8,8,128,True,cudnn_fe,3,6,1700,1300\n"
                                             "1,16385,16385,8,8,128,True,cudnn_fe,1,1,100,100\n");
  ASSERT_TRUE(benchmark.ok()) << benchmark.error().toString();
  const auto fit = fitAttention(*benchmark);
  ASSERT_TRUE(fit.ok()) << fit.error().toString();
  EXPECT_EQ(fit->rows, 2);
  EXPECT_EQ(fit->min_q_seqlen, 4096);
  EXPECT_EQ(fit->max_q_seqlen, 16384);
  EXPECT_DOUBLE_EQ(fit->forwardTflops(), 1650.0);
  EXPECT_DOUBLE_EQ(fit->backwardTflops(), 1225.0);

  // Calibration pools the files' rows; with only 2 distinct problems (8 pairs of 4,096 and of
  // 16,384) the GPU's default fixed cost stays and the full rate is the time-weighted mean of
  // each row's rate over its tile efficiency.
  const auto other = load("one.csv", header + "1,4096,4096,8,8,128,True,cudnn_fe,4,8,1000,1000\n");
  ASSERT_TRUE(other.ok()) << other.error().toString();
  const auto second = fitAttention(*other);
  ASSERT_TRUE(second.ok()) << second.error().toString();
  const perf::AttentionTileOverhead start{4.0, 6.0};
  const AttentionCalibration calibration = calibrateAttention({*fit, *second}, "gb200", 148, start);
  EXPECT_EQ(calibration.rate.gpu_key, "gb200");
  EXPECT_EQ(calibration.rate.precision, topology::Precision::kBf16);
  EXPECT_TRUE(calibration.rate.measured_at.empty());
  EXPECT_FALSE(calibration.forward_overhead_fitted);
  EXPECT_EQ(calibration.overhead, start);
  const auto full = [](double tflops, double seq, perf::AttentionPass pass, double overhead) {
    return tflops / perf::attentionTileEfficiency({8.0, seq, seq}, pass, 148, overhead);
  };
  const auto f = perf::AttentionPass::kForward;
  const auto b = perf::AttentionPass::kBackward;
  EXPECT_NEAR(calibration.rate.forward_tflops,
              (full(1500, 4096, f, 4) * 1 + full(1700, 16384, f, 4) * 3 + full(1000, 4096, f, 4) * 4) / 8, 1e-9);
  EXPECT_NEAR(calibration.rate.backward_tflops,
              (full(1000, 4096, b, 6) * 2 + full(1300, 16384, b, 6) * 6 + full(1000, 4096, b, 6) * 8) / 16, 1e-9);
}

// Rows the tile model itself generates (full rate 1,500 / 1,100 TFLOP/s, 3 / 5 iterations per
// CTA, 148 SMs, 16 and 64 pairs at 4,096 to 16,384) give those parameters back.
TEST_F(AttentionBenchmarkFile, CalibrationFitsTheFixedCostPerCtaWhereTheRowsVary) {
  std::string text =
      "batch_size,q_seqlen,kv_seqlen,num_q_heads,num_kv_heads,head_dim,is_causal,backend,forward_time,"
      "backward_time,fwd_tflops_per_sec,bwd_tflops_per_sec\n";
  for (const int heads : {16, 64}) {
    for (const double seq : {4096.0, 8192.0, 16384.0}) {
      const perf::AttentionShape shape{static_cast<double>(heads), seq, seq};
      const double forward = 1500.0 * perf::attentionTileEfficiency(shape, perf::AttentionPass::kForward, 148, 3.0);
      const double backward = 1100.0 * perf::attentionTileEfficiency(shape, perf::AttentionPass::kBackward, 148, 5.0);
      text += fmt::format("1,{},{},{},8,128,True,cudnn_fe,1,2,{:.9f},{:.9f}\n", seq, seq, heads, forward, backward);
    }
  }
  const auto benchmark = load("generated.csv", text);
  ASSERT_TRUE(benchmark.ok()) << benchmark.error().toString();
  const auto fit = fitAttention(*benchmark);
  ASSERT_TRUE(fit.ok()) << fit.error().toString();
  const AttentionCalibration calibration = calibrateAttention({*fit}, "gb200", 148, {4.0, 6.0});
  EXPECT_TRUE(calibration.forward_overhead_fitted);
  EXPECT_TRUE(calibration.backward_overhead_fitted);
  EXPECT_DOUBLE_EQ(calibration.overhead.forward, 3.0);
  EXPECT_DOUBLE_EQ(calibration.overhead.backward, 5.0);
  EXPECT_NEAR(calibration.rate.forward_tflops, 1500.0, 1e-6);
  EXPECT_NEAR(calibration.rate.backward_tflops, 1100.0, 1e-6);
  EXPECT_LT(calibration.forward_error, 1e-9);
}

TEST_F(AttentionBenchmarkFile, FallsBackToNonCausalRowsWithANote) {
  const auto benchmark = load("no_mask.csv",
                              "batch_size,q_seqlen,kv_seqlen,num_q_heads,num_kv_heads,head_dim,is_causal,backend,"
                              "forward_time,backward_time,fwd_tflops_per_sec,bwd_tflops_per_sec\n"
                              "1,8192,8192,128,8,128,False,cudnn_fe,2,6,2000,1500\n"
                              "1,8192,8192,128,8,128,True,pyt_flash_attention,5.308,16.249,414,338\n");
  ASSERT_TRUE(benchmark.ok()) << benchmark.error().toString();
  const auto fit = fitAttention(*benchmark);
  ASSERT_TRUE(fit.ok()) << fit.error().toString();
  EXPECT_FALSE(fit->causal);
  EXPECT_EQ(fit->rows, 1);
  EXPECT_DOUBLE_EQ(fit->forwardTflops(), 2000.0);
  ASSERT_EQ(fit->notes.size(), 1u);
  EXPECT_THAT(fit->notes[0], HasSubstr("non-causal"));
}

TEST_F(AttentionBenchmarkFile, NoQualifyingRowIsAnErrorNamingTheFile) {
  // Only FlashAttention, FP8 and short-sequence rows.
  const auto benchmark = load("flash.csv",
                              "batch_size,q_seqlen,kv_seqlen,num_q_heads,num_kv_heads,head_dim,is_causal,backend,"
                              "forward_time,backward_time,fwd_tflops_per_sec,bwd_tflops_per_sec\n"
                              "1,8192,8192,128,8,128,True,pyt_flash_attention,5.308,16.249,414,338\n"
                              "1,8192,8192,128,8,128,True,cudnn_fe_fp8,1.162,4.359,1893,1261\n"
                              "1,2048,2048,128,8,128,True,cudnn_fe,0.129,0.525,1069,655\n");
  ASSERT_TRUE(benchmark.ok()) << benchmark.error().toString();
  const auto fit = fitAttention(*benchmark);
  ASSERT_FALSE(fit.ok());
  EXPECT_EQ(fit.error().code, ExitCode::kInvalidInput);
  EXPECT_EQ(fit.error().where, benchmark->source);
  EXPECT_THAT(fit.error().toString(), HasSubstr("flash.csv: no row to fit the attention rates on"));
}

TEST(AttentionBenchmarkCsvTest, MalformedCellsAreErrorsAtTheirPositionNamingTheColumn) {
  const std::string header =
      "batch_size,q_seqlen,kv_seqlen,num_q_heads,num_kv_heads,head_dim,is_causal,backend,forward_time,"
      "backward_time,fwd_tflops_per_sec,bwd_tflops_per_sec\n";
  struct Case {
    std::string row, expected;
  };
  const std::vector<Case> cases = {
      {"1,8192,8192,128,8,128,True,cudnn_fe,1.389,4.542,fast,1211\n",
       "bad.csv:3:49: fwd_tflops_per_sec: expected a number, found \"fast\""},
      {"1,8192,8192,128,8,128,True,cudnn_fe,-1.389,4.542,1584,1211\n",
       "bad.csv:3:37: forward_time: expected a number >= 0, found \"-1.389\""},
      {"1,8k,8192,128,8,128,True,cudnn_fe,1.389,4.542,1584,1211\n",
       "bad.csv:3:3: q_seqlen: expected a positive whole number, found \"8k\""},
      {"1,8192,8192,128,8,128,yes,cudnn_fe,1.389,4.542,1584,1211\n",
       "bad.csv:3:23: is_causal: expected True or False, found \"yes\""},
      {"1,8192,8192,128,8,128,True,cudnn_fe,1.389,4.542,1584\n", "bad.csv:3:1: 11 cells, the header has 12"},
      {"1,8192,8192,128,8,128,True,\"cudnn_fe,1.389\n", "bad.csv:3:28: a quoted cell is never closed"},
      // Out of physical range, as YAML values are refused (issue 40).
      {"1,8192,8192,128,8,128,True,cudnn_fe,1e300,4.542,1584,1211\n",
       "bad.csv:3:37: forward_time: expected a number between 0 and 3600000, found \"1e300\""},
      {"1,8192,8192,128,8,128,True,cudnn_fe,1.389,4.542,2e6,1211\n",
       "bad.csv:3:49: fwd_tflops_per_sec: expected a number between 0 and 1000000, found \"2e6\""},
      {"1,99999999999999999999,8192,128,8,128,True,cudnn_fe,1.389,4.542,1584,1211\n",
       "bad.csv:3:3: q_seqlen: expected a whole number between 1 and 16777216, found \"99999999999999999999\""},
      {"4611686018427387904,8192,8192,4,8,128,True,cudnn_fe,1.389,4.542,1584,1211\n",
       "bad.csv:3:1: batch_size: expected a whole number between 1 and 16777216, found \"4611686018427387904\""},
      // A name that is not UTF-8 (it would fail the JSON writers later).
      {"1,8192,8192,128,8,128,True,cudnn\xFF,1.389,4.542,1584,1211\n",
       "bad.csv:3:28: backend: expected a name in UTF-8, found not UTF-8 text (byte 0xFF)"},
  };
  for (const auto& c : cases) {
    const std::string text = header + "1,8192,8192,128,8,128,True,cudnn_fe,1.389,4.542,1584,1211\n" + c.row;
    const auto benchmark = parseAttentionBenchmarkCsv(text, "bad.csv");
    ASSERT_FALSE(benchmark.ok()) << c.row;
    EXPECT_EQ(benchmark.error().code, ExitCode::kInvalidInput);
    EXPECT_EQ(benchmark.error().toString(), c.expected);
  }
  const auto other = parseAttentionBenchmarkCsv("m,n,k,time_us\n1,2,3,4\n", "gemm.csv");
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(other.error().toString(), HasSubstr("gemm.csv:1:1: not a cudnn-frontend sdpa benchmark CSV"));
  const auto missing = parseAttentionBenchmarkCsv("backend,forward_time\ncudnn_fe,1\n", "short.csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().toString(),
            "short.csv:1:1: the header has no column \"q_seqlen\" (cudnn-frontend sdpa benchmark, artifacts layout)");
  EXPECT_FALSE(parseAttentionBenchmarkCsv("", "empty.csv").ok());
  const auto directory = loadAttentionBenchmarkCsv(TRAINSIM_CONFIG_DIR_FOR_TESTS);
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error().code, ExitCode::kInvalidInput);
  EXPECT_FALSE(loadAttentionBenchmarkCsv("/nonexistent/trainsim/sdpa.csv").ok());
}

}  // namespace
}  // namespace trainsim::calibrate
