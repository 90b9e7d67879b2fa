// Fitting the default training-rate fraction per GPU type to suite rows: synthetic rows whose
// step time is known at every fraction (a compute share c: time ~ c / f + (1 - c)), so that
// the balance, the source weighting, leaving a source out and the grid's ends can be checked
// against closed forms.
#include <gtest/gtest.h>

#include <cmath>

#include "validation/training_rate_fit.h"

namespace trainsim::validation {
namespace {

const std::vector<double> kGrid = defaultRateFitGrid();

// A row that ran at `truth` of the kernels' rates, published as a time or a throughput:
// log(predicted / published step) at each grid fraction for a step whose compute share is
// `compute_share` of its kernel-rate time.
RateFitRow row(const std::string& id, const std::string& source, const std::string& gpu, double truth,
               double compute_share = 1.0, bool time_metric = true, const std::string& stack = "") {
  RateFitRow r{id, source, gpu, stack, time_metric, {}};
  auto step = [&](double f) { return compute_share / f + (1.0 - compute_share); };
  for (double f : kGrid) r.log_time_ratio.push_back(std::log(step(f) / step(truth)));
  return r;
}

const GpuRateFit& gpu(const RateFitResult& result, const std::string& key, const std::string& stack = "") {
  for (const auto& g : result.gpus) {
    if (g.gpu_key == key && g.stack == stack) return g;
  }
  throw std::runtime_error("no fit for " + key + " " + stack);
}

TEST(TrainingRateFitTest, GridRunsFromSixtyToOneHundredFivePercentThroughOne) {
  ASSERT_EQ(kGrid.size(), 10U);
  EXPECT_DOUBLE_EQ(kGrid.front(), 0.60);
  EXPECT_DOUBLE_EQ(kGrid.back(), 1.05);
  EXPECT_NE(std::find(kGrid.begin(), kGrid.end(), 1.0), kGrid.end());
}

TEST(TrainingRateFitTest, OneSourceOfComputeBoundRowsRecoversItsFraction) {
  // Compute-bound rows: log ratio = log(truth / f), linear in log f, so interpolation is exact.
  const auto result = valueOrThrow(
      fitRateFractions(kGrid, {row("a-001", "a", "h100-sxm", 0.87), row("a-002", "a", "h100-sxm", 0.87, 1.0, false)}));
  const auto& fit = gpu(result, "h100-sxm");
  EXPECT_NEAR(fit.fraction, 0.87, 1e-9);
  EXPECT_FALSE(fit.at_grid_edge);
  ASSERT_EQ(fit.sources.size(), 1U);
  // At the kernels' rates both rows predict the step 13% short: a time 0.87 of the published,
  // a throughput 1 / 0.87 of it.
  EXPECT_NEAR(rateFitRowError(row("a-001", "a", "h100-sxm", 0.87), kGrid, 1.0), -0.13, 1e-9);
  EXPECT_NEAR(rateFitRowError(row("a-002", "a", "h100-sxm", 0.87, 1.0, false), kGrid, 1.0), 1.0 / 0.87 - 1.0, 1e-9);
  EXPECT_NEAR(fit.sources[0].mape_kernel_rates, (0.13 + (1.0 / 0.87 - 1.0)) / 2.0, 1e-9);
  EXPECT_NEAR(fit.sources[0].mape_fitted, 0.0, 1e-9);
  EXPECT_FALSE(fit.sources[0].held_out_fraction.has_value());
  EXPECT_NEAR(result.mape_held_out, result.mape_fitted, 1e-12);
}

TEST(TrainingRateFitTest, EachSourceWeighsTheSameWhateverItsRowCount) {
  // Source "big" has four rows at 0.80, source "small" one at 0.90: weighting rows alike would
  // pull the fit to 0.82; each source weighing the same puts it at the geometric mean.
  std::vector<RateFitRow> rows;
  for (int i = 0; i < 4; ++i) rows.push_back(row("big-00" + std::to_string(i), "big", "b200", 0.80));
  rows.push_back(row("small-001", "small", "b200", 0.90));
  const auto result = valueOrThrow(fitRateFractions(kGrid, rows));
  EXPECT_NEAR(gpu(result, "b200").fraction, std::sqrt(0.80 * 0.90), 1e-9);
}

TEST(TrainingRateFitTest, LeavingASourceOutFitsTheOthersAndScoresItThere) {
  const auto result = valueOrThrow(
      fitRateFractions(kGrid, {row("a-001", "a", "h100-sxm", 0.85), row("b-001", "b", "h100-sxm", 0.95),
                               row("c-001", "c", "h100-sxm", 0.90), row("x-001", "x", "a100-sxm-80gb", 0.97)}));
  const auto& h100 = gpu(result, "h100-sxm");
  ASSERT_EQ(h100.sources.size(), 3U);
  // Source a held out: fitted on b and c, sqrt(0.95 * 0.90); a's error there is its time
  // ratio 0.85 / f - 1 (compute-bound).
  const double f_a = std::sqrt(0.95 * 0.90);
  ASSERT_TRUE(h100.sources[0].held_out_fraction.has_value());
  EXPECT_NEAR(*h100.sources[0].held_out_fraction, f_a, 1e-9);
  EXPECT_NEAR(h100.sources[0].mape_held_out, std::fabs(0.85 / f_a - 1.0), 1e-9);
  // The held-out error is worse than the in-sample one for every source here.
  for (const auto& source : h100.sources) EXPECT_GT(source.mape_held_out, source.mape_fitted);
  // A100 has one source: fitted in sample only, and its own GPU's fit is separate.
  const auto& a100 = gpu(result, "a100-sxm-80gb");
  EXPECT_NEAR(a100.fraction, 0.97, 1e-9);
  EXPECT_FALSE(a100.sources[0].held_out_fraction.has_value());
  EXPECT_EQ(result.rows, 4);
  EXPECT_GT(result.mape_held_out, result.mape_fitted);
}

TEST(TrainingRateFitTest, AStacksRowsAreFittedApartAndHeldOutAtTheGpusDefault) {
  // Two default-stack sources at 0.90 and 0.80 on H100, one torchtitan source at 0.70 (its
  // rows a throughput), one pytorch-fsdp source on a GPU without default rows.
  const auto result = valueOrThrow(fitRateFractions(
      kGrid, {row("t-001", "t", "h100-sxm", 0.70, 1.0, false, "torchtitan"),
              row("t-002", "t", "h100-sxm", 0.70, 1.0, false, "torchtitan"), row("a-001", "a", "h100-sxm", 0.90),
              row("b-001", "b", "h100-sxm", 0.80), row("f-001", "f", "gb200", 0.75, 1.0, true, "pytorch-fsdp")}));
  // The default comes first, and is fitted on the rows without a stack only.
  ASSERT_EQ(result.gpus.size(), 3U);
  EXPECT_TRUE(result.gpus[0].stack.empty());
  const double default_fraction = std::sqrt(0.90 * 0.80);
  EXPECT_NEAR(gpu(result, "h100-sxm").fraction, default_fraction, 1e-9);
  // The stack's own fraction, in sample.
  const auto& titan = gpu(result, "h100-sxm", "torchtitan");
  EXPECT_NEAR(titan.fraction, 0.70, 1e-9);
  ASSERT_EQ(titan.sources.size(), 1U);
  EXPECT_NEAR(titan.sources[0].mape_fitted, 0.0, 1e-9);
  // Held out, it is predicted at the GPU's default: the kernels taken faster than they ran,
  // so the throughput comes out high by default / 0.70 - 1 on every row (bias = MAPE).
  ASSERT_TRUE(titan.sources[0].held_out_fraction.has_value());
  EXPECT_TRUE(titan.sources[0].held_out_at_default);
  EXPECT_NEAR(*titan.sources[0].held_out_fraction, default_fraction, 1e-9);
  EXPECT_NEAR(titan.sources[0].mape_held_out, default_fraction / 0.70 - 1.0, 1e-9);
  EXPECT_NEAR(titan.sources[0].bias_held_out, default_fraction / 0.70 - 1.0, 1e-9);
  // A stack on a GPU with no default rows has nothing to fall back on...
  const auto& fsdp = gpu(result, "gb200", "pytorch-fsdp");
  EXPECT_FALSE(fsdp.sources[0].held_out_fraction.has_value());
  // ... unless the GPU's shipped default is given (a part that takes a sibling's fraction).
  const auto with_shipped = valueOrThrow(
      fitRateFractions(kGrid, {row("f-001", "f", "gb200", 0.75, 1.0, true, "pytorch-fsdp")}, {{"gb200", 0.825}}));
  const auto& fallback = gpu(with_shipped, "gb200", "pytorch-fsdp").sources[0];
  ASSERT_TRUE(fallback.held_out_fraction.has_value());
  EXPECT_TRUE(fallback.held_out_at_default);
  EXPECT_NEAR(*fallback.held_out_fraction, 0.825, 1e-12);
  EXPECT_NEAR(fallback.bias_held_out, 0.75 / 0.825 - 1.0, 1e-9);
  // Signed errors: at the default (below 0.90, above 0.80) source a's steps are predicted
  // long (time ratio 0.90 / f - 1 > 0), b's short.
  const auto& h100 = gpu(result, "h100-sxm");
  EXPECT_NEAR(h100.sources[0].bias_fitted, 0.90 / default_fraction - 1.0, 1e-9);
  EXPECT_NEAR(h100.sources[1].bias_fitted, 0.80 / default_fraction - 1.0, 1e-9);
}

TEST(TrainingRateFitTest, AStackCarriesItsFractionOverTheGpusDefaultToGpusItWasNotFittedOn) {
  // Defaults: H100 0.90, A100 0.96. torchtitan: source t on H100 at 0.72 (0.8 of the default),
  // sources u and v on A100 at 0.864 and 0.768 (geometric mean 0.8146 = 0.8485 of the default).
  const std::vector<RateFitRow> rows = {row("d-001", "d", "h100-sxm", 0.90), row("e-001", "e", "a100-sxm-80gb", 0.96),
                                        row("t-001", "t", "h100-sxm", 0.72, 1.0, false, "torchtitan"),
                                        row("u-001", "u", "a100-sxm-80gb", 0.864, 1.0, false, "torchtitan"),
                                        row("v-001", "v", "a100-sxm-80gb", 0.768, 1.0, false, "torchtitan")};
  const auto result = valueOrThrow(fitRateFractions(kGrid, rows));
  // The shipped factor: the GPU types' ratios, weighted by their sources (1 on H100, 2 on A100).
  const double h100_ratio = 0.72 / 0.90;
  const double a100_ratio = std::sqrt(0.864 * 0.768) / 0.96;
  ASSERT_EQ(result.stacks.size(), 1U);
  EXPECT_EQ(result.stacks[0].stack, "torchtitan");
  EXPECT_EQ(result.stacks[0].gpus, 2);
  EXPECT_NEAR(result.stacks[0].factor, std::exp((std::log(h100_ratio) + 2.0 * std::log(a100_ratio)) / 3.0), 1e-9);
  // t held out: its stack's only source on H100, so the H100 default times the factor fitted
  // on u and v (A100 only): the held-out fraction moves from 0.90 towards t's 0.72.
  const auto& titan_h100 = gpu(result, "h100-sxm", "torchtitan").sources[0];
  ASSERT_TRUE(titan_h100.held_out_stack_factor.has_value());
  EXPECT_NEAR(*titan_h100.held_out_stack_factor, a100_ratio, 1e-9);
  EXPECT_NEAR(*titan_h100.held_out_fraction, 0.90 * a100_ratio, 1e-9);
  EXPECT_NEAR(titan_h100.bias_held_out, 0.90 * a100_ratio / 0.72 - 1.0, 1e-9);
  // u held out: v is left on A100, so it is fitted there, not at the default and factor.
  const auto& titan_a100 = gpu(result, "a100-sxm-80gb", "torchtitan");
  EXPECT_FALSE(titan_a100.sources[0].held_out_at_default);
  EXPECT_FALSE(titan_a100.sources[0].held_out_stack_factor.has_value());
  EXPECT_NEAR(*titan_a100.sources[0].held_out_fraction, 0.768, 1e-9);
  // A stack with one GPU type: held out at the default alone (no other GPU type for a factor).
  const auto single = valueOrThrow(fitRateFractions(kGrid, {rows[0], rows[2]}));
  const auto& alone = gpu(single, "h100-sxm", "torchtitan").sources[0];
  EXPECT_FALSE(alone.held_out_stack_factor.has_value());
  EXPECT_NEAR(*alone.held_out_fraction, 0.90, 1e-9);
  ASSERT_EQ(single.stacks.size(), 1U);
  EXPECT_NEAR(single.stacks[0].factor, h100_ratio, 1e-9);
}

TEST(TrainingRateFitTest, CommunicationBoundRowsNeedAFractionFurtherOut) {
  // Half the step is communication: the kernels must slow more for the same step, and the
  // fit, exact on the grid points, stays within interpolation error between them.
  const auto result = valueOrThrow(fitRateFractions(kGrid, {row("a-001", "a", "gb200", 0.825, 0.5)}));
  EXPECT_NEAR(gpu(result, "gb200").fraction, 0.825, 2e-3);
  EXPECT_NEAR(gpu(result, "gb200").sources[0].mape_fitted, 0.0, 1e-3);
}

TEST(TrainingRateFitTest, ABalanceBeyondTheGridStopsAtItsEnd) {
  const auto result =
      valueOrThrow(fitRateFractions(kGrid, {row("a-001", "a", "h100-sxm", 0.40), row("b-001", "b", "b200", 1.30)}));
  EXPECT_DOUBLE_EQ(gpu(result, "h100-sxm").fraction, 0.60);
  EXPECT_TRUE(gpu(result, "h100-sxm").at_grid_edge);
  EXPECT_DOUBLE_EQ(gpu(result, "b200").fraction, 1.05);
  EXPECT_TRUE(gpu(result, "b200").at_grid_edge);
}

TEST(TrainingRateFitTest, RejectsABadGridOrRowsThatDoNotMatchIt) {
  EXPECT_FALSE(fitRateFractions({0.9}, {row("a-001", "a", "h100-sxm", 0.9)}).ok());
  EXPECT_FALSE(fitRateFractions({0.6, 0.9}, {row("a-001", "a", "h100-sxm", 0.9)}).ok());  // does not span 1
  EXPECT_FALSE(fitRateFractions({1.0, 0.9, 1.1}, {}).ok());
  EXPECT_FALSE(fitRateFractions(kGrid, {}).ok());
  RateFitRow short_row = row("a-001", "a", "h100-sxm", 0.9);
  short_row.log_time_ratio.pop_back();
  const auto result = fitRateFractions(kGrid, {short_row});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().toString().find("a-001"), std::string::npos);
}

}  // namespace
}  // namespace trainsim::validation
