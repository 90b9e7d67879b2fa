// What one training run does per iteration, independent of how it is parallelised:
// the `training:` section of an experiment file.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/config_node.h"
#include "parallelism/sharded_data_parallel.h"
#include "topology/gpu_spec.h"

namespace trainsim::parallelism {

// adam keeps two fp32 moments per parameter, sgd (with momentum) one: it sizes optimizer memory.
enum class Optimizer : uint8_t { kAdam, kSgd };
[[nodiscard]] std::string_view optimizerName(Optimizer optimizer);

// How FP8 training picks each tensor's scale (training.fp8_recipe, Transformer Engine's
// recipes): delayed, from the amax history of earlier iterations (DelayedScaling, TE's and
// Megatron-Core's default, NeMo's fp8_hybrid); current, from the tensor itself just before the
// cast (Float8CurrentScaling, Megatron-Core --fp8-recipe tensorwise, Megatron-Bridge's FP8-CS);
// or a scale per block, of 32 elements (MXFP8BlockScaling, Blackwell) or 1 x 128 / 128 x 128
// (Float8BlockScaling, DeepSeek-V3's recipe).
enum class Fp8Recipe : uint8_t { kDelayed, kCurrent, kMxfp8, kBlockwise };

// How the host issues a step's kernels (training.dispatch): eager PyTorch (one Python and
// ATen dispatch per op), compiled (torch.compile's Inductor launching its generated kernels)
// or CUDA graphs (the step's kernels replayed from a captured graph). The host launches
// kernels in order, and a kernel cannot start before it is launched; each mode's cost per
// kernel is a compute parameter (perf::ComputeParameters::dispatch_*_us).
enum class DispatchMode : uint8_t { kEager, kCompiled, kCudaGraphs };
[[nodiscard]] std::string_view dispatchModeName(DispatchMode mode);

// The values a software stack (configs/stacks/, software_stack.h) gives the training keys an
// experiment leaves out; without a stack, trainsim's own defaults (Megatron-LM's choices).
struct TrainingDefaults {
  bool flash_attention = true;
  bool fused_cross_entropy = false;
  bool fused_gate_up = true;
  bool fused_pointwise = true;
  bool fused_expert_mlp = false;
  bool compile_loss = false;
  std::optional<DispatchMode> dispatch;
  ShardedDataParallel zero3;
  bool retain_16bit_grads = false;
};

// How often and how the run writes checkpoints (training.checkpoint), for the goodput model
// (goodput/): every interval_iterations iterations, or the whole iterations nearest
// interval_s, or neither: the interval that maximises goodput (Young / Daly). async: the step
// stalls only while the states are copied to host memory and the write runs beside training
// (Megatron-Core's --async-save, torchtitan's checkpoint.async_mode); both frameworks'
// default is a synchronous save, which stalls the step for the whole write.
struct CheckpointPolicy {
  std::optional<int64_t> interval_iterations;
  std::optional<double> interval_s;
  bool async = false;
};

struct TrainingSpec {
  int64_t seq_len = 0;
  int64_t global_batch_size = 0;  // sequences per iteration, over all data-parallel replicas
  int64_t micro_batch_size = 1;   // sequences per forward/backward pass on one replica
  topology::Precision precision = topology::Precision::kBf16;
  Optimizer optimizer = Optimizer::kAdam;
  std::optional<double> tokens;  // total training tokens, for time_to_train_s
  CheckpointPolicy checkpoint;
  // Attention as one fused kernel (FlashAttention, Dao et al. 2022: Megatron-LM's
  // --use-flash-attn, Transformer Engine's fused attention) or, false, the unfused path: score
  // and context batched GEMMs with softmax and dropout kernels between them, which also keeps
  // the s x s softmax output (and dropout mask) in activation memory. Applied to the workload
  // and memory models by kernelsFor (parallelism/experiment.h).
  bool flash_attention = true;
  // The loss as one fused kernel over the 16-bit logits (Megatron-Core
  // --cross-entropy-loss-fusion --cross-entropy-fusion-impl te, Transformer Engine's Triton
  // cross-entropy) instead of Megatron's unfused vocab_parallel_cross_entropy, which casts the
  // logits to fp32 and keeps the fp32 softmax for the backward pass. Applied to the workload
  // and memory models by kernelsFor (parallelism/experiment.h).
  bool fused_cross_entropy = false;
  // With a compiled dispatch, the loss is compiled too and runs as one fused kernel as above
  // (torchtitan from bbb1b616e, 2025-04-02: components/loss.py build_cross_entropy_loss
  // compiles the loss with the model; Inductor fuses the fp32 cast and log_softmax and keeps
  // no fp32 copy of the logits). No effect with another dispatch. Applied by kernelsFor.
  bool compile_loss = false;
  // SwiGLU's gate and up projections as one GEMM of width 2 x ffn (Megatron-Core's
  // linear_fc1) or, false, two GEMMs (Hugging Face's LlamaMLP gate_proj / up_proj,
  // torchtitan's FeedForward w1 / w3). Applied by kernelsFor (parallelism/experiment.h).
  bool fused_gate_up = true;
  // RMSNorm, RoPE and SwiGLU as one fused kernel each (Megatron-Core with Transformer
  // Engine) or, false, as eager PyTorch's op sequences (torchtitan's model code), which a
  // compiled dispatch fuses again. Applied by kernelsFor (parallelism/experiment.h).
  bool fused_pointwise = true;
  // A mixture-of-experts layer's experts as Transformer Engine's fused grouped MLP
  // (Megatron-Core's op-fuser path, TEGroupedMLP._make_fused_ops with
  // NVTE_CUTEDSL_FUSED_GROUPED_MLP: FC1, the activation with its clamp and the router
  // probabilities, FC2 with its probability-scaled bias) or, false, Megatron-Core's
  // TEGroupedMLP, which runs the activation, a clamped GLU's clamp and the experts' FC2 bias
  // as kernels of their own (FlopsOptions::moe_glu_clamp_*, moe_expert_bias_*). Applied by
  // kernelsFor.
  bool fused_expert_mlp = false;
  // The software stack the experiment names (training.stack; "" for none), and how its
  // host issues the kernels: unset, the host is not modelled (every kernel is taken as
  // launched ahead of the GPU, and each costs ComputeParameters::launch_overhead_us).
  std::string stack;
  std::optional<DispatchMode> dispatch;
  // How the stack runs ZeRO-3 (training.zero3; sharded_data_parallel.h).
  ShardedDataParallel zero3;
  // The bf16 gradients autograd writes stay allocated beside the fp32 main gradients they are
  // accumulated into, until the optimizer step (DeepSpeed's BF16_Optimizer, used for bf16 at
  // ZeRO 0-1: backward(clear_lp_grads=False), deepspeed/runtime/bf16_optimizer.py at v0.16.0);
  // Megatron-Core accumulates straight into its fp32 main-gradient buffer and keeps none.
  // Memory only: 2 bytes per parameter for bf16 training with fp32 main gradients, ZeRO 0-1.
  bool retain_16bit_grads = false;
  // Element type of the main gradients: accumulated over micro-batches, reduced over the
  // data-parallel ranks and held in memory until the optimizer step (Megatron-Core DDP's
  // grad_reduce_in_fp32, Megatron-LM's --grad-reduce-in-bf16 and
  // --accumulate-allreduce-grads-in-fp32, Megatron-Bridge's ddp.grad_reduce_in_fp32). Unset:
  // Megatron-LM's default for the precision (MicroBatchShard::mainGradientBytes). Set, it is
  // fp32 or the 16-bit parameters' type (bf16 for bf16 and fp8, fp16 for fp16).
  std::optional<topology::Precision> grad_reduce_precision;
  // Element type of the optimizer's moments (Adam's m and v, SGD's momentum). bf16 is a
  // precision-aware optimizer: Megatron-Core's --use-precision-aware-optimizer with
  // --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16 (Transformer Engine's FusedAdam), NeMo's
  // distributed_fused_adam with dtype bf16 (Apex DistributedFusedAdam). It keeps the fp32
  // master weights and reads the main gradients in their own type, so it also has no fp32
  // copy of 16-bit main gradients. (Apex's also stores the master weights as 16-bit
  // remainders of the bf16 parameters: 2 bytes per parameter less than modelled.)
  topology::Precision optimizer_state_precision = topology::Precision::kFp32;
  // fp8 only: the model's weights are FP8 tensors (Megatron-Core --fp8-param-gather,
  // Transformer Engine's fp8_model_init; NeMo's fp8_params, Megatron-Bridge's FP8 recipes).
  // No 16-bit copy of the weights is kept, only the FP8 data (and its transpose where FP8
  // GEMMs are TN only), the distributed optimizer's parameter all-gather moves 1 byte per
  // parameter instead of 2, and the optimizer step quantizes the updated fp32 master shard
  // into FP8 instead of casting it to 16 bits. Applied by the memory model, the iteration
  // builder and the optimizer step.
  bool fp8_param_gather = false;
  // fp8 only: the scaling recipe. Current scaling reads each quantized tensor once more for
  // its absolute maximum (FlopsOptions::fp8_current_scaling_amax_bytes_per_element) and, with
  // FP8 weights, the master shard once more in the optimizer step. The block recipes find
  // their scales inside the cast and always write both orientations (a block's scale runs
  // along one axis), on any GPU.
  Fp8Recipe fp8_recipe = Fp8Recipe::kDelayed;
  // Mixture of experts: token slots of the busiest expert-parallel rank over the mean (1:
  // balanced routing, as the auxiliary loss aims for and NVIDIA's benchmarks force). The
  // simulation runs every rank at the busiest one's load, which sets the pace of the
  // all-to-alls and of the pass.
  double moe_load_imbalance = 1.0;
  // Megatron-Core --moe-expert-capacity-factor: an expert takes at most this many times its
  // mean tokens and drops the rest (unset: dropless), so the busiest rank's load is capped.
  std::optional<double> moe_capacity_factor;
  // The busiest expert-parallel rank's token slots over the mean, after the capacity cap.
  [[nodiscard]] double moeTokenFactor() const {
    return moe_capacity_factor ? std::min(moe_load_imbalance, *moe_capacity_factor) : moe_load_imbalance;
  }

  [[nodiscard]] int64_t tokensPerIteration() const { return seq_len * global_batch_size; }
};

// Reads a `training:` mapping (SPEC "Experiment file"); throws InputError naming the key.
// `defaults`: the values of the keys the section leaves out (the stack's). `stack` and
// `stack_overrides` are read by the experiment loader (software_stack.h), not here.
[[nodiscard]] TrainingSpec readTrainingSpec(const ConfigNode& section, const TrainingDefaults& defaults = {});
// The kernel-choice keys of a training section (flash_attention, fused_cross_entropy,
// compile_loss, fused_gate_up, fused_pointwise, dispatch, zero3, retain_16bit_grads) over `defaults`: what an
// experiment's training section and a stack file's (software_stack.h) read alike.
[[nodiscard]] TrainingDefaults readKernelChoices(const ConfigNode& section, TrainingDefaults defaults);

// A training section's `checkpoint:` mapping (interval_iterations or interval_s, async).
[[nodiscard]] CheckpointPolicy readCheckpointPolicy(const ConfigNode& section);
// "eager", "compiled", "cuda_graphs" (the values of training.dispatch).
[[nodiscard]] std::optional<DispatchMode> parseDispatchMode(std::string_view name);

}  // namespace trainsim::parallelism
