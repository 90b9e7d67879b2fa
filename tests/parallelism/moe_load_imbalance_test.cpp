// Imbalanced routing (training.moe_load_imbalance) and its cap by token dropping
// (training.moe_capacity_factor): the busiest expert-parallel rank's expert GEMMs and
// all-to-alls, and the reading of the two keys.
#include <gtest/gtest.h>

#include <string>

#include "parallelism/experiment_loader.h"
#include "parallelism/transformer_workload.h"
#include "tests/parallelism/model_builders.h"
#include "tests/parallelism/test_support.h"

namespace trainsim::parallelism {
namespace {

using testing::errorText;
using testing::mixtralModel;
using testing::shard;
using testing::testPaths;

double allToAllBytes(const Workload& layer) {
  for (const auto& comm : layer.communications) {
    if (comm.op == perf::CollectiveOp::kAllToAll) return comm.bytes;
  }
  return 0.0;
}

TEST(MoeLoadImbalance, TheBusiestRankComputesAndReceivesItsShare) {
  MicroBatchShard balanced = shard(1, 4096, 1, false, 1, 4);
  MicroBatchShard busiest = balanced;
  busiest.moe_token_factor = 1.25;
  const Workload a = transformerLayer(mixtralModel(), balanced);
  const Workload b = transformerLayer(mixtralModel(), busiest);
  // 4096 tokens x top-2 over 2 local experts: 4096 slots each, 5120 on the busiest rank.
  EXPECT_EQ(a.find("moe_expert_fc2")->forward_gemms.front().m, 4096);
  EXPECT_EQ(b.find("moe_expert_fc2")->forward_gemms.front().m, 5120);
  EXPECT_DOUBLE_EQ(allToAllBytes(b), 1.25 * allToAllBytes(a));
  // The router and the attention do not change.
  EXPECT_DOUBLE_EQ(b.find("moe_router")->forward.flops, a.find("moe_router")->forward.flops);
}

TEST(MoeLoadImbalance, CapacityFactorCapsTheLoad) {
  TrainingSpec training;
  training.moe_load_imbalance = 1.6;
  EXPECT_DOUBLE_EQ(training.moeTokenFactor(), 1.6);
  training.moe_capacity_factor = 1.25;
  EXPECT_DOUBLE_EQ(training.moeTokenFactor(), 1.25);
  training.moe_load_imbalance = 1.1;
  EXPECT_DOUBLE_EQ(training.moeTokenFactor(), 1.1);
}

TEST(MoeLoadImbalance, KeysAreCheckedWhereTheyAreRead) {
  const std::string text =
      "model: mixtral-8x7b\ncluster: dgx-a100\nparallelism:\n  ep: 8\n"
      "training: {seq_len: 4096, global_batch_size: 64, moe_load_imbalance: 0.8}\n";
  EXPECT_EQ(errorText(loadExperimentNode(parseConfigText(text, "plan.yaml"), testPaths())),
            "plan.yaml:5:70: training.moe_load_imbalance: expected a number between 1 and 1024, found \"0.8\"");
}

}  // namespace
}  // namespace trainsim::parallelism
