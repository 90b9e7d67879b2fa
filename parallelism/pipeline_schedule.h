// Pipeline schedules: the order in which one pipeline stage runs its forward and backward
// passes of micro-batches (and model chunks, when interleaved). The workload builder turns
// these orders plus the data dependencies between stages into a task graph.
#pragma once

#include <cstdint>
#include <vector>

#include "parallelism/parallel_plan.h"

namespace trainsim::parallelism {

enum class PassKind : uint8_t { kForward, kBackward };

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
// Interleaving needs microbatches to be a multiple of stages (Megatron's requirement).
[[nodiscard]] std::vector<PipelineStep> stageOrder(PipelineSchedule schedule, int64_t stages, int64_t virtual_stages,
                                                   int64_t microbatches, int64_t stage);

// The steps a pass depends on in other stages (or chunks): the forward of the previous
// stage (or the previous chunk on the last stage), the backward of the next stage (or
// the next chunk on the first stage), and for the last chunk's backward on the last stage
// its own forward. Empty for the first forward of the first chunk on stage 0.
struct StageStep {
  int64_t stage;
  PipelineStep step;
};
[[nodiscard]] std::vector<StageStep> upstreamSteps(int64_t stages, int64_t virtual_stages, int64_t stage,
                                                   const PipelineStep& step);

// Largest number of micro-batches whose activations a stage holds at once in this order
// (forwards started minus backwards finished), counting chunks of one micro-batch separately.
[[nodiscard]] int64_t peakInFlight(const std::vector<PipelineStep>& order);

}  // namespace trainsim::parallelism
