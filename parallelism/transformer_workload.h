// The work of a training iteration, operation by operation: for one micro-batch on one GPU,
// every kernel of a transformer layer (gpt: LayerNorm, GELU MLP, learned positions; llama:
// RMSNorm, SwiGLU MLP, RoPE, grouped-query attention; MoE layers), of the embedding and of the
// output layer and loss, with its FLOPs and the bytes it reads and writes in device memory, in
// the forward and the backward pass, sharded the way Megatron-LM shards it:
//  - tensor parallelism (TP, Shoeybi et al. 2019): QKV and MLP-up GEMMs split by columns, the
//    attention output and MLP-down GEMMs by rows, whole heads and KV groups per rank, the
//    embedding and the output layer split over the vocabulary;
//  - sequence parallelism (SP, Korthikanti et al. 2022): norms, dropout and residual adds on
//    tokens / tp, the all-reduces turned into all-gather + reduce-scatter;
//  - context parallelism (CP): each rank holds seq_len / cp query positions and attends over
//    the whole sequence with ring attention;
//  - expert parallelism (EP): experts / ep experts per rank, tokens exchanged by all-to-all.
// GEMM shapes are recorded so that a compute model can estimate their efficiency. The
// communication each layer needs is listed beside its operations (sizes only; the simulator
// places it).
//
// FLOP conventions (SPEC.md "Result JSON"): a matmul of (m x k) by (k x n) is 2mnk FLOPs; the
// backward pass of a matmul is two matmuls (input gradient and weight gradient) = 2x forward;
// attention score and context matmuls count in full (no discount for the causal mask). Model
// FLOPs sum every matmul of forward and backward once; hardware FLOPs add the forward matmuls
// that activation recomputation runs again.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parallelism/micro_batch_shard.h"
#include "parallelism/model_spec.h"
#include "parallelism/parallel_plan.h"
#include "parallelism/tp_overlap_config.h"
#include "parallelism/training_spec.h"
#include "perf/collective.h"

namespace trainsim::parallelism {

// The workload model's kernel choices and numeric constants. The numeric constants are data:
// their defaults and sources are configs/defaults/workload.yaml (the `workload:` section, keys
// named as the fields), read by defaultWorkloadOptions (default_model_constants.h) and
// overridden by a calibration or a stack (model_constant_sections.h). The initialisers below
// equal the shipped file (tests/parallelism/default_model_constants_test.cpp checks it), so
// tests may build FlopsOptions{} directly. The kernel choices are the experiment's
// (kernelsFor, experiment.h).
struct FlopsOptions {
  // Flash attention (Dao et al. 2022; Megatron-Core's TEDotProductAttention) computes scores,
  // softmax, dropout and context in one kernel without writing the s x s matrix. false = the
  // unfused path: two batched GEMMs with a softmax (and dropout) kernel between them.
  bool fused_attention = true;
  // Megatron-Core computes the SwiGLU gate and up projections as one GEMM of width 2 x ffn
  // (megatron/core/transformer/mlp.py, linear_fc1 "projects to 2 * ffn_hidden_size" when gated).
  // false = two GEMMs (gate, up), as Hugging Face's LlamaMLP does.
  bool fuse_gate_up = true;
  // RMSNorm, RoPE and SwiGLU each as one fused kernel (Transformer Engine, Megatron-Core's
  // fusions, Inductor under torch.compile) or, false, as the eager PyTorch op sequences of
  // torchtitan's model (models/norms.py RMSNorm, models/llama/model.py apply_rotary_emb and
  // FeedForward at 9dec370; Hugging Face's LlamaRMSNorm is the same chain): several kernels
  // each, through fp32 copies for the norm and RoPE, at the eager_* accesses below. The
  // experiment's training.fused_pointwise, or its compiled dispatch (kernelsFor).
  bool fused_pointwise = true;
  // Share of the s x s score matrix a causal flash-attention kernel computes (it skips the
  // blocks above the diagonal).
  double causal_work_fraction = 0.5;
  // Executed matmul FLOPs of FlashAttention's backward over its forward (it recomputes the
  // scores). Executed, not counted.
  double flash_backward_matmuls_over_forward = 2.5;
  // The fused attention kernel's rate with attention dropout on, as a fraction of its
  // no-dropout rate, forward and backward. Applied where attention dropout is on
  // (ModelSpec::hasAttentionDropout) and attention is fused; the unfused path has its own
  // dropout kernel.
  double flash_dropout_forward_throughput = 0.80;
  double flash_dropout_backward_throughput = 0.65;
  // Element-wise arithmetic per element of each kernel (not matmuls, so outside model FLOPs;
  // they matter for time only through their bytes), and the backward kernels' over the
  // forward's (except the residual add, whose gradient passes through).
  double layer_norm_flops_per_element = 5.0;
  double rms_norm_flops_per_element = 4.0;
  double gelu_flops_per_element = 8.0;
  double swiglu_flops_per_element = 5.0;
  double rope_flops_per_element = 3.0;
  double softmax_flops_per_element = 6.0;
  double cross_entropy_flops_per_element = 6.0;
  double residual_flops_per_element = 1.0;
  double dropout_flops_per_element = 2.0;
  double moe_combine_flops_per_element = 2.0;  // each expert output scaled and summed
  // Kernels an eager MoE layer's router and token permutation launch beyond the four ops that
  // stand for them (moe_router, moe_router_topk, moe_permute, moe_unpermute), per pass: what
  // host dispatch costs, and each kernel's gap on the GPU (Op::extra_kernels_forward).
  double moe_routing_extra_kernels_forward = 26.0;
  double moe_routing_extra_kernels_backward = 15.3;
  // The share of MoE layers whose forward makes the host wait for the GPU before the token
  // dispatch (Op::host_sync_share): 1 for dropless dispatchers that read the per-expert
  // counts on the host, 0 for sync-free ones.
  double moe_dispatch_host_sync_share = 1.0;
  // The factor on the expert-parallel all-to-alls' bytes that gives the plan's dispatcher's
  // network traffic (moe_dispatch.h, dispatchByteScale; chunkWorkloads sets it).
  double moe_dispatch_byte_scale = 1.0;
  // Megatron-Core's all-to-all dispatcher sorts the tokens it receives by local expert after
  // the dispatch and restores their order before the combine (token_dispatcher.py,
  // "Permutation 2", sort_chunks_by_idxs, where a rank holds more than one expert): a copy of
  // the routed tokens each way. chunkWorkloads sets it from the plan's dispatcher (the flex
  // dispatcher permutes once, after its dispatch).
  bool moe_sort_by_local_expert = false;
  // GEMM library calls per local expert beyond the first that a grouped expert GEMM makes
  // (Op::library_calls_*): 1 for Transformer Engine's multi-stream cuBLASLt loop (Hopper's
  // default path), 0 for a grouped GEMM that is one kernel (torch._grouped_mm, CUTLASS).
  double moe_grouped_gemm_library_calls_per_expert = 1.0;
  // Set from training.fused_expert_mlp by kernelsFor: the experts' activation (with its
  // clamp) and FC2 bias run inside Transformer Engine's fused grouped MLP, not as ops of their
  // own, and its GEMMs make no per-expert library calls.
  bool fused_expert_mlp = false;
  // Megatron-Core's expert FC2 bias (TEGroupedMLP._apply_bias, models with expert biases):
  // a Python loop over the local experts adds each expert's bias times the tokens' router
  // probabilities, then concatenates (and casts back from fp32 probabilities). Per element
  // of the experts' output, 16-bit and fp32 accesses forward and backward with fp32
  // probabilities (the flex dispatcher's), all 16-bit accesses with 16-bit ones (the
  // all-to-all dispatcher's: the router's type); kernels per local expert and for the whole
  // loop (configs/defaults/workload.yaml counts them op by op).
  double moe_expert_bias_forward_16bit_accesses = 2.0;
  double moe_expert_bias_forward_fp32_accesses = 6.0;
  double moe_expert_bias_backward_16bit_accesses = 4.0;
  double moe_expert_bias_backward_fp32_accesses = 8.0;
  double moe_expert_bias_kernels_per_expert_forward = 2.0;
  double moe_expert_bias_kernels_per_expert_backward = 7.0;
  double moe_expert_bias_kernels_forward = 2.0;
  double moe_expert_bias_kernels_backward = 3.0;
  double moe_expert_bias_16bit_probs_forward_accesses = 6.0;
  double moe_expert_bias_16bit_probs_backward_accesses = 8.0;
  double moe_expert_bias_16bit_probs_kernels_per_expert_forward = 2.0;
  double moe_expert_bias_16bit_probs_kernels_per_expert_backward = 5.0;
  double moe_expert_bias_16bit_probs_kernels_forward = 1.0;
  double moe_expert_bias_16bit_probs_kernels_backward = 2.0;
  // Whether the router probabilities reach the experts in fp32: DeepEP's and HybridEP's
  // dispatch upcasts them (token_dispatcher.py), the all-to-all dispatcher keeps the router's
  // type. chunkWorkloads sets it from the plan's dispatcher.
  bool moe_probs_fp32 = false;
  // The clamp of a clamped GLU's two halves (GPT-OSS; MoeSpec::activation_clamp), applied
  // outside Megatron-Core's fused activation (fused_bias_geglu.py: chunk, two clamps, cat):
  // per element of the experts' width, 16-bit accesses forward and backward, the backward's
  // one-byte mask accesses, and its kernels.
  double moe_glu_clamp_forward_accesses = 8.0;
  double moe_glu_clamp_backward_accesses = 11.0;
  double moe_glu_clamp_backward_mask_bytes = 8.0;
  double moe_glu_clamp_kernels_forward = 3.0;
  double moe_glu_clamp_kernels_backward = 9.0;
  // Of the clamp's 16-bit accesses, those made by strided kernels (the clamps and masks read
  // one half of each row; eager_strided_access_cost); the mask bytes all are.
  double moe_glu_clamp_forward_strided_accesses = 4.0;
  double moe_glu_clamp_backward_strided_accesses = 7.0;
  // PyTorch's element-wise kernels over a non-contiguous or broadcast operand (its
  // non-vectorized gpu_kernel path, and the unvectorized CatArrayBatchedCopy) take this many
  // times a vectorized kernel's time per byte: an access they make counts as that many
  // (configs/defaults/workload.yaml, measured on H100).
  double eager_strided_access_cost = 2.2;
  // Megatron-Core's unfused RoPE (ModelSpec::rope_attention_factor other than 1), per element
  // of the query and key heads: 16-bit accesses forward and backward, those of them in
  // strided kernels, and the kernels per tensor (query, key) each pass launches.
  double unfused_rope_forward_accesses = 12.0;
  double unfused_rope_forward_strided_accesses = 7.0;
  double unfused_rope_backward_accesses = 11.0;
  double unfused_rope_backward_strided_accesses = 7.0;
  double unfused_rope_kernels_forward = 12.0;
  double unfused_rope_kernels_backward = 7.0;
  // The router probabilities' gradient in the experts' weighted activation (Megatron-Core's
  // weighted_bias_swiglu / quick_geglu backward under torch.compile): a reduction kernel of
  // its own that reads the activation's input and the output gradient again, in 16-bit
  // accesses per element of the width, and its kernels. Fused pointwise stacks only.
  double moe_weighted_activation_backward_extra_accesses = 3.0;
  double moe_weighted_activation_backward_extra_kernels = 1.0;
  // An element-wise kernel's backward FLOPs over its forward's (the residual add's excepted).
  double elementwise_backward_flops_factor = 2.0;
  // Weight gradients are accumulated into the main gradients across micro-batches: one
  // element read and one written per weight element per micro-batch. Unset: the training
  // precision's main-gradient size (MicroBatchShard::mainGradientBytes: fp32 for bf16, 2
  // bytes for fp16).
  std::optional<double> main_grad_bytes;
  // With gradient_accumulation_fusion (Megatron-LM from 2022, default on; Transformer
  // Engine's wgrad GEMM with accumulate) this read-modify-write is the weight-gradient
  // GEMM's epilogue: cublasGemmEx with beta = 1 into the fp32 main_grad
  // (fused_weight_gradient_mlp_cuda), so it is counted as that GEMM's epilogue bytes. (Without
  // the fusion, Megatron-LM 2021, the DDP hook's `param.main_grad.add_(param.grad.data)` is a
  // separate kernel moving at least as many bytes.)
  // Dense gradient of the embedding table (vocabulary / tp x hidden per GPU), per
  // micro-batch: PyTorch's embedding backward (aten/src/ATen/native/cuda/Embedding.cu,
  // embedding_dense_backward_cuda) zero-fills a dense 16-bit gradient of the whole table
  // before scattering the token rows into it (2 bytes written per element), and Megatron's
  // DDP hook then adds it to the main gradient (`param.main_grad.add_(param.grad.data)`:
  // 2 bytes read, the main gradient read and written): 2 x 2 + 2 x main_grad_bytes per
  // table element, 12 bytes with fp32 main gradients (no option of its own).
  // Vocabulary-parallel cross-entropy as Megatron runs it, unfused: fp32 accesses per logit
  // (besides one 16-bit read forward and one 16-bit write backward).
  double cross_entropy_forward_fp32_accesses = 9.0;
  double cross_entropy_backward_fp32_accesses = 3.0;
  // Fused cross-entropy (the experiment's training.fused_cross_entropy; Transformer Engine's
  // kernels): 16-bit accesses per logit.
  double fused_cross_entropy_forward_accesses = 1.0;
  double fused_cross_entropy_backward_accesses = 2.0;
  // Eager PyTorch's element-wise op sequences (fused_pointwise false): accesses per element
  // in the 16-bit activation type and in fp32, forward and backward, and the kernels each
  // launches (configs/defaults/workload.yaml counts them op by op).
  double eager_rms_norm_forward_16bit_accesses = 4.0;
  double eager_rms_norm_forward_fp32_accesses = 7.0;
  double eager_rms_norm_backward_16bit_accesses = 8.0;
  double eager_rms_norm_backward_fp32_accesses = 19.0;
  double eager_rms_norm_kernels_forward = 8.0;
  double eager_rms_norm_kernels_backward = 16.0;
  double eager_rope_16bit_accesses = 2.0;
  double eager_rope_fp32_accesses = 4.0;
  double eager_rope_kernels = 6.0;
  double eager_swiglu_forward_accesses = 5.0;
  double eager_swiglu_backward_accesses = 9.0;
  double eager_swiglu_kernels_forward = 2.0;
  double eager_swiglu_kernels_backward = 3.0;
  // Set from training.fused_cross_entropy by kernelsFor (parallelism/experiment.h).
  bool fused_cross_entropy = false;
  // Tensor-parallel communication overlap (the plan's tp_comm_overlap; Megatron-Core
  // --tp-comm-overlap = Transformer Engine userbuffers). Each collective's kernels run beside
  // one GEMM on SMs of their own, taken from that GEMM (transformer_engine/common/
  // comm_gemm_overlap: CommOverlapBase's _math_sms = sm_count - num_comm_sm, passed to
  // cuBLASLt as CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET where set_sm_margin is on). The
  // overlapped GEMMs run in chunks along their token dimension, each chunk as soon as its
  // slice of the collective allows: tp chunks beside a ring exchange (one per rank's slice),
  // num_splits beside a pipelined reduce-scatter; bulk overlaps leave the GEMM whole. The
  // settings per GEMM (method, SMs, splits, margin) are the plan's tp_comm_overlap_config
  // (tp_overlap_config.h; Transformer Engine's defaults unless the experiment sets them).
  // Set by the iteration builder from the plan.
  bool tp_comm_overlap = false;
  TpCommOverlapConfig tp_overlap_config;
  // The CUDA streams the chunks are issued on round-robin, so up to that many share the SMs at
  // once; a small chunk fills fewer SMs (wave quantization, perf::ComputeModel::gemmPlan),
  // which is what the split costs.
  int64_t tp_overlap_compute_streams = 3;
  // FP8 training (precision fp8) as Transformer Engine runs it: each linear layer quantizes
  // its input (forward) and its output gradient (backward) with kernels of their own, before
  // the FP8 GEMMs; these are the bytes per element of such a cast (row-wise and transposed
  // copies, delayed scaling), and the extra read for the absolute maximum under current
  // scaling (fp8_current_scaling, set from training.fp8_recipe by kernelsFor). With sequence
  // parallelism the tensor is quantized on its own shard and gathered in FP8. The weights'
  // casts are cached across the micro-batches of an iteration (is_first_microbatch) and are
  // not counted.
  double fp8_quantize_bytes_per_element = 4.0;
  double fp8_current_scaling_amax_bytes_per_element = 2.0;
  // Kernels of one current-scaling quantization (amax, scale, cast), per local expert in a
  // grouped GEMM; delayed scaling's is one kernel, for all experts at once.
  double fp8_current_scaling_kernels_per_quantize = 3.0;
  // Current and block scaling: 1, a grouped GEMM quantizes each local expert's slice apart
  // (Transformer Engine); 0: all at once (quantizations: 1 + this x (local experts - 1)).
  double fp8_quantize_per_expert = 1.0;
  bool fp8_current_scaling = false;
  // A block-scaling recipe (fp8_recipe mxfp8 or blockwise, kernelsFor): one kernel a
  // quantization, no separate amax read, both orientations written.
  bool fp8_block_scaling = false;
  // Whether FP8 quantization writes the transposed (column-wise) copy counted above. Not on
  // GPUs whose FP8 GEMMs take either operand layout (Blackwell, compute capability 10.x:
  // Transformer Engine's is_non_tn_fp8_gemm_supported(); its per-tensor-scaled FP8 tensors
  // then keep the row-wise data only, Float8TensorBase.update_usage), where the cast writes
  // one byte per element less and the weights' FP8 cache holds one copy instead of two.
  // Set from the experiment's GPU (topology::GpuSpec::fp8_gemm_any_layout) by kernelsFor.
  bool fp8_transposed_copies = true;
  // Element sizes: a dropout mask's, a token id's, and the unfused cross-entropy's softmax
  // over the vocabulary (the fused kernel keeps the 16-bit logits instead).
  double dropout_mask_bytes = 1.0;
  double token_id_bytes = 8.0;
  double loss_element_bytes = 4.0;
};

enum class OpKind : uint8_t {
  kGemm,           // a (possibly batched or grouped) matrix multiplication with weights
  kAttention,      // score / context batched matmuls between activations, or the fused kernel
  kElementwise,    // activation functions, dropout, residual adds, RoPE, softmax, permutations
  kNormalization,  // LayerNorm / RMSNorm
  kEmbedding,      // table lookup (forward) and scatter-add into the table's gradient (backward)
  kLoss,           // vocabulary-parallel cross-entropy
};
[[nodiscard]] std::string_view opKindName(OpKind kind);

// C[m x n] = A[m x k] B[k x n], `batch` independent products (attention heads, local experts).
struct GemmShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch = 1;
  // Run as `chunks` kernels of m / chunks rows each, at most `concurrent_chunks` of them at
  // a time: Transformer Engine's userbuffers overlap under tp_comm_overlap splits the GEMM
  // beside a ring-exchange or pipelined collective (FlopsOptions::tp_overlap_compute_streams).
  int64_t chunks = 1;
  int64_t concurrent_chunks = 1;
  // SMs that the kernels of a collective overlapped with this GEMM hold while it runs
  // (TpOverlapGemmSettings::num_sm); the GEMM gets the rest.
  double comm_compute_units = 0.0;
  // Whether the GEMM is planned for the rest (Transformer Engine's set_sm_margin: the GEMM's
  // cuBLASLt SM count target = SMs - the collective's, so its tiles fill fewer SMs in more
  // waves), or planned for the whole GPU and slowed in proportion to the SMs held.
  bool comm_sm_margin = false;

  [[nodiscard]] double flops() const;
  // The rows of the chunks that run at once (m when whole): the model times them as one GEMM.
  [[nodiscard]] int64_t concurrentRows() const;
  // How many such groups run one after another (1 when whole).
  [[nodiscard]] double chunkGroups() const;
  bool operator==(const GemmShape&) const = default;
};

struct OpCost {
  double flops = 0.0;           // counted as SPEC.md counts them (matmuls in full: 2mnk)
  double executed_flops = 0.0;  // what the kernels do: the causal half of flash attention, its recomputed QK^T
  double bytes = 0.0;           // device memory read + written
  // Bytes the epilogues of the op's GEMMs store (and load, when they accumulate into their
  // output): the output tiles, each written after its k-loop. Included in `bytes` too; the
  // compute model decides whether this traffic adds to the GEMM time
  // (ComputeParameters::gemm_epilogue_exposed).
  double epilogue_bytes = 0.0;
};

struct Op {
  std::string name;  // "qkv_projection", "attention_scores", "mlp_fc1", ...
  OpKind kind = OpKind::kElementwise;
  bool matmul = false;  // counted in model FLOPs
  // Its matmuls run at the 16-bit rate even in an fp8 run: Megatron's output layer
  // (tensor_parallel.ColumnParallelLinear) and the MoE router are plain PyTorch matmuls, outside
  // Transformer Engine's FP8 recipe.
  bool sixteen_bit_matmul = false;
  // The "core attention" of Korthikanti et al.: scores, softmax, dropout, context (what ring
  // attention overlaps its exchanges with).
  bool core_attention = false;
  // The recompute module the op belongs to (recompute_module bits, parallel_plan.h; 0 for
  // none): rerun in the forward pass of backward under recompute: selective when the plan's
  // recompute_modules hold it. The core attention's ops are recompute_module::kCoreAttention.
  uint32_t recompute_module = 0;
  // The share of the op's forward that recompute: selective_op reruns in the backward.
  // torchtitan's per-op policy (parallelisms/parallelize_llama.py at 395a526, no_recompute_list
  // and _custom_policy; _save_list in later versions) saves the outputs of matmuls (aten.mm) and of the attention
  // kernel (SDPA) but every second matmul of a layer's forward, in order, and reruns every other op: 0 for the
  // attention kernel, 1 for the elementwise ops, and for a GEMM op the share of its FLOPs in the layer's even-numbered
  // matmuls (wq, wk, wv, wo, w1, w3, w2: wk, wo and w3 rerun).
  double op_checkpoint_rerun = 1.0;
  OpCost forward;
  OpCost backward;
  std::vector<GemmShape> forward_gemms;   // the matmuls of the forward kernel(s)
  std::vector<GemmShape> backward_gemms;  // input-gradient and weight-gradient matmuls
  // Kernels an eager framework launches for the op beyond one per GEMM (kernelsOf): the
  // small kernels of an unfused path that the op's cost stands for as a whole (a MoE
  // router's scores, top-k, load-balancing loss and token permutation). Each also costs the
  // GPU its gap between kernels (ComputeModel::kernelGapsTime), as native kernels do.
  double extra_kernels_forward = 0.0;
  double extra_kernels_backward = 0.0;
  // Calls the framework's C++ makes to a GEMM library for the op beyond the one its kernel
  // count holds (Transformer Engine's grouped GEMM: a cuBLASLt call per local expert), each
  // at ComputeParameters::dispatch_library_call_us of host time.
  double library_calls_forward = 0.0;
  double library_calls_backward = 0.0;
  // Kernels the framework's C++ launches inside the op's one Python call beyond the kernel
  // its dispatch counts (Transformer Engine's current-scaling quantization: amax, scale and
  // cast per tensor, per local expert in a grouped GEMM): each costs the host a bare launch
  // (ComputeParameters::dispatch_native_kernel_us), not an eager op.
  double native_kernels_forward = 0.0;
  double native_kernels_backward = 0.0;
  // The host waits here for the GPU before it launches this op (a dropless MoE layer reads
  // its per-expert token counts on the host before the token dispatch), in this share of the
  // layers: 0 = never, 1 = every layer.
  double host_sync_share = 0.0;
};

// The share of `op`'s forward that runs again inside the backward: 1 or 0 (Korthikanti et al.
// 2022: full = the whole layer; selective = the ops of the plan's `recompute_modules`, by
// default the core attention only); selective_op, the op's Op::op_checkpoint_rerun.
[[nodiscard]] double rerunShare(const Op& op, Recompute recompute,
                                uint32_t recompute_modules = recompute_module::kCoreAttention);

// kExpertTensor: the expert MLPs' tensor-parallel group (ParallelPlan::expertTensorParallel).
enum class ParallelGroup : uint8_t { kTensor, kContext, kExpert, kExpertTensor, kPipeline };
[[nodiscard]] std::string_view parallelGroupName(ParallelGroup group);

// The GEMM a tensor-parallel collective runs beside under tp_comm_overlap.
struct GemmOverlap {
  std::size_t op = 0;  // index into Workload::ops
  // Which of the op's GEMMs: forward_gemms[gemm], or backward_gemms[gemm] (0 = input
  // gradient, 1 = weight gradient) when the collective is in the backward pass.
  std::size_t gemm = 0;
  TpOverlapMethod method = TpOverlapMethod::kBulk;
  int64_t chunks = 1;  // what the GEMM is split into (GemmShape::chunks): tp, the pipeline splits, or 1
  // SMs that copy the collective's data (TpOverlapGemmSettings::num_sm for the pipelined and
  // bulk methods; 0 for the ring exchange, whose copies run on the copy engines) and the
  // bytes each GPU sends: (tp - 1) / tp of the collective's size.
  double copy_sms = 0.0;
  double sent_bytes = 0.0;
};

// One communication a layer needs per micro-batch, repeated `count` times.
struct Communication {
  std::string name;
  perf::CollectiveOp op = perf::CollectiveOp::kAllReduce;
  ParallelGroup group = ParallelGroup::kTensor;
  bool backward = false;  // in the backward pass, else the forward
  // nccl-tests "size" (perf::CollectiveRequest::bytes): the buffer for all_reduce and
  // send_recv; the total over the group for all_gather, reduce_scatter and all_to_all.
  double bytes = 0.0;
  int64_t count = 1;
  // Under tp_comm_overlap with sequence parallelism, the GEMM Transformer Engine runs this
  // collective beside. Unset for every other collective, among them the tensor-parallel ones
  // outside Transformer Engine's linear layers (embedding, output layer, loss, MoE token
  // exchange), which Megatron runs on the compute stream after the kernels they follow.
  std::optional<GemmOverlap> beside;
  // A context-parallel ring exchange, which Transformer Engine runs beside the steps of the
  // core attention (ring_attention_exposure.h) instead of after the pass's compute.
  bool beside_attention = false;
  // The recompute module whose forward issues it (Op::recompute_module): recompute: selective
  // with that module runs a forward collective again in the backward.
  uint32_t recompute_module = 0;
  // Issued before the op of this index (Workload::ops; unset: after them all): which host-sync
  // segment it runs in (forwardHostWaitSeconds).
  std::size_t issued_before_op = std::numeric_limits<std::size_t>::max();
  // A forward tensor-parallel collective that recompute: selective_op runs again (Op::
  // op_checkpoint_rerun): not a reduce-scatter, whose output torchtitan's list saves, nor the
  // MLP's closing all-reduce, whose output no backward needs (torch.utils.checkpoint stops
  // recomputing after the last tensor the backward asks for).
  bool op_checkpoint_rerun = true;
};

// The operations of one part of the model for one micro-batch on one GPU, in execution order.
struct Workload {
  std::vector<Op> ops;
  std::vector<Communication> communications;

  // Sums over ops; `matmul_only` keeps the ones counted in model FLOPs.
  [[nodiscard]] double forwardFlops(bool matmul_only = false) const;
  [[nodiscard]] double backwardFlops(bool matmul_only = false) const;
  [[nodiscard]] const Op* find(std::string_view name) const;
};

// One transformer layer (attention block + MLP or MoE block) of `kind`; without a kind, the
// model's last layer's (every layer's where ModelSpec::uniformLayers()).
[[nodiscard]] Workload transformerLayer(const ModelSpec& model, const MicroBatchShard& shard,
                                        const FlopsOptions& options = {});
[[nodiscard]] Workload transformerLayer(const ModelSpec& model, const MicroBatchShard& shard,
                                        const FlopsOptions& options, LayerKind kind);
// The input of one multi-token prediction module (ModelSpec::mtp_layers): the shared
// embedding's lookup of the shifted tokens, two RMSNorms and the 2h -> h projection. Its
// transformer block is transformerLayer(model.mtpLayerKind()) and its head outputLayer.
[[nodiscard]] Workload multiTokenPredictionInput(const ModelSpec& model, const MicroBatchShard& shard,
                                                 const FlopsOptions& options = {});
// The first pipeline stage's input: token embedding (vocabulary-parallel), learned positions
// and embedding dropout for gpt.
[[nodiscard]] Workload embeddingLayer(const ModelSpec& model, const MicroBatchShard& shard,
                                      const FlopsOptions& options = {});
// The last pipeline stage's output: final norm, logits (vocabulary-parallel) and cross-entropy loss.
[[nodiscard]] Workload outputLayer(const ModelSpec& model, const MicroBatchShard& shard,
                                   const FlopsOptions& options = {});

// Model FLOPs of one iteration (SPEC.md): every matmul of forward and backward of every
// layer, the logits included, for global_batch_size sequences; recomputation excluded.
// Independent of the parallel plan.
[[nodiscard]] double modelFlopsPerIteration(const ModelSpec& model, const TrainingSpec& training,
                                            const FlopsOptions& options = {});
// Hardware FLOPs: model FLOPs plus the forward matmuls recomputation reruns: every layer's
// under recompute: full (Narayanan et al. SC21: 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) for GPT),
// the core attention's under selective (Korthikanti et al. 2022, section 5), every second
// matmul's under selective_op (Op::op_checkpoint_rerun).
[[nodiscard]] double hardwareFlopsPerIteration(const ModelSpec& model, const TrainingSpec& training,
                                               Recompute recompute, const FlopsOptions& options = {});
// The same for a plan: with recompute_num_layers, only each model chunk's first layers rerun.
// Needs a plan that passed checkPlan for this model.
[[nodiscard]] double hardwareFlopsPerIteration(const ModelSpec& model, const TrainingSpec& training,
                                               const ParallelPlan& plan, const FlopsOptions& options = {});

}  // namespace trainsim::parallelism
