// Device memory per GPU for each pipeline stage of an experiment, and whether the busiest
// stage fits: weights, gradients and optimizer states (mixed-precision bytes per parameter as
// Megatron-LM keeps them, sharded by ZeRO), activations (Korthikanti et al. 2022, adapted to
// grouped-query attention, SwiGLU and flash attention, times the micro-batches the pipeline
// schedule keeps in flight), embedding and loss buffers, and the rest: communication buffers,
// the CUDA/NCCL runtime and the caching allocator's overhead.
//
// Activation bytes of one transformer layer for one micro-batch (b sequences of s tokens,
// hidden h, a heads, tp t, 2-byte elements, 1-byte dropout masks), Korthikanti et al.,
// "Reducing Activation Recomputation in Large Transformer Models" (arXiv:2205.05198), section
// 4 and Table 2:
//   no parallelism:                 s b h (34 + 5 a s / h)
//   tensor parallel:                s b h (10 + 24 / t + 5 a s / (h t))
//   tensor + sequence parallel:     s b h (34 / t + 5 a s / (h t))
//   selective recompute:            the 5 a s / (h t) core-attention term goes
//   full recompute:                 2 s b h (the layer input; / t with sequence parallelism)
// Derivation, term by term (what backward needs; "R" = replicated over tp unless sequence
// parallel, then / t; "S" = split over tp):
//   attention: input-norm input 2sbh R, QKV-GEMM input 2sbh R, Q and K 2sb(q + kv) S, V 2sb kv S,
//              output-projection input 2sb q S, dropout mask sbh R (gpt);
//              core attention, unfused: softmax output 2 a s^2 b S, and with dropout its mask
//              a s^2 b and output 2 a s^2 b S; fused (flash attention): only the fp32
//              logsumexp, 4 a s b S (the s x s matrices are never stored);
//   MLP:       norm input 2sbh R, fc1 input 2sbh R, then gpt: GELU input 2sbf S and fc2 input
//              2sbf S, dropout mask sbh R; llama: SwiGLU input 2sb(2f) S and fc2 input 2sbf S;
//   MoE:       norm input and router input 2sbh R each, the fp32 router probabilities, and per
//              routed token slot (s b top_k / t of them, all-gathered over etp): expert fc1
//              input 2h, then the expert MLP as above on f = moe.ffn_hidden_size, split over etp.
// With q = kv = h (no GQA), f = 4h, gpt and unfused attention this is exactly Korthikanti's
// 34 + 5as/h: 11sbh + 5as^2b attention, 19sbh MLP, 4sbh norms. Context parallelism divides s by
// cp in every term (each rank keeps its s / cp queries; the keys of the s^2 terms stay s).
#pragma once

#include <cstdint>
#include <vector>

#include "parallelism/experiment.h"
#include "parallelism/gradient_buckets.h"
#include "parallelism/micro_batch_shard.h"
#include "parallelism/transformer_workload.h"

namespace trainsim::parallelism {

// The memory model's constants. Their defaults and sources are configs/defaults/memory.yaml
// (the `memory:` section, keys named as the fields), read by defaultMemoryOptions
// (default_model_constants.h) and overridden by a calibration or a stack
// (model_constant_sections.h). The initialisers equal the shipped file
// (tests/parallelism/default_model_constants_test.cpp checks it), so tests may build
// MemoryOptions{} directly.
struct MemoryOptions {
  // Kernel choices and element sizes shared with the FLOPs model: fused (flash) attention,
  // dropout for gpt, dropout-mask, token-id and loss-softmax element sizes.
  FlopsOptions kernels;
  // Bytes per parameter of each cached FP8 copy of a weight under fp8 training (two copies
  // where kernels.fp8_transposed_copies, else one).
  double fp8_weight_copy_bytes = 1.0;
  // Transient tensors and caching-allocator fragmentation, as a share of the activations.
  double allocator_overhead_fraction = 0.05;
  // CUDA context and library workspaces.
  double runtime_reserved_bytes = 512.0 * 1024.0 * 1024.0;
  // NCCL buffers per communicator.
  double nccl_bytes_per_communicator = 256.0 * 1024.0 * 1024.0;
  // Gradient buckets reduced while backward runs, used when gradients are sharded (ZeRO-2/3)
  // and so have no full-size buffer to reduce in place: Megatron-Core's bucket size
  // (gradient_buckets.h), this many in flight.
  GradientBuckets grad_buckets;
  double grad_buckets_in_flight = 2.0;
  // Layers of unsharded parameters ZeRO-3 holds gathered (the one in use and the prefetched next).
  double zero3_gathered_layers = 2.0;
  // fp32 copies of the logits alive at the unfused loss's peak (Megatron's in-place
  // cross-entropy 1, PyTorch's F.cross_entropy on fp32 logits 2), beside the 16-bit logits.
  double unfused_loss_fp32_copies_at_peak = 1.0;
  // fp32 copies of the logits its backward holds at once (Megatron's in place 1, PyTorch's
  // log_softmax backward 3: the kept output, the incoming gradient and its result).
  double unfused_loss_backward_fp32_copies_at_peak = 1.0;
  // The same two counts where the logits are split over tp > 1 ranks by vocabulary
  // (Megatron's vocab-parallel loss runs the same in-place code: 1 and 1; torch's
  // loss_parallel, torchtitan's loss at tp > 1, decomposes log_softmax and its backward into
  // separate tensors: 3 and 4).
  double unfused_loss_tp_fp32_copies_at_peak = 1.0;
  double unfused_loss_tp_backward_fp32_copies_at_peak = 1.0;
};

// Bytes per parameter, before any sharding, Megatron-LM's distributed-optimizer table
// (docs/source/api-guide/dist_optimizer.md: 20 for fp16 params and grads, 18 for bf16 params
// with fp32 grads, 16 for fp32; the optimizer part is what the distributed optimizer shards):
//   fp16:      weights 2, gradients 2, optimizer 16 (fp32 master 4, Adam moments 8, fp32 copy of the gradients 4)
//   bf16, fp8: weights 2, gradients 4 (fp32 main gradients), optimizer 12 (master 4, moments 8);
//              fp8 adds its cached FP8 weight copies to the weights (MemoryOptions::fp8_weight_copy_bytes)
//   fp32/tf32: weights 4, gradients 4, optimizer 8 (moments; the weights are the master copy)
// SGD with momentum keeps one moment (4 bytes) instead of Adam's two. A training spec's
// grad_reduce_precision sets the gradients' size; 16-bit main gradients of a mixed-precision
// run add the optimizer's fp32 copy of them (4), as fp16's row does, and fp32 ones drop it.
struct StateBytes {
  double weights = 0.0;
  double gradients = 0.0;
  double optimizer = 0.0;
};
[[nodiscard]] StateBytes stateBytesPerParameter(const TrainingSpec& training, const MemoryOptions& options = {});
// The same for Megatron-LM's default main-gradient type of the precision.
[[nodiscard]] StateBytes stateBytesPerParameter(topology::Precision precision, Optimizer optimizer,
                                                const MemoryOptions& options = {});

// Parameters of one pipeline stage held by one GPU (tensor- and expert-parallel shards), split
// by how data parallelism replicates them: dense ones over dp x cp ranks, expert ones over
// tp x cp x dp / (etp x ep) ranks (Megatron-Core's expert data-parallel group).
struct StageParameters {
  double dense = 0.0;
  double expert = 0.0;
  double largest_layer = 0.0;  // one transformer layer's share (for ZeRO-3's gathered layers)
  // The part of dense outside the transformer layers: embedding, output layer, final norm,
  // MTP modules (PyTorch FSDP gathers them as the root module's unit).
  double outside_layers = 0.0;

  [[nodiscard]] double total() const { return dense + expert; }
};
// How a GPU's parameters divide between the groups that reduce (and ZeRO-gather) them, as
// fractions of StageParameters::total: all on RankLayout::dataGroup unless the experts have
// groups of their own (ParallelPlan::separateExpertGroups), then the expert ones on the
// expert data-parallel group (Megatron-Core keeps them in a buffer of their own, reduced over
// that group: megatron/core/distributed/distributed_data_parallel.py, expert_parallel_buffers).
struct ReplicaShares {
  double dense = 1.0;
  double expert = 0.0;
};
[[nodiscard]] ReplicaShares replicaShares(const ParallelPlan& plan, const StageParameters& parameters);

// `stage` of pp with `layers` transformer layers; the first holds the embedding (and GPT's
// learned positions), the last the final norm and the output layer (a copy of the input
// embedding when tied and pp > 1, as Megatron-LM keeps it).
[[nodiscard]] StageParameters stageParameters(const ModelSpec& model, const TrainingSpec& training,
                                              const ParallelPlan& plan, int64_t stage, int64_t layers);

// Activation bytes one transformer layer keeps for one micro-batch until its backward, under
// a recompute policy (see the derivation above); under recompute: selective, what
// `recompute_modules` (ParallelPlan::recompute_modules) rerun is not kept.
// Without a kind, the model's last layer's (every layer's where ModelSpec::uniformLayers()).
[[nodiscard]] double layerActivationBytes(const ModelSpec& model, const MicroBatchShard& shard, Recompute recompute,
                                          const MemoryOptions& options = {});
[[nodiscard]] double layerActivationBytes(const ModelSpec& model, const MicroBatchShard& shard, Recompute recompute,
                                          const MemoryOptions& options, LayerKind kind,
                                          uint32_t recompute_modules = recompute_module::kCoreAttention);

// Micro-batches whose activations a stage holds at its peak, counted in model chunks of
// layers / virtual_stages layers:
//   gpipe: all m (every forward runs before the first backward);
//   1f1b: min(pp - stage, m) (PipeDream-Flush: stage i runs pp - i - 1 warm-up forwards, then
//         one more before its first backward);
//   interleaved 1f1b (Megatron-LM, schedules.py forward_backward_pipelining_with_interleaving):
//         min(2 (pp - stage - 1) + (v - 1) pp + 1, m v), all m v when m = pp. On the first
//         stage that is pp (1 + (pp - 1) / (pp v)) micro-batches of a whole stage (Korthikanti).
[[nodiscard]] int64_t inFlightMicrobatches(const ParallelPlan& plan, int64_t microbatches, int64_t stage);

struct StageMemory {
  int64_t stage = 0;
  int64_t layers = 0;
  int64_t in_flight = 0;       // model-chunk micro-batches held (inFlightMicrobatches)
  StageParameters parameters;  // per GPU
  // One layer, one micro-batch, under the recompute policy: the mean over the stage's layers
  // where they differ (layers of different kinds, recompute_num_layers).
  double activation_per_layer = 0.0;

  double weights = 0.0;
  double gradients = 0.0;
  double optimizer = 0.0;
  double activations = 0.0;  // layers x in-flight, recompute working set, embedding and loss buffers
  // The parts of "other":
  double communication_buffers = 0.0;  // pipeline send/recv, SP gathers, gradient buckets, ZeRO-3 gathers
  double runtime = 0.0;                // CUDA context, library workspaces, NCCL communicators
  double allocator_overhead = 0.0;

  [[nodiscard]] double other() const { return communication_buffers + runtime + allocator_overhead; }
  [[nodiscard]] double total() const { return weights + gradients + optimizer + activations + other(); }
};

struct MemoryReport {
  std::vector<StageMemory> stages;
  std::size_t peak_stage = 0;   // the stage with the largest total (the first of equals)
  double capacity_bytes = 0.0;  // the GPU's memory_GiB

  [[nodiscard]] const StageMemory& peak() const { return stages.at(peak_stage); }
  [[nodiscard]] double peakBytes() const { return peak().total(); }
  [[nodiscard]] bool fits() const { return peakBytes() <= capacity_bytes; }
};

// Per-GPU memory of every pipeline stage of a loaded (resolved and checked) experiment.
[[nodiscard]] MemoryReport estimateMemory(const Experiment& experiment, const MemoryOptions& options = {});

}  // namespace trainsim::parallelism
