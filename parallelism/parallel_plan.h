// How an experiment spreads one training iteration over GPUs: the `parallelism:` section.
// Ranks are laid out as Megatron-LM does: gpus = tp * cp * dp * pp, with expert parallelism
// (ep) carved out of the dp * cp ranks rather than multiplying the GPU count.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/config_node.h"
#include "parallelism/tp_overlap_config.h"
#include "parallelism/training_spec.h"

namespace trainsim::parallelism {

// gpipe: all forwards, then all backwards. 1f1b: PipeDream-Flush, one forward one backward
// in steady state; with virtual_stages > 1 it is Megatron's interleaved 1F1B.
// kZeroBubble: Qi et al., "Zero Bubble Pipeline Parallelism" (ICLR 2024, arXiv:2401.10241):
// each backward split into its input-gradient pass (B) and its weight-gradient pass (W), the W
// passes deferred to fill the pipeline's bubbles (pipeline_schedule.h, stageOrder).
// kZeroBubbleV and kDualPipeV place two model chunks per GPU in a V (GPU s holds virtual stages
// s and 2 pp - 1 - s): ZB-V (Qi et al. section 6, torch.distributed.pipelining's
// ScheduleZBVZeroBubble) and DualPipeV (DeepSeek's DualPipe "cut in half", deepseek-ai/DualPipe
// dualpipev.py). kDualPipe is DeepSeek's bidirectional DualPipe (DeepSeek-V3 report,
// arXiv:2412.19437 section 3.2.1; deepseek-ai/DualPipe dualpipe.py): half the micro-batches run
// from the first GPU to the last, half from the last to the first, each GPU holding its stage of
// the first direction (chunk 0) and the mirror stage pp - 1 - s of the second (chunk 1), two
// copies of the parameters.
enum class PipelineSchedule : uint8_t { kGpipe, kOneFOneB, kZeroBubble, kZeroBubbleV, kDualPipeV, kDualPipe };
[[nodiscard]] std::string_view scheduleName(PipelineSchedule schedule);
// Whether the schedule runs each backward as two passes, input gradients then weight gradients.
[[nodiscard]] bool splitsWeightGradients(PipelineSchedule schedule);
// Whether the schedule places its two chunks per GPU in a V (ParallelPlan::virtualStage).
[[nodiscard]] bool placesChunksInAV(PipelineSchedule schedule);
// Whether the schedule runs micro-batches in both directions (DualPipe).
[[nodiscard]] bool runsBothDirections(PipelineSchedule schedule);

// How MoE tokens reach their experts (moe_dispatch.h): NCCL all-to-all, or Megatron-Core's
// flex dispatcher (DeepEP / HybridEP kernels: once per remote node, forwarded over NVLink).
enum class MoeDispatcher : uint8_t { kAllToAll, kFlex };

// selective: recompute only attention's softmax/dropout (Korthikanti et al. 2022); full: every
// layer's forward; selective_op: PyTorch's per-op selective checkpointing as torchtitan
// configures it (selective_ac_option "op"): the layer's input, the attention kernel's output
// and every other matmul's output are saved, everything else reruns (Op::op_checkpoint_rerun).
enum class Recompute : uint8_t { kNone, kSelective, kFull, kSelectiveOp };
[[nodiscard]] std::string_view recomputeName(Recompute recompute);

// What recompute: selective reruns: Megatron-Core's --recompute-modules
// (megatron/core/transformer/transformer_config.py recompute_modules, transformer_layer.py,
// moe/experts.py, multi_latent_attention.py), a set of these bits. Its default is the core
// attention alone (Korthikanti et al.); a list replaces it. Every module keeps its input and
// reruns its forward in the backward. An op's module is Op::recompute_module.
namespace recompute_module {
inline constexpr uint32_t kCoreAttention = 1u << 0;  // core_attn: the attention kernel(s)
// layernorm: the norms that are not fused into the next linear layer: a mixture-of-experts
// layer's pre-MLP norm and latent attention's input norm (Transformer Engine fuses the
// others into LayerNormLinear, where Megatron-Core has an IdentityOp and reruns nothing).
inline constexpr uint32_t kLayerNorm = 1u << 1;
inline constexpr uint32_t kMoeActivation = 1u << 2;       // moe_act: the experts' activation
inline constexpr uint32_t kLatentUpProjection = 1u << 3;  // mla_up_proj: latent norms, up projections, RoPE
inline constexpr uint32_t kDenseMlp = 1u << 4;            // mlp: the dense layers' MLP (not MoE layers')
inline constexpr uint32_t kSharedExperts = 1u << 5;       // shared_experts
inline constexpr uint32_t kMoeLayer = 1u << 6;            // moe: refused by checkPlan (not modelled)
}  // namespace recompute_module
// The modules' names as Megatron-Core spells them, in bit order, and as "core_attn, moe_act".
[[nodiscard]] std::vector<std::string> recomputeModuleNames(uint32_t modules);
[[nodiscard]] std::string recomputeModulesText(uint32_t modules);

struct ParallelPlan {
  // `gpus` and `dp` read as kAuto until resolvePlan (plan_validation.h) fills them in.
  static constexpr int64_t kAuto = 0;

  int64_t gpus = kAuto;  // kAuto: every GPU of the cluster
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t dp = kAuto;  // kAuto: gpus / (tp * pp * cp)
  int64_t cp = 1;
  int64_t ep = 1;
  // Expert tensor parallelism: the tensor-parallel degree of the expert MLPs, apart from the
  // attention's tp (Megatron-Core --expert-tensor-parallel-size, "MoE parallel folding",
  // arXiv:2504.14960). kAuto: tp, Megatron-Core's default.
  int64_t etp = kAuto;
  bool sequence_parallel = false;  // resolvePlan turns it off at tp = 1, where it does nothing (as Megatron does)
  int64_t virtual_stages = 1;      // model chunks per GPU; > 1 = interleaved 1F1B
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  int zero = 0;  // 0 none, 1 optimizer states (Megatron distributed optimizer), 2 + gradients, 3 + parameters
  Recompute recompute = Recompute::kNone;
  // With full recomputation, only the first N transformer layers of each model chunk rerun
  // their forward in the backward; the others keep all their activations (Megatron-LM
  // --recompute-method block --recompute-num-layers N, megatron/core/transformer/
  // transformer_block.py _checkpointed_forward; torchtitan's selective layer checkpointing of
  // every k-th block is the same count without pipeline parallelism). Unset: every layer.
  std::optional<int64_t> recompute_num_layers;
  // With recompute: selective, the modules rerun (recompute_module bits; the
  // parallelism.recompute_modules list); other recompute values do not read it.
  uint32_t recompute_modules = recompute_module::kCoreAttention;
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = true;
  // Parameters per data-parallel gradient bucket (Megatron-Core --ddp-bucket-size); unset:
  // Megatron-Core's default (gradient_buckets.h).
  std::optional<double> ddp_bucket_size;
  // Megatron-Core --tp-comm-overlap (Transformer Engine userbuffers): the sequence-parallel
  // all-gathers / reduce-scatters run in chunks under the GEMMs that consume or produce them.
  bool tp_comm_overlap = false;
  // Megatron-Core --overlap-moe-expert-parallel-comm (Megatron-Bridge moe_a2a_overlap): the
  // steady state of 1F1B runs one micro-batch's forward beside another's backward, and each
  // pass's expert-parallel all-to-alls run beside the compute of its partner
  // (megatron/core/pipeline_parallel/combined_1f1b.py). Passes without a partner (warm-up,
  // cool-down) keep them after their compute.
  bool moe_a2a_overlap = false;
  // Megatron-Core --moe-token-dispatcher-type (alltoall, flex) (moe_dispatch.h).
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;
  // Its per-GEMM settings (Megatron-Core --tp-comm-overlap-cfg; tp_overlap_config.h):
  // Transformer Engine's defaults unless the experiment's tp_comm_overlap_config sets them.
  TpCommOverlapConfig tp_comm_overlap_config;
  // Explicitly uneven pipeline splits (Megatron's --decoder-first/last-pipeline-num-layers):
  // the remaining layers are spread evenly over the other stages. With a V placement
  // (placesChunksInAV) they are the layers of the first and the last model chunk (the
  // embedding's and the loss's, both on the first GPU), which may hold none, and the rest
  // spread evenly over the other 2 pp - 2 chunks (Qi et al.'s ZB-V runs, arXiv:2401.10241 §6:
  // the ends one layer fewer than the middle).
  std::optional<int64_t> first_stage_layers;
  std::optional<int64_t> last_stage_layers;

  [[nodiscard]] bool interleaved() const { return virtual_stages > 1; }
  // Selective recomputation of modules other than the core attention alone (what the plan's
  // text, label and sweep JSON spell out).
  [[nodiscard]] bool recomputesOtherModules() const {
    return recompute == Recompute::kSelective && recompute_modules != recompute_module::kCoreAttention;
  }
  // The expert layers fold the tp x cp x dp ranks of a pipeline stage into etp x ep x edp
  // (etp innermost, then ep: Megatron-Core's expert RankGenerator order "tp-ep-dp-pp").
  [[nodiscard]] int64_t expertTensorParallel() const { return etp == kAuto ? tp : etp; }
  // The ranks that hold the same expert weights, over which expert gradients are reduced and
  // the distributed optimizer shards expert states: tp x cp x dp / (etp x ep). Needs a resolved dp.
  [[nodiscard]] int64_t expertDataParallel() const { return tp * cp * dp / (expertTensorParallel() * ep); }
  // Whether the expert layers have groups of their own (ep > 1 or etp != tp); otherwise their
  // data-parallel group is the dense layers'.
  [[nodiscard]] bool separateExpertGroups() const { return ep > 1 || expertTensorParallel() != tp; }
  // Microbatches per iteration on each pipeline: global_batch / (dp * micro_batch). Needs a resolved dp.
  [[nodiscard]] int64_t microbatches(const TrainingSpec& training) const;
  // Transformer layers of each of the pp stages (all virtual chunks of a stage together),
  // with first/last_stage_layers applied. Needs a plan that passed checkPlan for this model.
  [[nodiscard]] std::vector<int64_t> layersPerStage(int64_t layers) const;
  // Transformer layers of each of the 2 pp model chunks of a V placement, in virtual-stage order.
  [[nodiscard]] std::vector<int64_t> layersPerVChunk(int64_t layers) const;
  // Transformer layers of model chunk `chunk` of `stage` under interleaving. A stage whose
  // layers do not split evenly over its virtual_stages chunks (an uneven first or last
  // stage) gives the chunks next to the embedding or the loss one layer fewer: the first
  // stage's first chunks, the last stage's last chunks, as Megatron-Core places them with
  // --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split
  // (Llama 3.1 405B, 126 layers on pp 8 x vp 8: 1 + 7 x 2 layers on the first stage).
  // In a V: layersPerVChunk's count of the chunk's virtual stage.
  [[nodiscard]] int64_t layersOfChunk(int64_t layers, int64_t stage, int64_t chunk) const;
  // The index of the first transformer layer of that chunk: model chunks hold consecutive
  // layers in the order of their virtual stage, chunk x pp + stage (Megatron-LM's interleaved
  // layout, megatron/core/transformer/transformer_block.py get_num_layers_to_build and its offset).
  [[nodiscard]] int64_t firstLayerOfChunk(int64_t layers, int64_t stage, int64_t chunk) const;
  // The virtual stage model chunk `chunk` of `stage` runs: chunk x pp + stage (interleaved), or
  // in a V (placesChunksInAV) stage for chunk 0 and 2 pp - 1 - stage for chunk 1. The
  // embedding runs in virtual stage 0, the output layer and loss in the last, pp x
  // virtual_stages - 1: on the last GPU's last chunk, or in a V the first GPU's second chunk.
  // DualPipe numbers its chunks as the V does, but each direction is a pipeline of its own:
  // virtual stages 0 .. pp - 1 the first direction's stages, pp .. 2 pp - 1 the second's (its
  // stage j on GPU pp - 1 - j), each starting with the embedding and ending with the output.
  [[nodiscard]] int64_t virtualStage(int64_t stage, int64_t chunk) const;
  struct StageChunk {
    int64_t stage = 0;
    int64_t chunk = 0;
  };
  [[nodiscard]] StageChunk stageChunkOf(int64_t virtual_stage) const;
  [[nodiscard]] bool holdsEmbedding(int64_t stage, int64_t chunk) const {
    return startsADirection(virtualStage(stage, chunk));
  }
  [[nodiscard]] bool holdsOutput(int64_t stage, int64_t chunk) const {
    return endsADirection(virtualStage(stage, chunk));
  }
  // Whether a chunk of the pipeline stage (GPU) holds the embedding, the output layer and loss:
  // the first and the last GPU (the first alone in a V and without pipeline parallelism);
  // under DualPipe both ends hold both.
  [[nodiscard]] bool holdsEmbeddingOn(int64_t stage) const {
    return stage == 0 || (runsBothDirections(schedule) && stage == pp - 1);
  }
  [[nodiscard]] bool holdsOutputOn(int64_t stage) const {
    return stage == (placesChunksInAV(schedule) ? 0 : pp - 1) || (runsBothDirections(schedule) && stage == 0);
  }
  // Whether the pass's neighbour in its direction exists: no forward before virtual stage 0
  // (and DualPipe's pp), no backward after the last (and DualPipe's pp - 1).
  [[nodiscard]] bool startsADirection(int64_t virtual_stage) const {
    return virtual_stage == 0 || (runsBothDirections(schedule) && virtual_stage == pp);
  }
  [[nodiscard]] bool endsADirection(int64_t virtual_stage) const {
    return virtual_stage == pp * virtual_stages - 1 || (runsBothDirections(schedule) && virtual_stage == pp - 1);
  }
  // How many of a chunk's `chunk_layers` transformer layers run under `recompute` (its first
  // ones): none without recomputation, recompute_num_layers of them at most.
  [[nodiscard]] int64_t recomputedLayersOfChunk(int64_t chunk_layers) const;
  // Whether some transformer layers run without the plan's recomputation (recompute_num_layers
  // below some chunk's layer count).
  [[nodiscard]] bool partialRecompute(int64_t layers) const;
  // "7 + 14 x 8 + 7": the layers of the first stage, the middle ones and the last, for an
  // uneven split (in a V, of the first model chunk, the middle ones and the last: "V: 1 + 30 x
  // 2 + 0"); empty for an even one.
  [[nodiscard]] std::string unevenSplitText(int64_t layers) const;
};

// "full", or "full, first 4 layers of each chunk" with recompute_num_layers, or
// "selective (moe_act, layernorm)" with modules other than the core attention alone.
[[nodiscard]] std::string recomputeText(const ParallelPlan& plan);
// The same for a table column of 9 characters: "full", "full/4", "sel_op" for selective_op,
// "sel_mod" for selective with modules other than the core attention alone.
[[nodiscard]] std::string recomputeLabel(const ParallelPlan& plan);

// Reads a `parallelism:` mapping (SPEC "Experiment file"); throws InputError naming the key.
// Only the values themselves are checked here; how they fit the model, the cluster and the
// batch is plan_validation's job.
[[nodiscard]] ParallelPlan readParallelPlan(const ConfigNode& section);

}  // namespace trainsim::parallelism
