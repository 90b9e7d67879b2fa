// Which data-parallel and overlap mechanisms an iteration of a plan runs: read by the
// iteration builder to decide which tasks to add, and by the simulator's memory estimate
// (iteration_memory.h) to count them, so that the two cannot disagree.
#pragma once

#include "parallelism/parallel_plan.h"
#include "parallelism/training_spec.h"

namespace trainsim::parallelism {

struct IterationFeatures {
  // Expert gradients have a data-parallel group of their own with more than one rank.
  bool expert_data_parallel = false;
  bool data_parallel = false;  // gradients reduced over dp x cp > 1 ranks (RankLayout::dataGroup), or expert ones
  // ZeRO-3 in transformer blocks (training.zero3.unit: block): the block collectives
  // replace the bucketed reductions and gathers (addShardedBlockCollectives).
  bool sharded_blocks = false;
  bool bucketed = false;       // data parallelism in gradient buckets (every other case)
  bool overlap_grads = false;  // gradient buckets reduced under the last backward of their chunk
  bool zero3 = false;          // ZeRO-3 in buckets: parameters gathered before, gradients reduced after every pass
  // A chunk's first forward waits for each parameter bucket's gather as it reaches it.
  bool gathered_forward = false;
  // A zero-length task where each pass starts, for what is issued with the pass.
  bool pass_start_marker = false;
};

[[nodiscard]] IterationFeatures iterationFeatures(const ParallelPlan& plan, const TrainingSpec& training);

}  // namespace trainsim::parallelism
