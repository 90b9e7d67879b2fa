#include "validation/training_metric.h"

#include <gtest/gtest.h>

namespace trainsim::validation {
namespace {

// A row's error as one of the step time: the time metrics as they are, the throughputs
// inverted (10% more tokens/s predicted = a step 1/1.1 as long).
TEST(TrainingMetricTest, StepTimeErrorIsTheTimeMetricsOwnAndTheThroughputsInverse) {
  EXPECT_TRUE(isTimeMetric(TrainingMetric::kIterationTime));
  EXPECT_TRUE(isTimeMetric(TrainingMetric::kLayerTime));
  EXPECT_FALSE(isTimeMetric(TrainingMetric::kTokensPerSecondPerGpu));
  EXPECT_FALSE(isTimeMetric(TrainingMetric::kModelTflopsPerGpu));
  EXPECT_FALSE(isTimeMetric(TrainingMetric::kHardwareTflopsPerGpu));
  EXPECT_DOUBLE_EQ(stepTimeError(TrainingMetric::kIterationTime, 0.2), 0.2);
  EXPECT_DOUBLE_EQ(stepTimeError(TrainingMetric::kLayerTime, -0.1), -0.1);
  EXPECT_NEAR(stepTimeError(TrainingMetric::kTokensPerSecondPerGpu, 0.25), -0.2, 1e-12);
  EXPECT_NEAR(stepTimeError(TrainingMetric::kModelTflopsPerGpu, -0.2), 0.25, 1e-12);
}

}  // namespace
}  // namespace trainsim::validation
