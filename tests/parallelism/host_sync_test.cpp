// Host dispatch with a dropless MoE layer's host synchronisation (pass_work.h,
// forwardHostWaitSeconds; Op::host_sync_share) and the eager routing path's extra kernels.
#include <gtest/gtest.h>

#include <string>

#include "parallelism/pass_work.h"
#include "tests/parallelism/model_builders.h"

namespace trainsim::parallelism {
namespace {

using testing::mixtralModel;
using testing::shard;

// Each op takes its `gpu_ms` table entry, by position.
class TableTimer : public OpTimer {
 public:
  explicit TableTimer(std::vector<double> gpu_ms) : gpu_ms_(std::move(gpu_ms)) {}
  [[nodiscard]] double seconds(const Op& op, PassKind pass) const override {
    if (pass == PassKind::kBackward) return 0.0;
    return 1e-3 * gpu_ms_.at(static_cast<std::size_t>(std::stoi(op.name)));
  }
  [[nodiscard]] double memoryBoundSeconds(double) const override { return 0.0; }

 private:
  std::vector<double> gpu_ms_;
};

Op op(int index, double extra_kernels = 0.0, double sync_share = 0.0) {
  Op result;
  result.name = std::to_string(index);
  result.extra_kernels_forward = extra_kernels;
  result.host_sync_share = sync_share;
  return result;
}

const OneCallSeconds kNoCollectives = [](const Communication&) { return 0.0; };

TEST(HostSync, KernelsOfAnOpCountItsExtraKernels) {
  Op router = op(0, 18.5);
  router.extra_kernels_backward = 11.0;
  EXPECT_DOUBLE_EQ(kernelsOf(router, PassKind::kForward), 19.5);
  EXPECT_DOUBLE_EQ(kernelsOf(router, PassKind::kBackward), 12.0);
}

// Two ops before the sync (2 + 1 kernels, 5 ms of GPU) and two after (10 + 1 kernels, 1 ms),
// 1 ms per kernel on the host: before the sync the GPU is the longer (5 ms against 3), after
// it the host (11 ms against 1), so the GPU waits 10 ms per layer, 3 layers: 30 ms. Without
// the sync the host's 14 ms per layer would just run ahead of the GPU's 6 ms (the builder's
// longer of the two sums): no wait.
TEST(HostSync, TheGpuWaitsForWhatTheHostLaunchesAfterTheSync) {
  ChunkPart part;
  part.repeats = 3.0;
  part.workload.ops = {op(0, 1.0), op(1), op(2, 9.0, 1.0), op(3)};
  const TableTimer timer({2.0, 3.0, 0.5, 0.5});
  const ParallelPlan plan;
  EXPECT_NEAR(forwardHostWaitSeconds(part, plan, timer, kNoCollectives, HostCosts{.per_kernel_s = 1e-3}).wait_s, 0.030,
              1e-12);
  // Half the layers syncing: half the wait.
  part.workload.ops[2].host_sync_share = 0.5;
  EXPECT_NEAR(forwardHostWaitSeconds(part, plan, timer, kNoCollectives, HostCosts{.per_kernel_s = 1e-3}).wait_s, 0.015,
              1e-12);
  // No sync, or no host modelled: nothing.
  part.workload.ops[2].host_sync_share = 0.0;
  EXPECT_EQ(forwardHostWaitSeconds(part, plan, timer, kNoCollectives, HostCosts{.per_kernel_s = 1e-3}).wait_s, 0.0);
  part.workload.ops[2].host_sync_share = 1.0;
  EXPECT_EQ(forwardHostWaitSeconds(part, plan, timer, kNoCollectives, HostCosts{}).wait_s, 0.0);
}

// A collective runs in the segment it is issued in. The expert all-to-all issued at the sync
// keeps the GPU busy while the host launches: a 9 ms exchange (and its one launch) leaves
// the GPU waiting 2 ms (12 - 1 - 9) instead of 10, and covers 9 ms of the launches, which
// the builder (collectives after the launches) then takes off them. Under moe_a2a_overlap it
// hides behind the other micro-batch and keeps only its launch. A tensor-parallel all-reduce
// issued before the sync adds to the first segment, which the GPU still binds.
TEST(HostSync, ACollectiveRunsInTheSegmentItIsIssuedIn) {
  ChunkPart part;
  part.workload.ops = {op(0, 1.0), op(1), op(2, 9.0, 1.0), op(3)};
  Communication dispatch;
  dispatch.name = "moe_dispatch_all_to_all";
  dispatch.op = perf::CollectiveOp::kAllToAll;
  dispatch.group = ParallelGroup::kExpert;
  dispatch.issued_before_op = 2;
  Communication reduce;
  reduce.name = "attention_output_all_reduce";
  reduce.group = ParallelGroup::kTensor;
  reduce.issued_before_op = 1;
  part.workload.communications = {dispatch, reduce};
  const TableTimer timer({2.0, 3.0, 0.5, 0.5});
  ParallelPlan plan;
  plan.ep = 8;
  plan.tp = 2;
  const OneCallSeconds nine_ms = [](const Communication&) { return 9e-3; };
  HostWait wait = forwardHostWaitSeconds(part, plan, timer, nine_ms, HostCosts{.per_kernel_s = 1e-3});
  EXPECT_NEAR(wait.wait_s, 0.002, 1e-12);
  EXPECT_NEAR(wait.covered_s, 0.009, 1e-12);
  // Issued after the sync, the all-reduce's 9 ms would cover the launches there instead.
  part.workload.communications[1].issued_before_op = 3;
  wait = forwardHostWaitSeconds(part, plan, timer, nine_ms, HostCosts{.per_kernel_s = 1e-3});
  EXPECT_NEAR(wait.wait_s, 0.0, 1e-12);
  EXPECT_NEAR(wait.covered_s, 0.012, 1e-12);
  part.workload.communications[1].issued_before_op = 1;
  plan.moe_a2a_overlap = true;
  wait = forwardHostWaitSeconds(part, plan, timer, nine_ms, HostCosts{.per_kernel_s = 1e-3});
  EXPECT_NEAR(wait.wait_s, 0.011, 1e-12);
  EXPECT_NEAR(wait.covered_s, 0.0, 1e-12);
  // With ep 1 the workload's exchange moves nothing and is skipped, launch included.
  plan.ep = 1;
  EXPECT_NEAR(forwardHostWaitSeconds(part, plan, timer, nine_ms, HostCosts{.per_kernel_s = 1e-3}).wait_s, 0.010, 1e-12);
}

// The MoE block syncs before its first expert op (the fp8 quantization of the experts' input
// where there is one) and gives its routing op the eager path's extra kernels.
TEST(HostSync, TheMoeBlockSyncsBeforeItsExpertsAndCountsItsRoutingKernels) {
  FlopsOptions options;
  options.moe_routing_extra_kernels_forward = 20.0;
  options.moe_routing_extra_kernels_backward = 10.0;
  options.moe_dispatch_host_sync_share = 1.0;
  for (const auto precision : {topology::Precision::kBf16, topology::Precision::kFp8}) {
    const Workload layer = transformerLayer(mixtralModel(), shard(1, 4096, 1, false, 1, 8, precision), options);
    std::vector<std::string> syncing;
    for (const Op& each : layer.ops) {
      if (each.host_sync_share > 0.0) syncing.push_back(each.name);
    }
    ASSERT_EQ(syncing.size(), 1u);
    EXPECT_EQ(syncing.front(),
              precision == topology::Precision::kFp8 ? "moe_expert_gate_up_fp8_quantize" : "moe_expert_gate_up");
    const Op* topk = layer.find("moe_router_topk");
    ASSERT_NE(topk, nullptr);
    EXPECT_DOUBLE_EQ(kernelsOf(*topk, PassKind::kForward), 21.0);
    EXPECT_DOUBLE_EQ(kernelsOf(*topk, PassKind::kBackward), 11.0);
  }
  options.moe_dispatch_host_sync_share = 0.0;
  const Workload sync_free = transformerLayer(mixtralModel(), shard(1, 4096, 1, false, 1, 8), options);
  for (const Op& each : sync_free.ops) EXPECT_EQ(each.host_sync_share, 0.0) << each.name;
}

}  // namespace
}  // namespace trainsim::parallelism
