#include "validate/training_measurements.h"

#include <stdexcept>
#include <string_view>

namespace trainsim::validate {
namespace {

constexpr const char* kSc21 = "megatron-sc21-t1";
constexpr const char* kKorthikanti = "korthikanti-2022";
constexpr const char* kKorthikantiLayer = "korthikanti-t4";
constexpr const char* kMcore = "mcore-h100-weak";
constexpr const char* kBridge = "bridge-h100-fp8";
constexpr const char* kDgxc = "dgxc-h100";
constexpr const char* kBridgeBlackwell = "bridge-blackwell";
constexpr const char* kMlperfH100 = "mlperf-h100-gpt3";
constexpr const char* kMlperfBlackwell = "mlperf-blackwell";
constexpr const char* kNemoLongContext = "nemo-long-context";
constexpr const char* kNemoSummary = "nemo-2407";

// Transformer Engine userbuffers settings (parallelism.tp_comm_overlap_config) of the runs
// that overlap tensor-parallel communication, per recipe:
//  - Runs without a preset on Transformer Engine 1.x (Megatron-Core r0.8 with TE 1.8; the
//    DGX Cloud Nemotron-4 recipes, NeMo 24.09 with TE 1.10): that version's defaults
//    (transformer_engine/pytorch/module/base.py, initialize_ub before 2.0): set_sm_margin
//    false for every GEMM; methods, SMs and splits as in 2.x.
constexpr const char* kTeOneDefaults =
    "{qkv_dgrad: {set_sm_margin: 0}, qkv_wgrad: {set_sm_margin: 0}, fc1_dgrad: {set_sm_margin: 0}, "
    "fc1_wgrad: {set_sm_margin: 0}, proj_fprop: {set_sm_margin: 0}, fc2_fprop: {set_sm_margin: 0}}";
//  - DGX Cloud GPT-3 175B (nemo_megatron/gpt3_175b_hydra.yaml, ub_tp_comm_overlap_cfg): bulk
//    overlaps on 4 / 8 / 2 / 4 SMs without margin, pipelined reduce-scatters on 24 / 20 SMs
//    with margin, ring exchanges as the defaults.
constexpr const char* kGpt3DgxcPreset =
    "{qkv_dgrad: {method: bulk, num_sm: 4, set_sm_margin: 0}, qkv_wgrad: {method: bulk, num_sm: 8, set_sm_margin: 0}, "
    "fc1_dgrad: {method: bulk, num_sm: 2, set_sm_margin: 0}, fc1_wgrad: {method: bulk, num_sm: 4, set_sm_margin: 0}, "
    "proj_fprop: {method: pipeline, num_sm: 24, num_splits: 4, set_sm_margin: 1}, "
    "fc2_fprop: {method: pipeline, num_sm: 20, num_splits: 4, set_sm_margin: 1}}";
//  - Llama 3 70B at tp 4 and Llama 3.1 405B at tp 8, cp 2 (NeMo's
//    collections/llm/recipes/tp_overlap_configs/userbuffers.py, the same values as the
//    NeMo-Framework-Launcher configs the DGX Cloud recipes run, and Megatron-Bridge's
//    comm_overlap presets): userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192 and
//    userbuffers_bf16_h100_h16384_tp8_cp2_mbs1_seqlen8192 for the DGX Cloud runs (one config
//    in both precisions); the _fp8_ variants, whose proj / fc2 forward reduce-scatters run as
//    ring exchanges on 1 SM with margin, for Megatron-Bridge's FP8 runs.
constexpr const char* kLlama70bBf16Preset =
    "{qkv_dgrad: {num_sm: 4, set_sm_margin: 0}, qkv_wgrad: {num_sm: 24, set_sm_margin: 0}, "
    "fc1_dgrad: {num_sm: 2, set_sm_margin: 0}, fc1_wgrad: {num_sm: 4, set_sm_margin: 0}, "
    "proj_fprop: {method: pipeline, num_sm: 24, num_splits: 4, set_sm_margin: 1}, "
    "fc2_fprop: {method: pipeline, num_sm: 16, num_splits: 4, set_sm_margin: 1}}";
constexpr const char* kLlama70bFp8Preset =
    "{qkv_dgrad: {num_sm: 4, set_sm_margin: 0}, qkv_wgrad: {num_sm: 24, set_sm_margin: 0}, "
    "fc1_dgrad: {num_sm: 2, set_sm_margin: 0}, fc1_wgrad: {num_sm: 4, set_sm_margin: 0}, "
    "proj_fprop: {method: ring_exchange, num_sm: 1, set_sm_margin: 1}, "
    "fc2_fprop: {method: ring_exchange, num_sm: 1, set_sm_margin: 1}}";
constexpr const char* kLlama405bBf16Preset =
    "{qkv_dgrad: {num_sm: 2, set_sm_margin: 0}, qkv_wgrad: {num_sm: 24, set_sm_margin: 0}, "
    "fc1_dgrad: {num_sm: 2, set_sm_margin: 0}, fc1_wgrad: {num_sm: 2, set_sm_margin: 0}, "
    "proj_fprop: {method: pipeline, num_sm: 24, num_splits: 4, set_sm_margin: 1}, "
    "fc2_fprop: {method: pipeline, num_sm: 8, num_splits: 4, set_sm_margin: 1}}";
constexpr const char* kLlama405bFp8Preset =
    "{qkv_dgrad: {num_sm: 2, set_sm_margin: 0}, qkv_wgrad: {num_sm: 24, set_sm_margin: 0}, "
    "fc1_dgrad: {num_sm: 2, set_sm_margin: 0}, fc1_wgrad: {num_sm: 2, set_sm_margin: 0}, "
    "proj_fprop: {method: ring_exchange, num_sm: 1, set_sm_margin: 1}, "
    "fc2_fprop: {method: ring_exchange, num_sm: 1, set_sm_margin: 1}}";

// NVIDIA's MLPerf Training GPT-3 175B userbuffers files (NVIDIA/benchmarks/gpt3/implementations/
// pytorch/conf/tp_overlap/): h100tp4pp8mbs1.yaml (v3.1: bulk overlaps on 4 / 8 / 2 / 4 SMs,
// pipelined reduce-scatters on 24 and 4 SMs with margin, ring exchanges as the defaults) and
// h100tp4mbs2.yaml (v4.0: bulk overlaps on 4 SMs each, proj_fprop pipelined on 24 SMs with
// margin, fc2_fprop a ring exchange on 1 SM with margin; its atomic GEMM is not modelled).
constexpr const char* kMlperfGpt3H100Mbs1Preset =
    "{qkv_dgrad: {method: bulk, num_sm: 4, set_sm_margin: 0}, qkv_wgrad: {method: bulk, num_sm: 8, set_sm_margin: 0}, "
    "fc1_dgrad: {method: bulk, num_sm: 2, set_sm_margin: 0}, fc1_wgrad: {method: bulk, num_sm: 4, set_sm_margin: 0}, "
    "proj_fprop: {method: pipeline, num_sm: 24, num_splits: 4, set_sm_margin: 1}, "
    "fc2_fprop: {method: pipeline, num_sm: 4, num_splits: 4, set_sm_margin: 1}}";
constexpr const char* kMlperfGpt3H100Mbs2Preset =
    "{qkv_dgrad: {method: bulk, num_sm: 4, set_sm_margin: 0}, qkv_wgrad: {method: bulk, num_sm: 4, set_sm_margin: 0}, "
    "fc1_dgrad: {method: bulk, num_sm: 4, set_sm_margin: 0}, fc1_wgrad: {method: bulk, num_sm: 4, set_sm_margin: 0}, "
    "proj_fprop: {method: pipeline, num_sm: 24, num_splits: 4, set_sm_margin: 1}, "
    "fc2_fprop: {method: ring_exchange, num_sm: 1, set_sm_margin: 1}}";
// The v4.1 B200 GPT-3 run's b100tp4mbs2.yaml: bulk overlaps on 4 SMs each, ring exchange
// everywhere else (proj_fprop and fc2_fprop with FP8 output buffers, not modelled).
constexpr const char* kMlperfGpt3B200Preset =
    "{qkv_dgrad: {method: bulk, num_sm: 4, set_sm_margin: 0}, qkv_wgrad: {method: bulk, num_sm: 4, set_sm_margin: 0}, "
    "fc1_dgrad: {method: bulk, num_sm: 4, set_sm_margin: 0}, fc1_wgrad: {method: bulk, num_sm: 4, set_sm_margin: 0}, "
    "proj_fprop: {method: ring_exchange, num_sm: 1, set_sm_margin: 1}, "
    "fc2_fprop: {method: ring_exchange, num_sm: 1, set_sm_margin: 1}}";

// The NeMo-Framework-Launcher userbuffers files (launcher_scripts/conf/training/tp_overlap/,
// chosen by name ub_cfg_<gpu>_h<hidden>_tp<tp>_mbs<mbs>_seqlen<seq>:
// nemo_launcher/core/stages.py, Training._get_ub_cfg_override) of NeMo's 24.07 performance
// summary plans that no preset above holds (cga_size, aggregate and fp8_buf are not modelled):
//  - GPT-3 20B at tp 2, micro-batch 2 (ub_cfg_h100_h6144_tp2_mbs2_seqlen2048.yaml, commit
//    273c9427, "H100/20B/TP2/MBS2/SeqLen2K/FP8"): bulk overlaps on 8 / 16 / 4 / 16 SMs without
//    margin, pipelined reduce-scatters on 16 (proj) and 24 (fc2) SMs with margin.
constexpr const char* kGpt3_20bTp2Mbs2Preset =
    "{qkv_dgrad: {method: bulk, num_sm: 8, set_sm_margin: 0}, qkv_wgrad: {method: bulk, num_sm: 16, set_sm_margin: 0}, "
    "fc1_dgrad: {method: bulk, num_sm: 4, set_sm_margin: 0}, fc1_wgrad: {method: bulk, num_sm: 16, set_sm_margin: 0}, "
    "proj_fprop: {method: pipeline, num_sm: 24, num_splits: 4, set_sm_margin: 1}, "
    "fc2_fprop: {method: pipeline, num_sm: 24, num_splits: 4, set_sm_margin: 1}}";
//  - GPT-3 175B at tp 4 (ub_cfg_h100_h12288_tp4_mbs2_seqlen2048.yaml, commit 5d302f86; the
//    launcher's mbs1 file is not stored, and NeMo's nemo/collections/llm/recipes/
//    tp_overlap_configs/userbuffers.py, commit 0594a700, carries the same values as
//    userbuffers_{bf16,fp8}_h100_h12288_tp4_mbs1_seqlen2048): bulk overlaps on 4 / 4 / 2 / 4
//    SMs without margin, proj_fprop pipelined on 24 SMs with margin, fc2_fprop a ring exchange
//    on 1 SM with margin.
constexpr const char* kGpt3_175bTp4Preset =
    "{qkv_dgrad: {method: bulk, num_sm: 4, set_sm_margin: 0}, qkv_wgrad: {method: bulk, num_sm: 4, set_sm_margin: 0}, "
    "fc1_dgrad: {method: bulk, num_sm: 2, set_sm_margin: 0}, fc1_wgrad: {method: bulk, num_sm: 4, set_sm_margin: 0}, "
    "proj_fprop: {method: pipeline, num_sm: 24, num_splits: 4, set_sm_margin: 1}, "
    "fc2_fprop: {method: ring_exchange, num_sm: 1, set_sm_margin: 1}}";
//  - Llama 2 70B at tp 4, sequence 4,096 (ub_cfg_h100_h8192_tp4_mbs1_seqlen4096.yaml, commit
//    e5abe838, the default of llama/llama2_70b.yaml): bulk overlaps on 8 / 16 / 2 / 4 SMs
//    without margin, pipelined reduce-scatters on 24 (proj) and 16 (fc2) SMs with margin.
constexpr const char* kLlama2_70bTp4Preset =
    "{qkv_dgrad: {method: bulk, num_sm: 8, set_sm_margin: 0}, qkv_wgrad: {method: bulk, num_sm: 16, set_sm_margin: 0}, "
    "fc1_dgrad: {method: bulk, num_sm: 2, set_sm_margin: 0}, fc1_wgrad: {method: bulk, num_sm: 4, set_sm_margin: 0}, "
    "proj_fprop: {method: pipeline, num_sm: 24, num_splits: 4, set_sm_margin: 1}, "
    "fc2_fprop: {method: pipeline, num_sm: 16, num_splits: 4, set_sm_margin: 1}}";

// Megatron-Bridge's userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192
// (src/megatron/bridge/training/comm_overlap.py), which its Llama 3.1 405B recipes run on
// B200 and GB200: bulk overlaps on 8 / 32 / 2 / 8 SMs without SM margin for the qkv and fc1
// input and weight gradients, ring exchange (1 SM) everywhere else, the proj and fc2 forward
// GEMMs with SM margin.
constexpr const char* kLlama405bBlackwellFp8Preset =
    "{qkv_dgrad: {num_sm: 8, set_sm_margin: 0}, qkv_wgrad: {num_sm: 32, set_sm_margin: 0}, "
    "fc1_dgrad: {num_sm: 2, set_sm_margin: 0}, fc1_wgrad: {num_sm: 8, set_sm_margin: 0}, "
    "proj_fprop: {method: ring_exchange, num_sm: 1, set_sm_margin: 1}, "
    "fc2_fprop: {method: ring_exchange, num_sm: 1, set_sm_margin: 1}}";

// Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
// Megatron-LM" (SC21, arXiv:2104.04473), Table 1 (weak scaling on Selene, DGX A100 80GB).
// Per-row TP/PP/micro-batch/virtual-stage settings from NVIDIA/Megatron-LM
// examples/academic_paper_scripts/sc21/run_table_1.sh + CONFIG.sh; seq 2048, vocab 51,200,
// fp16 with loss scaling, full activation recomputation on every row. dp = gpus / (tp pp).
// virtual_stages = (layers / pp) / --num-layers-per-virtual-pipeline-stage.
// Rows 1-4 use --DDP-impl torch (PyTorch DDP: bucketed all-reduce overlapped with the
// backward pass); rows 5-10 use --DDP-impl local (Megatron's own DDP of 2021: one
// all-reduce after the pipeline flush, not overlapped). Input and output embeddings shared
// (Megatron's default). No distributed optimizer, no sequence parallelism (both came later).
TrainingMeasurement sc21(const char* id, const char* model, int64_t layers, int64_t hidden, int64_t heads,
                         int64_t global_batch, int64_t micro_batch, int64_t tp, int64_t pp, int64_t dp,
                         int64_t virtual_stages, bool torch_ddp, double hardware_tflops, bool slow) {
  TrainingMeasurement row;
  row.id = id;
  row.source = kSc21;
  row.model = model;
  row.layers = layers;
  row.hidden_size = hidden;
  row.attention_heads = heads;
  row.ffn_hidden_size = 4 * hidden;
  row.vocab_size = 51200;
  row.tied_embeddings = true;
  row.seq_len = 2048;
  row.global_batch_size = global_batch;
  row.micro_batch_size = micro_batch;
  row.precision = "fp16";
  row.gpus = tp * pp * dp;
  row.tp = tp;
  row.pp = pp;
  row.dp = dp;
  row.virtual_stages = virtual_stages;
  row.recompute = "full";
  row.overlap_grad_reduce = torch_ddp;
  // PyTorch DDP's bucket_cap_mb default, 25 MiB, of fp16 gradients (torch/nn/parallel/distributed.py).
  if (torch_ddp) row.ddp_bucket_size = 25.0 * 1024.0 * 1024.0 / 2.0;
  row.flash_attention = false;  // FlashAttention (Dao et al., arXiv:2205.14135) postdates these runs
  row.cluster = "dgx-a100";
  row.published = hardware_tflops;
  row.slow = slow;
  row.assumptions = "unfused attention (2021 Megatron-LM)";
  return row;
}

// Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models"
// (arXiv:2205.05198, MLSys 2023), Table 3 (configurations) and Table 5 (iteration time),
// as transcribed in calculon-ai/calculon validation/seqsel/tab5/*.json; DP = 1 per the
// NVIDIA/Megatron-LM README (May 2022). Selene, DGX A100 80GB; seq 2048; fp16 (Calculon
// config). "full": full recompute, tensor-parallel all-reduces (no sequence parallelism);
// "selective": sequence parallelism + selective recompute (the paper's "present work").
// Interleaving per the Calculon configs (pipeline_interleaving 1 for 22B and 1T, 3 for 175B
// and 530B). The vocabulary is not in the paper's tables: 51,200 (Megatron's padded GPT-2
// vocabulary, the SC21 setting) reproduces the README's MFU for these rows (175B: 13.75 s
// -> 51.4% MFU).
TrainingMeasurement korthikanti(const char* id, const char* model, int64_t layers, int64_t hidden, int64_t heads,
                                int64_t global_batch, int64_t tp, int64_t pp, int64_t virtual_stages, bool selective,
                                double iteration_time_s, bool slow) {
  TrainingMeasurement row;
  row.id = id;
  row.source = kKorthikanti;
  row.model = model;
  row.layers = layers;
  row.hidden_size = hidden;
  row.attention_heads = heads;
  row.ffn_hidden_size = 4 * hidden;
  row.vocab_size = 51200;
  row.tied_embeddings = true;
  row.seq_len = 2048;
  row.global_batch_size = global_batch;
  row.micro_batch_size = global_batch == 4 ? 4 : 1;  // Table 3: 4 for 22B, 1 otherwise
  row.precision = "fp16";
  row.gpus = tp * pp;
  row.tp = tp;
  row.pp = pp;
  row.dp = 1;
  row.virtual_stages = virtual_stages;
  row.sequence_parallel = selective;
  row.recompute = selective ? "selective" : "full";
  // Unfused attention: the paper's activation memory counts the s x s softmax and dropout
  // buffers (the 5as/h term), and selective recompute exists to avoid storing them; Megatron-LM
  // gained flash attention (--use-flash-attn) only in 2023.
  row.flash_attention = false;
  row.cluster = "dgx-a100";
  row.published = iteration_time_s;
  row.slow = slow;
  row.assumptions = "vocab 51200 (not in the paper's tables); unfused attention";
  if (virtual_stages > 1) row.assumptions += "; interleaving from the Calculon config";
  return row;
}

// Korthikanti et al. 2022, Table 4 (section 6.2): the time one transformer layer of the 22B
// model (Table 3's configuration: tp 8, micro-batch 4, seq 2048, on one DGX A100) takes
// forward and backward, combined, in five settings: sequence parallelism on or off, and no,
// full or selective recomputation. It checks the layer itself (its GEMMs, attention,
// element-wise kernels and tensor-parallel collectives) apart from the pipeline and the
// data parallelism around it. Table 4's forward / backward columns are in
// docs/training-validation.md; the suite compares the combined one.
TrainingMeasurement korthikantiLayer(const char* id, bool sequence_parallel, const char* recompute,
                                     double milliseconds) {
  TrainingMeasurement row = korthikanti(id, "22B", 48, 6144, 64, 4, 8, 1, 1, sequence_parallel, milliseconds, false);
  row.source = kKorthikantiLayer;
  row.sequence_parallel = sequence_parallel;
  row.recompute = recompute;
  row.assumptions += "; fits: the whole 48-layer model, which the table's one layer need not fit";
  return row;
}

// NVIDIA/Megatron-LM README.md "Performance Benchmarking" and images/model_table.png
// (Megatron-Core r0.8.0, commit f2e5db40 / 937571cf, July 2024): weak scaling of GPT models
// on H100, seq 4096, vocab 131,072, distributed optimizer with --overlap-grad-reduce
// --overlap-param-gather, --tp-comm-overlap. The table's TFLOP/s are model FLOPs (its MFU
// column = TFLOP/s / 989 bf16 dense peak). Not published: the micro-batch size and the
// model chunks per stage, which the suite chooses as the fastest plan that fits
// (validate/unpublished_plan_choice.h; docs/training-validation.md change 35). Two things
// say they were not micro-batch 1 without interleaving: row 004's published step is shorter
// than its 4B fp32 gradients' reduce-scatter and bf16 parameters' all-gather over a 48-node
// rail ring (0.47 s at 50 GB/s per GPU) allow beside the 0.2 s of one micro-batch's
// passes; and the README's "pipeline-parallel communication (enabled by default)" overlap
// exists only in the interleaved schedule (Megatron-LM's arguments.py sets overlap_p2p_comm
// false without it). Assumed here:
// bf16 (the MFU column matches the bf16 peak, not fp8), no activation recomputation,
// sequence parallelism wherever tp > 1 (--tp-comm-overlap requires it), Megatron's default
// dropout (--attention-dropout 0.1 --hidden-dropout 0.1, inside the fused attention kernel
// and the bias-dropout-add fusions), untied input/output embeddings (the published
// parameter counts include both: 24 x 12 x 2048^2 + 2 x 131072 x 2048 = 1.74B for "1.7B").
// Fabric: a DGX H100 SuperPOD-style rail-optimized NDR InfiniBand fat tree (not published).
TrainingMeasurement mcore(const char* id, const char* model, int64_t layers, int64_t hidden, int64_t heads,
                          int64_t global_batch, int64_t tp, int64_t pp, int64_t dp, double model_tflops, bool slow) {
  TrainingMeasurement row;
  row.id = id;
  row.source = kMcore;
  row.model = model;
  row.layers = layers;
  row.hidden_size = hidden;
  row.attention_heads = heads;
  row.ffn_hidden_size = 4 * hidden;
  row.vocab_size = 131072;
  row.tied_embeddings = false;
  row.seq_len = 4096;
  row.global_batch_size = global_batch;
  row.micro_batch_published = false;
  row.precision = "bf16";
  row.gpus = tp * pp * dp;
  row.tp = tp;
  row.pp = pp;
  row.dp = dp;
  row.virtual_stages_published = false;
  row.sequence_parallel = tp > 1;
  row.recompute = "none";
  row.zero = 1;
  row.overlap_grad_reduce = true;
  row.overlap_param_gather = true;
  row.tp_comm_overlap = tp > 1;  // --tp-comm-overlap (needs sequence parallelism, so tp > 1)
  if (row.tp_comm_overlap) row.tp_comm_overlap_config = kTeOneDefaults;  // no --tp-comm-overlap-cfg
  row.flash_attention = true;  // Transformer Engine fused attention, Megatron-Core's default
  // dgx-h100 (one 256-GPU scalable unit) where the job fits in it, else the 16k-GPU SuperPOD
  // preset; both are the same node and fabric, cut down to gpus / 8 nodes.
  row.cluster = row.gpus <= 256 ? "dgx-h100" : "h100-superpod-16k";
  row.published = model_tflops;
  row.slow = slow;
  row.assumptions =
      "micro-batch and chunks: the fastest plan that fits; bf16, dropout 0.1, recompute none (not published)";
  return row;
}

// NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md and
// docs/performance-summary-archive.md, "Pre-Training Performance", System DGX-H100, NeMo
// containers 25.09, 25.11 and 26.02: Llama 3 pre-training in FP8 with current scaling
// ("FP8-CS"; the 25.09 table names no precision, and its footnote's H100 quantization
// granularity and its TFLOP/s figures are FP8's), every plan setting published (GBS, MBS,
// sequence length, FSDP, TP, PP, CP, VP). Published Tokens / sec / GPU is compared: the pages'
// "Model TFLOP / sec / GPU" counts causal attention at half its FLOPs (744 / 14,451 = 51.5
// GFLOP per token for Llama 3 8B at 8,192), this suite's model FLOPs count it in full (57.9).
// Assumed, not published: the recipes' overlaps (distributed optimizer with overlapped
// gradient reduce and parameter gather; tp_comm_overlap wherever tp > 1, which needs sequence
// parallelism), no activation recomputation, no dropout (llama), Megatron-FSDP as ZeRO-3
// (`zero: 3`, FSDP sharding over every data-parallel GPU) for the FSDP row. Set by the
// recipes: bf16 main gradients (scripts/performance/configs/llama/llama3_llm_pretrain.py and
// llama31_llm_pretrain.py: `cfg.ddp.grad_reduce_in_fp32 = False`) and Transformer Engine's
// fused cross-entropy (the Llama 3 / 3.1 recipes' `cross_entropy_loss_fusion = True` and
// scripts/performance/configs/llama*/*.yaml `cross_entropy_fusion_impl: "te"`).
TrainingMeasurement bridge(const char* id, const char* model, int64_t layers, int64_t hidden, int64_t ffn,
                           int64_t heads, int64_t gpus, int64_t global_batch, bool fsdp, int64_t tp, int64_t pp,
                           int64_t cp, int64_t virtual_stages, double tokens_per_s_per_gpu) {
  TrainingMeasurement row;
  row.id = id;
  row.source = kBridge;
  row.model = model;
  row.architecture = "llama";
  row.kv_heads = 8;  // Llama 3 8B / 70B / 405B: grouped-query attention with 8 key/value heads
  row.layers = layers;
  row.hidden_size = hidden;
  row.ffn_hidden_size = ffn;
  row.attention_heads = heads;
  row.vocab_size = 128256;
  row.tied_embeddings = false;
  row.seq_len = 8192;
  row.global_batch_size = global_batch;
  row.micro_batch_size = 1;
  row.precision = "fp8";
  row.grad_reduce_precision = "bf16";
  // FP8 weights (scripts/performance/utils/precision.py: "fp8_cs" is mixed_precision.py's
  // bf16_with_fp8_current_scaling_mixed, which sets fp8_param_gather = True).
  row.fp8_param_gather = true;
  row.fp8_recipe = "current";
  row.gpus = gpus;
  row.tp = tp;
  row.pp = pp;
  row.cp = cp;
  row.dp = gpus / (tp * pp * cp);
  row.virtual_stages = virtual_stages;
  if (layers % (pp * virtual_stages) != 0) {
    // Llama 3.1 405B's 126 layers on pp x vp = 64 chunks: the recipes count the embedding and
    // the loss as a layer each (--account-for-embedding-in-pipeline-split,
    // --account-for-loss-in-pipeline-split), so the first and the last stage hold one layer fewer.
    const int64_t per_stage = (layers + 2) / pp;
    row.first_stage_layers = per_stage - 1;
    row.last_stage_layers = per_stage - 1;
  }
  row.sequence_parallel = tp > 1;
  row.recompute = "none";
  row.zero = fsdp ? 3 : 1;
  row.overlap_grad_reduce = true;
  row.overlap_param_gather = true;
  row.tp_comm_overlap = tp > 1;
  if (row.tp_comm_overlap) row.tp_comm_overlap_config = hidden == 8192 ? kLlama70bFp8Preset : kLlama405bFp8Preset;
  row.flash_attention = true;
  row.fused_cross_entropy = true;
  row.cluster = "dgx-h100";
  row.published = tokens_per_s_per_gpu;
  row.slow = false;
  row.assumptions = "fp8 current scaling, recipe overlaps, recompute none (not in the table)";
  return row;
}

// The same Megatron-Bridge pages' DGX-B200 and DGX-GB200 tables (NeMo 25.09, 25.11 and
// 26.02), Llama 3 in FP8 with current scaling, the rows whose plan the model expresses:
// Llama 3 8B on 8 GPUs (micro-batch 2, data-parallel with the distributed optimizer, no
// FSDP) and Llama 3.1 405B on 128 B200 (tp 4, pp 8, cp 2, vp 8) and on 256 GB200 (tp 4, pp 16,
// vp 4). Settings from the recipes (scripts/performance/configs/llama*/ workload base configs
// and llama3*_llm_pretrain.py of those releases; utils/executors.py): no recomputation or
// offloading on these rows, bf16 main gradients, fp8 parameter gather, TE fused
// cross-entropy, the 405B pipeline split counting the embedding and the loss as a layer each,
// the 405B userbuffers preset for B200 (kLlama405bBlackwellFp8Preset, also on GB200 at cp 1),
// NCCL_NVLS_ENABLE=0. GB200 runs 4 GPUs per compute tray, packed 16 trays to an NVLink domain
// by Slurm segment; the model fills each 72-GPU rack. Left out: the GB200 Llama 3 70B rows
// (Megatron-FSDP with 40 layers' activations offloaded to the Grace CPU, not modelled) and
// 25.09's GB200 405B row (FSDP with 95 layers offloaded). Not modelled: the 8B recipes'
// full-iteration CUDA graphs (launch overhead is charged per kernel as elsewhere).
TrainingMeasurement bridgeBlackwell(const char* id, const char* model, const char* cluster, int64_t layers,
                                    int64_t hidden, int64_t ffn, int64_t heads, int64_t gpus, int64_t global_batch,
                                    int64_t micro_batch, int64_t tp, int64_t pp, int64_t cp, int64_t virtual_stages,
                                    double tokens_per_s_per_gpu) {
  TrainingMeasurement row = bridge(id, model, layers, hidden, ffn, heads, gpus, global_batch, false, tp, pp, cp,
                                   virtual_stages, tokens_per_s_per_gpu);
  row.source = kBridgeBlackwell;
  row.cluster = cluster;
  row.micro_batch_size = micro_batch;
  if (row.tp_comm_overlap) row.tp_comm_overlap_config = kLlama405bBlackwellFp8Preset;
  row.assumptions = "fp8 current scaling, the recipes' overlaps; GB200 ranks fill 72-GPU racks";
  return row;
}

// NVIDIA/dgxc-benchmarking (DGX Cloud Benchmarking recipes, collection 25.01, commit
// 143b90dd91f9be958fed4773ae95d941a3356a82): measured "Training step time (seconds per step)"
// on DGX H100 (8 x H100 80GB, 8 x 400 Gb/s InfiniBand per node) in BF16 and in FP8, each
// model at the smallest full-size scale of its table: llama3.1/README_8b.md, README_70b.md and
// README_405b.md (NeMo 24.09, Megatron-Core 0.9, Transformer Engine 1.10) and
// nemo_megatron/README_175b.md (GPT-3 175B, NeMo 24.05). The same plan runs in both
// precisions, so each pair also measures what FP8 buys.
// From the recipes (llama3.1/configure.sh and launch.sh, nemo_megatron/gpt3_175b_hydra.yaml):
// sequence length, layers, TP / PP / CP / VP, micro-batch 1, global batch; the distributed
// optimizer (ZeRO-1) with overlapped gradient reduce-scatter and parameter all-gather in bf16
// (grad_sync_dtype bf16); sequence parallelism and Transformer Engine's userbuffers overlap
// (ub_tp_comm_overlap) wherever tp > 1; no activation recomputation; fused attention. FP8 is
// Transformer Engine's delayed scaling (fp8_hybrid). Llama 3.1 405B runs the GPT-2 tokenizer as a
// proxy (README_405b.md): 50,257 tokens padded to 51,200 (make_vocab_size_divisible_by
// 128 x tp 8), and 16 query groups (the README's FLOP formula, 16/128). GPT-3 175B: vocab
// 51,200, tied embeddings, dropout 0.1 (the hydra config). Assumed, not published: the loss
// as Megatron's unfused vocab-parallel cross-entropy.
TrainingMeasurement dgxc(const char* id, const char* model, const char* architecture, int64_t layers, int64_t hidden,
                         int64_t ffn, int64_t heads, int64_t kv_heads, int64_t vocab, int64_t seq, int64_t gpus,
                         int64_t global_batch, int64_t tp, int64_t pp, int64_t cp, int64_t virtual_stages,
                         const char* precision, double step_seconds) {
  TrainingMeasurement row;
  row.id = id;
  row.source = kDgxc;
  row.model = model;
  row.architecture = architecture;
  row.kv_heads = kv_heads;
  row.layers = layers;
  row.hidden_size = hidden;
  row.ffn_hidden_size = ffn;
  row.attention_heads = heads;
  row.vocab_size = vocab;
  row.tied_embeddings = row.architecture == "gpt";
  row.seq_len = seq;
  row.global_batch_size = global_batch;
  row.micro_batch_size = 1;
  row.precision = precision;
  if (row.precision == "fp8") row.fp8_recipe = "delayed";  // fp8_hybrid: Transformer Engine's DelayedScaling
  row.grad_reduce_precision = "bf16";
  row.gpus = gpus;
  row.tp = tp;
  row.pp = pp;
  row.cp = cp;
  row.dp = gpus / (tp * pp * cp);
  row.virtual_stages = virtual_stages;
  row.sequence_parallel = tp > 1;
  row.recompute = "none";
  row.zero = 1;
  row.overlap_grad_reduce = true;
  row.overlap_param_gather = true;
  row.tp_comm_overlap = tp > 1;
  if (row.tp_comm_overlap) {
    row.tp_comm_overlap_config = hidden == 12288   ? kGpt3DgxcPreset
                                 : hidden == 8192  ? kLlama70bBf16Preset
                                 : hidden == 16384 ? kLlama405bBf16Preset
                                                   : kTeOneDefaults;
  }
  row.flash_attention = true;
  row.fused_cross_entropy = false;
  row.cluster = "dgx-h100";
  row.published = step_seconds;
  row.slow = false;
  row.assumptions = "unfused cross-entropy";
  return row;
}

// Nemotron-4 15B and 340B from the same collection (nemotron/README_15b.md, README_340b.md,
// NeMo 24.09; settings from nemotron/configure.sh and nemotron4-{15b,340b}-synth.yaml): squared-ReLU
// MLP of 4 x hidden, LayerNorm, RoPE, 8 query groups, untied embeddings, vocab 256,000, no
// dropout, fused cross-entropy (cross_entropy_loss_fusion), sequence parallelism and userbuffers
// overlap (ub_tp_comm_overlap=True). 15B: tp 4, micro-batch 4, no recomputation. 340B: tp 8,
// pp 8, vp 12, micro-batch 1, selective recomputation (activations_checkpoint_granularity),
// overlap_p2p_comm. Modelled as architecture gpt without dropout: squared ReLU costs what GELU
// does (one elementwise pass), and the model's learned-position add stands in for RoPE on half
// of each head (rotary_percentage 0.5); both are elementwise passes under 1% of a layer.
// Optimizer: 15B, mcore_distributed_optim with no grad_sync_dtype, which NeMo reads as fp32
// main gradients (grad_reduce_in_fp32); 340B, distributed_fused_adam with bf16 states and
// gradients (optim.dtype bf16, grad_sync_dtype bf16).
TrainingMeasurement nemotron4(const char* id, const char* model, int64_t layers, int64_t hidden, int64_t heads,
                              int64_t gpus, int64_t global_batch, int64_t micro_batch, int64_t tp, int64_t pp,
                              int64_t virtual_stages, const char* recompute, const char* optimizer_states,
                              const char* grad_reduce, const char* precision, double step_seconds) {
  TrainingMeasurement row = dgxc(id, model, "gpt", layers, hidden, 4 * hidden, heads, 8, 256000, 4096, gpus,
                                 global_batch, tp, pp, 1, virtual_stages, precision, step_seconds);
  row.tied_embeddings = false;
  row.dropout = 0.0;
  row.micro_batch_size = micro_batch;
  row.recompute = recompute;
  row.fused_cross_entropy = true;
  row.optimizer_state_precision = optimizer_states;
  row.grad_reduce_precision = grad_reduce;
  row.assumptions = "squared ReLU as GELU, RoPE as a learned-position add";
  return row;
}

// NVIDIA's MLPerf Training closed-division submissions, NeMo with Transformer Engine FP8, every
// setting from the submission's config_*.sh and yaml files and every step time from its
// result_N.txt MLLOG lines: the wall time between a block_start and its block_stop (no
// evaluation inside) over the steps in the block (GPT-3), or between per-step tracked_stats
// lines of one block (Llama 3.1), averaged over the submission's runs. MLPerf reports time to
// train; these are the steady step times inside it.
//  - GPT-3 175B on DGX H100 (Eos): mlcommons/training_results_v3.1 (commit f33f9444, NeMo
//    23.09) and mlcommons/training_results_v4.0 (commit 62f111b7, NeMo 24.04): 96 layers,
//    hidden 12,288, 96 heads, sequence 2,048, no dropout, tied embeddings, sequence
//    parallelism, userbuffers overlap, the distributed optimizer with overlapped bf16 gradient
//    reduce-scatter and parameter all-gather (optim distributed_fused_adam: grad_sync_dtype bf16,
//    overlap_grad_sync / overlap_param_sync), fused attention, FP8 (fp8_hybrid, delayed scaling).
//    v3.1 runs micro-batch 1 with 12 model chunks (conf/custom.yaml's default), v4.0 at 64
//    nodes micro-batch 2 with 4 (config_DGXH100_64x8x128x4x8_mbs2.sh; its log records global
//    batch 2,304, 72 accumulation steps).
// Assumed, not in the stored files (config_common.sh is not stored in any round): no
// activation recomputation (conf/custom.yaml's default), the vocabulary (a C4 SentencePiece
// model whose size no file states; 51,200 as GPT-3's padded vocabulary), Megatron's unfused
// cross-entropy, and Megatron-Core's default gradient bucket.
//  - GPT-3 175B on 8 DGX B200 (MLPerf Training v4.1 preview, swsok/training_results_v4.1, a
//    copy of the round's results at commit 8821c703, b200_n8_preview_nemo,
//    config_DGXB200_8x8x1024x4x8_mbs2_cg.sh): tp 4, pp 8, vp 6, micro-batch 2, global batch
//    2,048, the b100tp4mbs2 userbuffers file, FP8; as the H100 rows otherwise. Not modelled:
//    per-layer CUDA graphs.
// FP8 parameters (fp8_param_gather) on every row: FP8_PARAMS=True in the B200 round's
// config_common.sh; for the H100 rounds, whose config_common.sh is not stored, in the copy of
// the v4.0 file in a fork of the results (henrique/training_results_v4.0, commit c7a8e8f8).
TrainingMeasurement mlperfGpt3(const char* id, const char* model, const char* source, const char* cluster, int64_t gpus,
                               int64_t global_batch, int64_t micro_batch, int64_t virtual_stages, const char* preset,
                               double step_seconds, bool slow) {
  TrainingMeasurement row = dgxc(id, model, "gpt", 96, 12288, 49152, 96, 0, 51200, 2048, gpus, global_batch, 4, 8, 1,
                                 virtual_stages, "fp8", step_seconds);
  row.source = source;
  row.cluster = cluster;
  row.dropout = 0.0;
  row.micro_batch_size = micro_batch;
  row.tp_comm_overlap_config = preset;
  row.fp8_param_gather = true;  // FP8_PARAMS=True (config_common.sh)
  row.slow = slow;
  row.assumptions = "no recomputation, vocab 51,200, unfused cross-entropy";
  return row;
}

// Llama 3.1 on DGX GB200 (Tyche, NVL72 racks), MLPerf Training v5.0 (prishajain1/training_results_v5.0,
// a copy of the round's results at commit 0fdc28f0; NeMo 25.04) and v5.1 (mlcommons/training_results_v5.1
// commit 4da2d1cd, NeMo 25.09): the runs whose precision is FP8, not the "_fp4" configurations.
//  - 405B (llama31_405b/.../config_GB200_64x4x112xtp4pp8cp2_cg.sh and _128x4x112x..._cg_dplast.sh):
//    tp 4, pp 8, vp 8, cp 2, micro-batch 1, global batch 112 x dp, the embedding and the loss
//    each counted as a layer of the pipeline split (ASYM_PP_EMBED / ASYM_PP_LOSS: 15 + 6 x 16 +
//    15), userbuffers overlap, the distributed optimizer with both overlaps, FP8 delayed scaling
//    (config_common_blackwell.sh). The benchmark's tokenizer is Mixtral 8x22B's, 32,768 tokens
//    (mlcommons/training large_language_model/nemo/README.md). FP8 parameters
//    (FP8_PARAM_GATHER=True, config_common.sh). Not modelled: full-iteration CUDA
//    graphs. Assumed: the userbuffers settings of Megatron-Bridge's
//    Blackwell 405B preset (the round's files do not store them), bf16 gradient reduction.
//  - 8B, 72 GPUs (tyche_ngpu72, config_GB200_18x4x1xtp1pp1cp2_8b.sh, not stored: tp 1, cp 2 from
//    its name; global batch 36 and one accumulation step from the log, so micro-batch 1): FP8
//    tensorwise (current) scaling per the shared config_common.sh, vocabulary 128,256 (the
//    reference downloads the Llama 3.1 tokenizer, small_llm_pretraining/nemo/utils/download_hf_llama3.sh).
TrainingMeasurement mlperfLlama(const char* id, const char* model, int64_t layers, int64_t hidden, int64_t ffn,
                                int64_t heads, int64_t vocab, int64_t gpus, int64_t global_batch, int64_t tp,
                                int64_t pp, int64_t cp, int64_t virtual_stages, double step_seconds) {
  TrainingMeasurement row = bridgeBlackwell(id, model, "dgx-gb200", layers, hidden, ffn, heads, gpus, global_batch, 1,
                                            tp, pp, cp, virtual_stages, 0.0);
  row.source = kMlperfBlackwell;
  row.vocab_size = vocab;
  row.sequence_parallel = tp > 1;
  row.published = step_seconds;
  // FP8_RECIPE: "delayed" for the v5.0 405B runs (config_common_blackwell.sh), "tensorwise"
  // (current) for the v5.1 8B ones (config_common.sh).
  row.fp8_recipe = tp > 1 ? "delayed" : "current";
  row.assumptions = tp > 1 ? "the Bridge Blackwell 405B userbuffers preset; bf16 gradient reduction"
                           : "parallelism from the config's name; bf16 gradient reduction";
  return row;
}

// NeMo's long-sequence tables (NVIDIA/NeMo docs/source/performance/performance_long_sequence.md,
// commit 9421f21a): pre-training with context parallelism from 4K to 1M tokens per sequence,
// FP8, one table per GPU, every row 4M tokens (global batch x sequence) per step:
//  - Llama 3 8B on DGX B200, NeMo 25.04.rc2: 8K-1M tokens on 2-256 GPUs. The table's "# of
//    GPUs" column repeats the sequence length in K there; the GPUs are TP x PP x DP x CP, as a
//    later revision of the page writes them.
//  - Llama 2 7B on DGX H100, NeMo 24.03.01: 4K-1M tokens on 4-1,024 GPUs.
// TFLOP/s per GPU by NeMo's llama2 / llama3 formulas (nemo/utils/flops_formulas.py), which
// count causal attention in full as this suite does. The page gives sequence length, global
// batch, TP / PP / DP / CP and precision. Settings from the recipes' defaults (NeMo-Framework-
// Launcher conf/training/llama/llama2_7b.yaml for 24.03; NeMo 2.0's llama3_8b recipes for
// 25.04): micro-batch 1, no recomputation, the distributed optimizer with overlapped gradient
// reduce-scatter and parameter all-gather, sequence parallelism where tp > 1 without
// userbuffers overlap (ub_tp_comm_overlap false), flash attention, fused cross-entropy.
TrainingMeasurement nemoLongContext(const char* id, const char* model, int64_t seq_k, int64_t global_batch, int64_t tp,
                                    int64_t pp, int64_t dp, int64_t cp, double tflops_per_gpu) {
  const bool b200 = std::string_view(model).starts_with("B200");
  const int64_t gpus = tp * pp * dp * cp;
  TrainingMeasurement row = b200 ? dgxc(id, model, "llama", 32, 4096, 14336, 32, 8, 128256, seq_k * 1024, gpus,
                                        global_batch, tp, pp, cp, 1, "fp8", tflops_per_gpu)
                                 : dgxc(id, model, "llama", 32, 4096, 11008, 32, 32, 32000, seq_k * 1024, gpus,
                                        global_batch, tp, pp, cp, 1, "fp8", tflops_per_gpu);
  row.source = kNemoLongContext;
  row.cluster = b200 ? "dgx-b200" : "dgx-h100";
  row.tied_embeddings = false;
  row.tp_comm_overlap = false;
  row.tp_comm_overlap_config.clear();
  row.fused_cross_entropy = true;
  row.assumptions = "micro-batch 1, no recomputation, no userbuffers overlap; fp8 delayed scaling";
  return row;
}

// NVIDIA/NeMo docs/source/performance/performance_summary.md (commit 070a0bb1), "Pretraining":
// NeMo 24.07 on DGX-H100 in FP8, tokens per second per GPU for twelve plans, every plan
// setting published (GPUs, global and micro-batch, sequence length, TP / PP / CP / VP). The
// rest comes from the NeMo-Framework-Launcher recipes of that era (launcher_scripts/conf/
// training/, the stored versions that carry the 2024 settings: Megatron-Core models, the
// tp_overlap defaults entry), one family at a time:
//  - GPT-3 5B / 20B / 175B: gpt3/5b.yaml and 20b.yaml (commit f4761e62), gpt3/175b.yaml
//    (commit 6c9e5c0d): LayerNorm, GELU MLP of 4 x hidden, learned positions, tied embeddings,
//    dropout 0 (hidden_dropout, attention_dropout 0.0), no recomputation
//    (activations_checkpoint_granularity null), sequence parallelism at tp > 1, the
//    distributed optimizer (distributed_fused_adam with overlap_grad_sync / overlap_param_sync),
//    no cross_entropy_loss_fusion. Vocabulary 51,200 as the DGX Cloud and MLPerf GPT-3 rows
//    (GPT-2's 50,257 padded), which the published TFLOP/s agree with.
//  - Llama 2 7B / 13B / 70B: llama/llama2_7b.yaml (commit 064e6769), llama2_13b.yaml and
//    llama2_70b.yaml (commit 0446d2c0): RMSNorm, SwiGLU, RoPE, untied embeddings, no dropout,
//    grouped-query attention with 8 groups for 70B (num_query_groups 8; 7B and 13B
//    multi-head), vocabulary 32,000 padded to 128 x tp (32,256 at tp 4), no recomputation,
//    sequence parallelism at tp > 1, distributed_fused_adam with both overlaps; fused
//    cross-entropy in the 7B recipe only (cross_entropy_loss_fusion).
//  - Llama 3 8B / 70B: llama/llama3_8b.yaml (commit 157ea78b) and llama3_70b.yaml (commit
//    b2985242): as Llama 2 with 8 query groups, vocabulary 128,256 (128,512 padded at tp 4),
//    context parallelism 2, no cross_entropy_loss_fusion.
//  - Nemotron 8B / 22B (Nemotron-3) and 340B (Nemotron-4): nemotron/nemotron_8b.yaml (commit
//    329df4af), nemotron_22b.yaml (commit 3dd35614), nemotron_340b.yaml (commit 3be81fc1, the
//    version with the table's tp 8, pp 8, vp 12): squared-ReLU MLP of 4 x hidden, LayerNorm
//    (layernorm1p), RoPE on half of each head, untied embeddings, no dropout, vocabulary 256,000
//    (the table's model TFLOP/s match it), multi-head attention for 8B and 22B
//    (num_query_groups null: 32 and 48 key/value heads, which the table's TFLOP/s also
//    match) and 8 query groups for 340B, no recomputation, sequence parallelism, fused
//    cross-entropy. Optimizer: 8B distributed_fused_adam, 22B and 340B mcore_distributed_optim,
//    340B with bf16 states (optim.dtype bf16). Modelled as nemotron4() does: architecture gpt
//    without dropout.
// Gradients: the stored recipes set no grad_sync_dtype but 340B's (bf16), which NeMo reads as
// fp32 gradient buffers and reduce-scatters; with those the GPT-3 20B, GPT-3 175B on 512 GPUs
// and Llama 3 8B plans do not fit in 80 GB, so every row reduces bf16 gradients, as the DGX
// Cloud recipes of NeMo 24.05 / 24.09 set (grad_sync_dtype bf16; dgxc-benchmarking CHANGELOG
// v24.05, "Add grad_sync_dtype to config"). On the rows that fit either way the choice moves
// the prediction by 0.3-1.4%.
// Userbuffers (ub_tp_comm_overlap) wherever tp > 1, with the launcher's file for the plan where
// one is stored (GPT-3 20B and 175B, Llama 2 70B, and Llama 3 70B's
// ub_cfg_h100_h8192_tp4_mbs1_seqlen8192.yaml, commit a3f31000, which is kLlama70bBf16Preset);
// Nemotron's recipes name no file and none is stored for their shapes, so Transformer Engine
// 1.x's defaults, as the DGX Cloud Nemotron-4 rows. Assumed as the DGX Cloud rows: flash
// attention (TE fused attention), FP8 delayed scaling (fp8_hybrid).
// The recipes' ub setting is off in the stored Llama 2 70B version although its default
// names the plan's file; the row assumes the performance run turned it on, as every other
// tp > 1 plan of the table.
TrainingMeasurement nemoSummary(const char* id, const char* model, std::string_view family, int64_t layers,
                                int64_t hidden, int64_t ffn, int64_t heads, int64_t kv_heads, int64_t vocab,
                                int64_t seq, int64_t gpus, int64_t global_batch, int64_t micro_batch, int64_t tp,
                                int64_t pp, int64_t cp, int64_t virtual_stages, const char* optimizer_states,
                                const char* grad_reduce, bool fused_cross_entropy, const char* preset,
                                double tokens_per_s_per_gpu) {
  const bool llama = family == "llama";
  TrainingMeasurement row = dgxc(id, model, llama ? "llama" : "gpt", layers, hidden, ffn, heads, kv_heads, vocab, seq,
                                 gpus, global_batch, tp, pp, cp, virtual_stages, "fp8", tokens_per_s_per_gpu);
  row.source = kNemoSummary;
  row.tied_embeddings = family == "gpt3";
  if (!llama) row.dropout = 0.0;
  row.micro_batch_size = micro_batch;
  row.optimizer_state_precision = optimizer_states;
  row.grad_reduce_precision = grad_reduce;
  row.fused_cross_entropy = fused_cross_entropy;
  row.tp_comm_overlap = tp > 1;
  row.tp_comm_overlap_config = row.tp_comm_overlap ? preset : "";
  row.assumptions = "bf16 gradient reduction";
  if (family == "nemotron") {
    row.assumptions = "squared ReLU as GELU, RoPE as a learned-position add; " + row.assumptions;
  }
  if (row.tp_comm_overlap && std::string_view(preset) == kTeOneDefaults) {
    row.assumptions += "; Transformer Engine 1.x userbuffers defaults (no ub file for the shape)";
  }
  return row;
}

}  // namespace

std::string_view trainingMetricName(TrainingMetric metric) {
  switch (metric) {
    case TrainingMetric::kHardwareTflopsPerGpu: return "hardware_tflops_per_gpu";
    case TrainingMetric::kModelTflopsPerGpu: return "tflops_per_gpu";
    case TrainingMetric::kIterationTime: return "iteration_time_s";
    case TrainingMetric::kTokensPerSecondPerGpu: return "tokens_per_s_per_gpu";
    case TrainingMetric::kLayerTime: return "layer_time_ms";
  }
  return "?";
}

std::string_view trainingMetricUnit(TrainingMetric metric) {
  switch (metric) {
    case TrainingMetric::kIterationTime: return "s";
    case TrainingMetric::kTokensPerSecondPerGpu: return "tokens/s";
    case TrainingMetric::kLayerTime: return "ms";
    default: return "TFLOP/s";
  }
}

const std::vector<TrainingSource>& trainingSources() {
  static const std::vector<TrainingSource> sources = {
      {kSc21, "Megatron-LM SC21 Table 1 (A100)",
       "Narayanan et al., SC21, arXiv:2104.04473, Table 1; configurations from NVIDIA/Megatron-LM "
       "examples/academic_paper_scripts/sc21/run_table_1.sh",
       TrainingMetric::kHardwareTflopsPerGpu,
       "TFLOP/s per GPU with the SC21 formula, which counts the recomputed forward pass (hardware FLOPs)"},
      {kKorthikanti, "Korthikanti et al. 2022 Table 5 (A100)",
       "Korthikanti et al., arXiv:2205.05198 (MLSys 2023), Tables 3 and 5, as transcribed in calculon-ai/calculon "
       "validation/seqsel/tab5; DP = 1 per NVIDIA/Megatron-LM README (May 2022)",
       TrainingMetric::kIterationTime, "seconds per iteration"},
      {kKorthikantiLayer, "Korthikanti et al. 2022 Table 4, one layer of 22B (A100)",
       "Korthikanti et al., arXiv:2205.05198 (MLSys 2023), Table 4 (section 6.2, 'Execution Time per Layer') and "
       "Table 3 (the 22B configuration)",
       TrainingMetric::kLayerTime, "milliseconds per transformer layer, forward and backward combined"},
      {kMcore, "Megatron-Core r0.8.0 weak scaling (H100)",
       "NVIDIA/Megatron-LM README.md 'Performance Benchmarking', images/model_table.png (July 2024)",
       TrainingMetric::kModelTflopsPerGpu, "TFLOP/s per GPU of model FLOPs (no recomputation counted)"},
      {kBridge, "Megatron-Bridge Llama 3 FP8 (H100)",
       "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md and performance-summary-archive.md, DGX-H100 "
       "pre-training tables of NeMo 25.09, 25.11 and 26.02",
       TrainingMetric::kTokensPerSecondPerGpu, "tokens per second per GPU"},
      {kDgxc, "DGX Cloud Benchmarking, NeMo 24.09 / 24.05 (H100)",
       "NVIDIA/dgxc-benchmarking commit 143b90dd (collection 25.01): llama3.1/README_8b.md, README_70b.md, "
       "README_405b.md and nemotron/README_15b.md, README_340b.md (NeMo 24.09) and nemo_megatron/README_175b.md "
       "(NeMo 24.05); settings from the recipes' configure.sh, launch.sh, gpt3_175b_hydra.yaml and "
       "nemotron4-*-synth.yaml",
       TrainingMetric::kIterationTime, "seconds per training step"},
      {kBridgeBlackwell, "Megatron-Bridge Llama 3 FP8 (B200, GB200)",
       "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md and performance-summary-archive.md, DGX-B200 and "
       "DGX-GB200 pre-training tables of NeMo 25.09, 25.11 and 26.02",
       TrainingMetric::kTokensPerSecondPerGpu, "tokens per second per GPU"},
      {kMlperfH100, "MLPerf Training GPT-3 175B, NVIDIA (H100)",
       "mlcommons/training_results_v3.1 (commit f33f9444) and training_results_v4.0 (commit 62f111b7): "
       "NVIDIA/results/eos*_nemo/gpt3/result_*.txt (step times) and NVIDIA/benchmarks/gpt3/implementations/pytorch "
       "config_DGXH100_*.sh, conf/custom.yaml, conf/tp_overlap/*.yaml (settings)",
       TrainingMetric::kIterationTime, "seconds per training step (steady state, no evaluation)"},
      {kMlperfBlackwell, "MLPerf Training, NVIDIA (B200, GB200)",
       "MLPerf Training v4.1 GPT-3 175B on 8 DGX B200 (swsok/training_results_v4.1, commit 8821c703), v5.0 Llama "
       "3.1 405B on GB200 NVL72 (prishajain1/training_results_v5.0, commit 0fdc28f0), v5.1 Llama 3.1 8B on GB200 "
       "(mlcommons/training_results_v5.1, commit 4da2d1cd): NVIDIA/results/*/result_*.txt and the submissions' "
       "config_*.sh",
       TrainingMetric::kIterationTime, "seconds per training step (steady state, no evaluation)"},
      {kNemoLongContext, "NeMo long-sequence context parallelism (H100, B200)",
       "NVIDIA/NeMo docs/source/performance/performance_long_sequence.md (commit 9421f21a): Llama 2 7B FP8 on "
       "DGX H100 (NeMo 24.03.01) and Llama 3 8B FP8 on DGX B200 (NeMo 25.04.rc2), 4K-1M tokens per sequence",
       TrainingMetric::kModelTflopsPerGpu,
       "TFLOP/s per GPU of model FLOPs (NeMo's formulas: causal attention counted in full, no recomputation)"},
      {kNemoSummary, "NeMo 24.07 performance summary, FP8 (H100)",
       "NVIDIA/NeMo docs/source/performance/performance_summary.md (commit 070a0bb1), Pretraining table: NeMo "
       "24.07, DGX-H100, FP8; settings from NVIDIA/NeMo-Framework-Launcher launcher_scripts/conf/training/"
       "{gpt3,llama,nemotron}/*.yaml and tp_overlap/ub_cfg_h100_*.yaml",
       TrainingMetric::kTokensPerSecondPerGpu, "tokens per second per GPU"},
  };
  return sources;
}

const TrainingSource& trainingSource(std::string_view id) {
  for (const auto& source : trainingSources()) {
    if (source.id == id) return source;
  }
  throw std::out_of_range("no training source " + std::string(id));
}

// `slow` marks the rows that take more than about 15 s each to simulate on the 2-core build
// machine (RelWithDebInfo, one thread): megatron-sc21-t1-009 (2,520 GPUs, 280 micro-batches x
// 3 chunks) 49-58 s and 1.8 GB, megatron-sc21-t1-010 (3,072 GPUs, 512 micro-batches) 21-32 s,
// the two largest MLPerf GPT-3 rows, mlperf-h100-gpt3-004 (4,096 GPUs) 14-15 s and -005
// (10,752 GPUs) 19-24 s, and the two largest Megatron-Core rows at the interleaved plans the
// suite chooses for them, mcore-h100-weak-008 (3,072 GPUs, 12 chunks) 21 s and -009 (6,144
// GPUs, 7 chunks x 64 micro-batches) 47 s. Without them the suite runs in about 70 s, with
// them about 3 minutes; the next slowest rows, megatron-sc21-t1-008 and mlperf-blackwell-003 (512 GB200,
// 18 M tasks), take 9-16 s. Wall times per row are in docs/training-validation.md.
//
// Rows of training.yaml that cannot be expressed as an experiment, and are left out:
//  - mcore-h100-weak-010, mcore-h100-weak-011 (Megatron-Core strong scaling of "slightly
//    more than 175B" GPT at 96 and 4,608 H100s): only the MFU end points are published; the
//    architecture, TP/PP/DP and micro-batch size of those runs are not.
const std::vector<TrainingMeasurement>& trainingMeasurements() {
  // clang-format off
  static const std::vector<TrainingMeasurement> rows = {
      //   id                      model          layers hidden heads  gbs mbs tp  pp  dp  vs  torch DDP  TFLOP/s slow
      sc21("megatron-sc21-t1-001", "GPT 1.7B",       24,  2304,  24,  512, 16, 1,  1, 32, 1, true,      137, false),
      sc21("megatron-sc21-t1-002", "GPT 3.6B",       30,  3072,  32,  512, 16, 2,  1, 32, 1, true,      138, false),
      sc21("megatron-sc21-t1-003", "GPT 7.5B",       36,  4096,  32,  512, 16, 4,  1, 32, 1, true,      142, false),
      sc21("megatron-sc21-t1-004", "GPT 18.4B",      40,  6144,  48, 1024,  8, 8,  1, 32, 1, true,      135, false),
      sc21("megatron-sc21-t1-005", "GPT 39.1B",      48,  8192,  64, 1536,  4, 8,  2, 32, 1, false,     138, false),
      sc21("megatron-sc21-t1-006", "GPT 76.1B",      60, 10240,  80, 1792,  2, 8,  4, 32, 3, false,     140, false),
      sc21("megatron-sc21-t1-007", "GPT 145.6B",     80, 12288,  96, 2304,  2, 8,  8, 24, 2, false,     148, false),
      sc21("megatron-sc21-t1-008", "GPT 310.1B",     96, 16384, 128, 2160,  1, 8, 16, 15, 2, false,     155, false),
      sc21("megatron-sc21-t1-009", "GPT 529.6B",    105, 20480, 128, 2520,  1, 8, 35,  9, 3, false,     163, true),
      sc21("megatron-sc21-t1-010", "GPT 1008.0B",   128, 25600, 160, 3072,  1, 8, 64,  6, 1, false,     163, true),
      //          id                      model          layers hidden heads gbs tp  pp  vs  selective  time (s) slow
      korthikanti("korthikanti-2022-001", "22B",            48,  6144,  64,   4, 8,  1, 1, false,     1.42,  false),
      korthikanti("korthikanti-2022-002", "22B",            48,  6144,  64,   4, 8,  1, 1, true,      1.10,  false),
      korthikanti("korthikanti-2022-003", "GPT-3 175B",     96, 12288,  96,  64, 8,  8, 3, false,    18.13,  false),
      korthikanti("korthikanti-2022-004", "GPT-3 175B",     96, 12288,  96,  64, 8,  8, 3, true,     13.75,  false),
      korthikanti("korthikanti-2022-005", "MT-NLG 530B",   105, 20480, 128, 280, 8, 35, 3, false,    49.05,  false),
      korthikanti("korthikanti-2022-006", "MT-NLG 530B",   105, 20480, 128, 280, 8, 35, 3, true,     37.83,  false),
      korthikanti("korthikanti-2022-007", "1T",            128, 25600, 160, 512, 8, 64, 1, false,    94.42,  false),
      korthikanti("korthikanti-2022-008", "1T",            128, 25600, 160, 512, 8, 64, 1, true,     71.49,  false),
      //               id                           SP     recompute    ms per layer
      korthikantiLayer("korthikanti-t4-001", false, "none",      19.6),
      korthikantiLayer("korthikanti-t4-002", true,  "none",      19.0),
      korthikantiLayer("korthikanti-t4-003", false, "full",      27.2),
      korthikantiLayer("korthikanti-t4-004", false, "selective", 20.9),
      korthikantiLayer("korthikanti-t4-005", true,  "selective", 20.3),
      //    id                     model       layers hidden heads  gbs  tp  pp  dp  TFLOP/s slow
      mcore("mcore-h100-weak-001", "GPT 1.7B",    24,  2048,  16,  192, 1,  1, 48, 408.8, false),
      mcore("mcore-h100-weak-002", "GPT 7.1B",    30,  4096,  32,  192, 2,  1, 48, 465.9, false),
      mcore("mcore-h100-weak-003", "GPT 16B",     32,  6144,  48,  192, 4,  1, 48, 489.1, false),
      mcore("mcore-h100-weak-004", "GPT 32B",     48,  7168,  56,  192, 8,  1, 48, 459.6, false),
      mcore("mcore-h100-weak-005", "GPT 70B",     84,  8192,  64,  384, 8,  2, 48, 419.7, false),
      mcore("mcore-h100-weak-006", "GPT 119B",    92, 10240,  80,  768, 8,  4, 48, 420.5, false),
      mcore("mcore-h100-weak-007", "GPT 177B",    96, 12288,  96, 1152, 8,  6, 48, 432.8, false),
      mcore("mcore-h100-weak-008", "GPT 314B",    96, 16384, 128, 1536, 8,  8, 48, 474.4, true),
      mcore("mcore-h100-weak-009", "GPT 462B",   112, 18432, 144, 3072, 8, 16, 48, 459.9, true),
      //     id                     model            layers hidden   ffn heads gpus   gbs  fsdp  tp pp cp vs tokens/s/GPU
      bridge("bridge-h100-fp8-001", "Llama 3 8B",       32,  4096, 14336,  32,    8,  128, true,  1, 1, 1, 1, 14079),  // 25.09
      bridge("bridge-h100-fp8-002", "Llama 3 70B",      80,  8192, 28672,  64,   64,  128, false, 4, 8, 1, 5,  1619),  // 25.09
      bridge("bridge-h100-fp8-003", "Llama 3.1 405B",  126, 16384, 53248, 128, 1024,  512, false, 8, 8, 2, 8,   302),  // 25.09
      bridge("bridge-h100-fp8-004", "Llama 3 8B",       32,  4096, 14336,  32,    8,  128, true,  1, 1, 1, 1, 14451),  // 25.11
      bridge("bridge-h100-fp8-005", "Llama 3 70B",      80,  8192, 28672,  64,   64,  128, false, 4, 8, 1, 5,  1602),  // 25.11
      bridge("bridge-h100-fp8-006", "Llama 3.1 405B",  126, 16384, 53248, 128, 1024,  512, false, 8, 8, 2, 8,   292),  // 25.11
      bridge("bridge-h100-fp8-007", "Llama 3 70B",      80,  8192, 28672,  64,   64,  256, false, 4, 8, 1, 5,  1621),  // 26.02
      bridge("bridge-h100-fp8-008", "Llama 3.1 405B",  126, 16384, 53248, 128, 1024, 1536, false, 8, 8, 2, 8,   311),  // 26.02
      //   id                   model             arch     layers hidden   ffn heads kv  vocab    seq gpus  gbs tp pp cp vs  precision  s/step
      dgxc("dgxc-h100-001", "Llama 3.1 8B",   "llama",  32,  4096, 14336,  32,  8, 128256, 8192,   8, 128, 1, 1, 2, 1, "bf16", 12.91),
      dgxc("dgxc-h100-002", "Llama 3.1 8B",   "llama",  32,  4096, 14336,  32,  8, 128256, 8192,   8, 128, 1, 1, 2, 1, "fp8",   9.67),
      dgxc("dgxc-h100-003", "Llama 3.1 70B",  "llama",  80,  8192, 28672,  64,  8, 128256, 8192,  64, 128, 4, 4, 2, 5, "bf16", 14.72),
      dgxc("dgxc-h100-004", "Llama 3.1 70B",  "llama",  80,  8192, 28672,  64,  8, 128256, 8192,  64, 128, 4, 4, 2, 5, "fp8",  11.01),
      dgxc("dgxc-h100-005", "Llama 3.1 405B", "llama", 126, 16384, 53248, 128, 16,  51200, 8192, 576, 252, 8, 9, 2, 7, "bf16", 17.20),
      dgxc("dgxc-h100-006", "Llama 3.1 405B", "llama", 126, 16384, 53248, 128, 16,  51200, 8192, 576, 252, 8, 9, 2, 7, "fp8",  11.24),
      dgxc("dgxc-h100-007", "GPT-3 175B",     "gpt",    96, 12288, 49152,  96,  0,  51200, 2048, 128, 256, 4, 8, 1, 12, "bf16", 8.91),
      dgxc("dgxc-h100-008", "GPT-3 175B",     "gpt",    96, 12288, 49152,  96,  0,  51200, 2048, 128, 256, 4, 8, 1, 12, "fp8",  5.92),
      //        id               model              layers hidden heads gpus gbs mbs tp pp vs  recompute    states  grads   precision s/step
      nemotron4("dgxc-h100-009", "Nemotron-4 15B",   32,  6144,  48,  16, 64,  4, 4, 1, 1,  "none",      "fp32", "fp32", "bf16", 2.83),
      nemotron4("dgxc-h100-010", "Nemotron-4 15B",   32,  6144,  48,  16, 64,  4, 4, 1, 1,  "none",      "fp32", "fp32", "fp8",  2.08),
      nemotron4("dgxc-h100-011", "Nemotron-4 340B",  96, 18432,  96, 128, 32,  1, 8, 8, 12, "selective", "bf16", "bf16", "bf16", 4.61),
      nemotron4("dgxc-h100-012", "Nemotron-4 340B",  96, 18432,  96, 128, 32,  1, 8, 8, 12, "selective", "bf16", "bf16", "fp8",  3.16),
      //              id                      model                   cluster      layers hidden   ffn heads gpus   gbs mbs tp pp cp vp tokens/s/GPU
      bridgeBlackwell("bridge-blackwell-001", "B200 Llama 3 8B",      "dgx-b200",    32,  4096, 14336,   32,    8,   128,  2, 1,  1, 1, 1,  29994),  // 25.09
      bridgeBlackwell("bridge-blackwell-002", "B200 Llama 3 8B",      "dgx-b200",    32,  4096, 14336,   32,    8,   128,  2, 1,  1, 1, 1,  30624),  // 25.11
      bridgeBlackwell("bridge-blackwell-003", "B200 Llama 3.1 405B",  "dgx-b200",   126, 16384, 53248,  128,  128,    64,  1, 4,  8, 2, 8,    664),  // 25.09
      bridgeBlackwell("bridge-blackwell-004", "B200 Llama 3.1 405B",  "dgx-b200",   126, 16384, 53248,  128,  128,    64,  1, 4,  8, 2, 8,    661),  // 25.11
      bridgeBlackwell("bridge-blackwell-005", "GB200 Llama 3 8B",     "dgx-gb200",   32,  4096, 14336,   32,    8,   128,  2, 1,  1, 1, 1,  31357),  // 25.09
      bridgeBlackwell("bridge-blackwell-006", "GB200 Llama 3 8B",     "dgx-gb200",   32,  4096, 14336,   32,    8,   128,  2, 1,  1, 1, 1,  31508),  // 25.11
      bridgeBlackwell("bridge-blackwell-007", "GB200 Llama 3.1 405B", "dgx-gb200",  126, 16384, 53248,  128,  256,  1536,  1, 4, 16, 1, 4,    813),  // 25.11
      bridgeBlackwell("bridge-blackwell-008", "GB200 Llama 3.1 405B", "dgx-gb200",  126, 16384, 53248,  128,  256,  1536,  1, 4, 16, 1, 4,    793),  // 26.02
      //         id                    model         source       cluster     gpus   gbs mbs vp  userbuffers             s/step  slow
      mlperfGpt3("mlperf-h100-gpt3-001", "GPT-3 175B", kMlperfH100, "dgx-h100",   512, 2048, 1, 12, kMlperfGpt3H100Mbs1Preset, 11.071, false),  // v3.1, 64 nodes
      mlperfGpt3("mlperf-h100-gpt3-002", "GPT-3 175B", kMlperfH100, "dgx-h100",   768, 3072, 1, 12, kMlperfGpt3H100Mbs1Preset, 11.107, false),  // v3.1, 96 nodes
      mlperfGpt3("mlperf-h100-gpt3-003", "GPT-3 175B", kMlperfH100, "dgx-h100",   512, 2304, 2,  4, kMlperfGpt3H100Mbs2Preset, 10.956, false),  // v4.0, 64 nodes
      mlperfGpt3("mlperf-h100-gpt3-004", "GPT-3 175B", kMlperfH100, "dgx-h100",  4096, 2048, 1, 12, kMlperfGpt3H100Mbs1Preset,  1.630, true),   // v3.1, 512 nodes
      mlperfGpt3("mlperf-h100-gpt3-005", "GPT-3 175B", kMlperfH100, "dgx-h100", 10752, 2688, 1, 12, kMlperfGpt3H100Mbs1Preset,  0.960, true),   // v3.1, 1,344 nodes
      mlperfGpt3("mlperf-blackwell-001", "B200 GPT-3 175B", kMlperfBlackwell, "dgx-b200", 64, 2048, 2, 6, kMlperfGpt3B200Preset, 36.19, false),  // v4.1
      //          id                     model                  layers hidden   ffn heads  vocab  gpus  gbs tp pp cp vp s/step
      mlperfLlama("mlperf-blackwell-002", "GB200 Llama 3.1 405B", 126, 16384, 53248, 128, 32768,  256, 448, 4, 8, 2, 8, 19.11),   // v5.0
      mlperfLlama("mlperf-blackwell-003", "GB200 Llama 3.1 405B", 126, 16384, 53248, 128, 32768,  512, 896, 4, 8, 2, 8, 19.44),   // v5.0
      mlperfLlama("mlperf-blackwell-004", "GB200 Llama 3.1 8B",    32,  4096, 14336,  32, 128256,  72,  36, 1, 1, 2, 1, 0.1681),  // v5.1
      //              id                       model              seq (K)   gbs tp pp dp  cp  TFLOP/s
      nemoLongContext("nemo-long-context-001", "H100 Llama 2 7B",      4, 1024, 1, 1, 4,  1,  768),
      nemoLongContext("nemo-long-context-002", "H100 Llama 2 7B",      8,  512, 1, 2, 4,  1,  730),
      nemoLongContext("nemo-long-context-003", "H100 Llama 2 7B",     16,  256, 2, 1, 8,  1,  660),
      nemoLongContext("nemo-long-context-004", "H100 Llama 2 7B",     32,  128, 2, 1, 8,  2,  610),
      nemoLongContext("nemo-long-context-005", "H100 Llama 2 7B",     64,   64, 4, 1, 8,  2,  574),
      nemoLongContext("nemo-long-context-006", "H100 Llama 2 7B",    128,   32, 4, 1, 8,  4,  555),
      nemoLongContext("nemo-long-context-007", "H100 Llama 2 7B",    256,   16, 4, 1, 8,  8,  549),
      nemoLongContext("nemo-long-context-008", "H100 Llama 2 7B",    512,    8, 8, 1, 4, 16,  549),
      nemoLongContext("nemo-long-context-009", "H100 Llama 2 7B",   1024,    4, 8, 1, 4, 32,  536),
      nemoLongContext("nemo-long-context-010", "B200 Llama 3 8B",      8,  512, 1, 1, 2,  1, 1671),
      nemoLongContext("nemo-long-context-011", "B200 Llama 3 8B",     16,  256, 1, 1, 4,  1, 1717),
      nemoLongContext("nemo-long-context-012", "B200 Llama 3 8B",     32,  128, 1, 1, 4,  2, 1624),
      nemoLongContext("nemo-long-context-013", "B200 Llama 3 8B",     64,   64, 1, 1, 4,  4, 1600),
      nemoLongContext("nemo-long-context-014", "B200 Llama 3 8B",    128,   32, 2, 1, 4,  4, 1588),
      nemoLongContext("nemo-long-context-015", "B200 Llama 3 8B",    256,   16, 4, 1, 4,  4, 1590),
      nemoLongContext("nemo-long-context-016", "B200 Llama 3 8B",    512,    8, 4, 1, 4,  8, 1619),
      nemoLongContext("nemo-long-context-017", "B200 Llama 3 8B",   1024,    4, 4, 1, 4, 16, 1608),
      //          id               model           family      layers hidden   ffn heads kv   vocab   seq gpus  gbs mbs tp pp cp vp  states  grads   fused CE userbuffers              tokens/s/GPU
      nemoSummary("nemo-2407-001", "GPT3-5B",       "gpt3",      24,  4096, 16384,  32, 0,  51200, 2048,  64, 2048, 4, 1, 1, 1, 1,  "fp32", "bf16", false, "",                     22521),  // gpt3/5b.yaml; tp 1: no userbuffers
      nemoSummary("nemo-2407-002", "GPT3-20B",      "gpt3",      44,  6144, 24576,  48, 0,  51200, 2048,  64,  256, 2, 2, 1, 1, 1,  "fp32", "bf16", false, kGpt3_20bTp2Mbs2Preset,  5851),  // gpt3/20b.yaml; ub_cfg_h100_h6144_tp2_mbs2_seqlen2048
      nemoSummary("nemo-2407-003", "GPT3-175B",     "gpt3",      96, 12288, 49152,  96, 0,  51200, 2048, 128,  256, 1, 4, 8, 1, 6,  "fp32", "bf16", false, kGpt3_175bTp4Preset,      726),  // gpt3/175b.yaml; the mbs2 file's values (NeMo userbuffers.py mbs1)
      nemoSummary("nemo-2407-004", "GPT3-175B",     "gpt3",      96, 12288, 49152,  96, 0,  51200, 2048, 512, 2048, 2, 4, 8, 1, 6,  "fp32", "bf16", false, kGpt3_175bTp4Preset,      782),  // gpt3/175b.yaml; ub_cfg_h100_h12288_tp4_mbs2_seqlen2048
      nemoSummary("nemo-2407-005", "LLAMA2-7B",     "llama",     32,  4096, 11008,  32, 0,  32000, 4096,   8,  128, 1, 1, 1, 1, 1,  "fp32", "bf16", true,  "",                     16847),  // llama2_7b.yaml (fused cross-entropy)
      nemoSummary("nemo-2407-006", "LLAMA2-13B",    "llama",     40,  5120, 13824,  40, 0,  32000, 4096,  16,  128, 1, 1, 4, 1, 10, "fp32", "bf16", false, "",                      8646),  // llama2_13b.yaml; tp 1
      nemoSummary("nemo-2407-007", "LLAMA2-70B",    "llama",     80,  8192, 28672,  64, 8,  32256, 4096,  64,  128, 1, 4, 4, 1, 20, "fp32", "bf16", false, kLlama2_70bTp4Preset,     1707),  // llama2_70b.yaml; ub assumed on (the recipe names the file)
      nemoSummary("nemo-2407-008", "Nemotron-8B",   "nemotron",  32,  4096, 16384,  32, 0, 256000, 4096,  64,  256, 4, 2, 1, 1, 1,  "fp32", "bf16", true,  kTeOneDefaults,         12701),  // nemotron_8b.yaml; no ub file for h4096 tp2 mbs4
      nemoSummary("nemo-2407-009", "Nemotron-22B",  "nemotron",  40,  6144, 24576,  48, 0, 256000, 4096,  64,  256, 2, 2, 4, 1, 10, "fp32", "bf16", true,  kTeOneDefaults,          4256),  // nemotron_22b.yaml; no ub file for h6144 tp2 mbs2 seq 4096
      nemoSummary("nemo-2407-010", "Nemotron-340B", "nemotron",  96, 18432, 73728,  96, 8, 256000, 4096, 128,   32, 1, 8, 8, 1, 12, "bf16", "bf16", true,  kTeOneDefaults,           322),  // nemotron_340b.yaml; bf16 states and gradients
      nemoSummary("nemo-2407-011", "LLAMA3-8B",     "llama",     32,  4096, 14336,  32, 8, 128256, 8192,   8,  128, 1, 1, 1, 2, 1,  "fp32", "bf16", false, "",                     12036),  // llama3_8b.yaml; tp 1
      nemoSummary("nemo-2407-012", "LLAMA3-70B",    "llama",     80,  8192, 28672,  64, 8, 128512, 8192,  64,  128, 1, 4, 4, 2, 5,  "fp32", "bf16", false, kLlama70bBf16Preset,      1533),  // llama3_70b.yaml; ub_cfg_h100_h8192_tp4_mbs1_seqlen8192
  };
  // clang-format on
  return rows;
}

}  // namespace trainsim::validate
