// Pipeline schedules: the order in which one pipeline stage runs its forward and backward
// passes of micro-batches (and model chunks, when interleaved). The workload builder turns
// these orders plus the data dependencies between stages into a task graph.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "parallelism/parallel_plan.h"

namespace trainsim::parallelism {

// kBackward: the whole backward, or under a schedule that splits it (splitsWeightGradients)
// its input-gradient part (B: what the previous stage waits for); kWeight: the weight-gradient
// GEMMs the split defers (W).
enum class PassKind : uint8_t { kForward, kBackward, kWeight };

struct PipelineStep {
  PassKind pass = PassKind::kForward;
  int32_t microbatch = 0;
  int32_t chunk = 0;  // model chunk (virtual stage) on this GPU; 0 when not interleaved

  bool operator==(const PipelineStep&) const = default;
};

// The passes of `stage` (0-based, of `stages`) in execution order:
// - GPipe: every forward, then every backward.
// - 1F1B (PipeDream-Flush, Megatron-LM): stages - stage - 1 warm-up forwards, then one
//   forward / one backward alternately, then the remaining backwards.
// - Interleaved 1F1B (Megatron-LM, virtual_stages > 1): micro-batches in groups of
//   `stages`, each group running through chunk 0, 1, ... v-1 (backward: v-1 ... 0), with
//   (stages - stage - 1) * 2 + (v - 1) * stages warm-up forwards.
// - Zero bubble (torch.distributed.pipelining ScheduleInterleavedZeroBubble, its "ZB1P", at
//   pytorch 1fd7abc2f5; ZB-H1 of Qi et al. at one chunk): (v - 1) * stages + stages - stage - 1
//   warm-up forwards, then F, B, and from the (stage + 1)-th B on the W of the oldest B still
//   without one; the W passes left over close the order. Chunks alternate every `stages`
//   micro-batches as in interleaved 1F1B.
// - ZB-V and DualPipeV (two chunks in a V, ParallelPlan::virtualStage): the orders of
//   torch.distributed.pipelining's ScheduleZBVZeroBubble and of DeepSeek's dualpipev.py
//   (pipeline_schedule.cpp says which code, at which version).
// - DualPipe (both directions, chunk 0 the first, chunk 1 the second; microbatches / 2 each):
//   DeepSeek's dualpipe.py, which is dualpipev.py's order on min(stage, stages - 1 - stage) of
//   stages / 2.
// Interleaving needs microbatches to be a multiple of stages (Megatron's requirement).
[[nodiscard]] std::vector<PipelineStep> stageOrder(PipelineSchedule schedule, int64_t stages, int64_t virtual_stages,
                                                   int64_t microbatches, int64_t stage);

// Which steps of a stage's order run with a partner when a forward and a backward of other
// micro-batches are merged (Megatron-Core's combined 1F1B, moe_a2a_overlap): each forward
// that the next step's backward follows, and that backward; warm-up forwards and cool-down
// backwards run alone.
[[nodiscard]] std::vector<bool> pairedSteps(const std::vector<PipelineStep>& order);

// Position of (pass, chunk, micro-batch) in a stage's order (stageOrder).
class StepIndex {
 public:
  StepIndex(const std::vector<PipelineStep>& order, int64_t chunks, int64_t microbatches)
      : chunks_(chunks), microbatches_(microbatches), position_(static_cast<std::size_t>(3 * chunks * microbatches)) {
    for (std::size_t i = 0; i < order.size(); ++i) position_[slot(order[i])] = i;
  }
  [[nodiscard]] std::size_t operator()(const PipelineStep& step) const { return position_[slot(step)]; }

 private:
  [[nodiscard]] std::size_t slot(const PipelineStep& step) const {
    return static_cast<std::size_t>((static_cast<int64_t>(step.pass) * chunks_ + step.chunk) * microbatches_ +
                                    step.microbatch);
  }
  int64_t chunks_;
  int64_t microbatches_;
  std::vector<std::size_t> position_;
};

// The steps a pass depends on in other stages (or chunks): the forward of the previous
// stage (or the previous chunk on the last stage), the backward of the next stage (or
// the next chunk on the first stage), and for the last chunk's backward on the last stage
// its own forward. A weight-gradient pass needs its own input-gradient pass (same stage).
// Empty for the first forward of the first chunk on stage 0.
struct StageStep {
  int64_t stage;
  PipelineStep step;
};
// Where the plan places its chunks in a V (placesChunksInAV), the neighbours are its virtual
// stages' (ParallelPlan::virtualStage); the second overload is the interleaved placement.
[[nodiscard]] std::vector<StageStep> upstreamSteps(const ParallelPlan& plan, int64_t stage, const PipelineStep& step);
[[nodiscard]] std::vector<StageStep> upstreamSteps(int64_t stages, int64_t virtual_stages, int64_t stage,
                                                   const PipelineStep& step);

// Largest number of micro-batches whose activations a stage holds at once in this order
// (forwards started minus backwards finished), counting chunks of one micro-batch separately.
[[nodiscard]] int64_t peakInFlight(const std::vector<PipelineStep>& order);

// Where the order splits the backward: the largest of (forwards whose backward has not run) +
// `weight_share` x (backwards whose weight-gradient pass has not run) over the order, in
// micro-batches of activations: between its two passes a micro-batch keeps only what the
// weight gradients read, `weight_share` of its activations. peakInFlight without a split.
[[nodiscard]] double peakHeld(const std::vector<PipelineStep>& order, double weight_share);

}  // namespace trainsim::parallelism
