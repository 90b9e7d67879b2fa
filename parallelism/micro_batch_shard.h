// What one GPU sees of one micro-batch: the sequences, the tokens, the slice of every tensor
// that tensor (TP), sequence (SP), context (CP) and expert (EP) parallelism leave it, and the
// element sizes of the training precision. Shared by the FLOPs and the memory models.
#pragma once

#include <cstdint>
#include <optional>

#include "parallelism/parallel_plan.h"
#include "parallelism/training_spec.h"
#include "topology/gpu_spec.h"

namespace trainsim::parallelism {

struct MicroBatchShard {
  int64_t micro_batch_size = 1;  // sequences
  int64_t seq_len = 0;           // the whole sequence; a CP rank holds seq_len / cp of it
  int64_t tp = 1;
  int64_t cp = 1;
  int64_t ep = 1;
  int64_t etp = 1;                // ParallelPlan::expertTensorParallel
  double moe_token_factor = 1.0;  // TrainingSpec::moeTokenFactor
  bool sequence_parallel = false;
  topology::Precision precision = topology::Precision::kBf16;
  std::optional<topology::Precision> grad_reduce_precision;  // TrainingSpec::grad_reduce_precision
  bool fp8_param_gather = false;                             // TrainingSpec::fp8_param_gather

  // The shard of a resolved plan (sequence_parallel as resolvePlan left it: off at tp = 1).
  [[nodiscard]] static MicroBatchShard of(const TrainingSpec& training, const ParallelPlan& plan);
  // One whole sequence on one GPU: the unit of the SPEC's model-FLOP count.
  [[nodiscard]] static MicroBatchShard wholeSequence(const TrainingSpec& training);

  // Query positions of this rank: b * s / cp (load-balanced ring attention gives each CP rank
  // 2 chunks of s / (2 cp)). Every TP rank runs the tensor-parallel GEMMs on all of them.
  [[nodiscard]] double tokens() const;
  // Key/value positions every query attends over: the whole sequence (CP passes it around the ring).
  [[nodiscard]] double keyTokens() const { return static_cast<double>(micro_batch_size * seq_len); }
  // Tokens of the regions outside tensor parallelism (norms, dropout, residual adds): tokens()
  // split over tp with sequence parallelism, else replicated on every TP rank.
  [[nodiscard]] double replicatedRegionTokens() const;
  // Elements of activations between kernels: 2 bytes for fp16/bf16 (and fp8, whose kernels cast
  // their inputs: Transformer Engine keeps activations in bf16 between layers), 4 for fp32/tf32.
  [[nodiscard]] double activationBytes() const;
  // Elements of GEMM operands: 1 byte for fp8 (both operands cast to e4m3/e5m2 by Transformer
  // Engine), else the activation size.
  [[nodiscard]] double gemmOperandBytes() const;
  // Elements of the main gradients, accumulated over micro-batches and reduced over the
  // data-parallel ranks. Megatron-LM (megatron/training/arguments.py) accumulates and
  // all-reduces them in fp32 for bf16 ("bfloat16 requires gradient accumulation and
  // all-reduce to be done in fp32", and so for fp8, which runs with bf16 parameters) and in
  // the parameters' dtype otherwise (--accumulate-allreduce-grads-in-fp32 off by default):
  // 2 bytes for fp16, 4 for bf16, fp8, fp32 and tf32; grad_reduce_precision, when the
  // experiment sets it, overrides that default. The memory model's gradient bytes per
  // parameter are the same (Megatron's distributed-optimizer table).
  [[nodiscard]] double mainGradientBytes() const;
  // Elements of the parameters the distributed optimizer all-gathers after its step: the
  // model weights' type, 1 byte with FP8 weights (fp8_param_gather), else the activation size.
  [[nodiscard]] double parameterGatherBytes() const;
};

}  // namespace trainsim::parallelism
