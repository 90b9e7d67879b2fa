// What context parallelism's ring exchanges leave exposed beside the attention steps
// (parallelism/ring_attention_exposure.h), and which exchanges a layer runs beside them.
#include "parallelism/ring_attention_exposure.h"

#include <gtest/gtest.h>

#include "tests/parallelism/model_builders.h"

namespace trainsim::parallelism {
namespace {

using testing::llama3_8bModel;
using testing::shard;

// Core attention takes 8 ms forward and 20 ms backward per layer; every other op 1 ms.
class FixedAttentionTimer : public OpTimer {
 public:
  [[nodiscard]] double seconds(const Op& op, PassKind pass) const override {
    if (!op.core_attention) return 1e-3;
    return pass == PassKind::kForward ? 8e-3 : 20e-3;
  }
  [[nodiscard]] double memoryBoundSeconds(double) const override { return 0.0; }
};

// Llama 3 8B, sequence 8192 over cp 4: 2,048 tokens per rank.
Workload ringLayer() { return transformerLayer(llama3_8bModel(), shard(1, 8192, 1, false, 4)); }

TEST(RingAttentionExposure, ExchangesShorterThanAStepHide) {
  // Each exchange 1 ms against steps of 8 / 4 = 2 ms forward and 20 / 4 = 5 ms backward
  // (K, V and dK, dV: 2 ms).
  const OverlapExposure exposure =
      ringAttentionExposure(ringLayer(), FixedAttentionTimer{}, 4, [](const Communication&) { return 1e-3; });
  EXPECT_DOUBLE_EQ(exposure.forward_s, 0.0);
  EXPECT_DOUBLE_EQ(exposure.backward_s, 0.0);
}

TEST(RingAttentionExposure, EachOfTheCpMinusOneExchangesShowsWhatOutlastsItsStep) {
  // Each exchange 3 ms: forward 3 x (3 - 2) = 3 ms; backward K, V and dK, dV together 6 ms
  // against 5: 3 x 1 = 3 ms. The dK, dV return hop after the last step is not beside a step.
  const OverlapExposure exposure =
      ringAttentionExposure(ringLayer(), FixedAttentionTimer{}, 4, [](const Communication&) { return 3e-3; });
  EXPECT_NEAR(exposure.forward_s, 3e-3, 1e-15);
  EXPECT_NEAR(exposure.backward_s, 3e-3, 1e-15);
}

TEST(RingAttentionExposure, NothingWithoutContextParallelism) {
  const Workload layer = transformerLayer(llama3_8bModel(), shard(1, 8192));
  const OverlapExposure exposure =
      ringAttentionExposure(layer, FixedAttentionTimer{}, 1, [](const Communication&) { return 1.0; });
  EXPECT_DOUBLE_EQ(exposure.forward_s, 0.0);
  EXPECT_DOUBLE_EQ(exposure.backward_s, 0.0);
}

}  // namespace
}  // namespace trainsim::parallelism
