#include "parallelism/iteration_features.h"

namespace trainsim::parallelism {

IterationFeatures iterationFeatures(const ParallelPlan& plan, const TrainingSpec& training) {
  IterationFeatures features;
  // Gradients are reduced over the data- and context-parallel ranks (RankLayout::dataGroup),
  // expert ones over the expert data-parallel ranks where the experts have groups of their own.
  features.expert_data_parallel = plan.separateExpertGroups() && plan.expertDataParallel() > 1;
  features.data_parallel = plan.dp * plan.cp > 1 || features.expert_data_parallel;
  // Sharded blocks overlap their own collectives block by block (sharded_data_parallel.h).
  features.sharded_blocks = features.data_parallel && plan.zero >= 3 && training.zero3.unit == ShardingUnit::kBlock;
  features.bucketed = features.data_parallel && !features.sharded_blocks;
  features.overlap_grads = plan.overlap_grad_reduce && features.bucketed;
  // ZeRO-3 in buckets (sharded parameters, pp = 1): every pass gathers the chunk's
  // parameters and every backward reduce-scatters its gradients (DeepSpeed stage 3).
  features.zero3 = features.bucketed && plan.zero >= 3;
  // ZeRO's parameter all-gathers overlap a chunk's first forward, which waits for each
  // bucket as it reaches the bucket's layers (addParameterGathers).
  features.gathered_forward = features.bucketed && plan.zero >= 1 && (plan.overlap_param_gather || features.zero3);
  // The overlapped tensor-parallel collectives and the ring attention's exchanges start with
  // the pass instead of after it, and ZeRO-3's prefetch of the next pass's parameters is
  // issued there.
  const bool overlap_tp = plan.tp_comm_overlap && plan.tp > 1;
  const bool ring_attention = plan.cp > 1;
  features.pass_start_marker = overlap_tp || features.zero3 || ring_attention || plan.moe_a2a_overlap;
  return features;
}

}  // namespace trainsim::parallelism
