// Published end-to-end training measurements, copied with their citations, that the
// iteration simulation is checked against (`trainsim validate training`). The figures come
// from ../shared/validation/training.yaml (row ids kept); each row carries the full
// configuration needed to build an experiment, and every setting the source does not
// publish is an assumption written down beside the row.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::validate {

// What a source publishes, and therefore what the prediction is compared with.
enum class TrainingMetric : uint8_t {
  // TFLOP/s per GPU counting the recomputed forward pass (SC21's formula: 96 B s l h^2 (1 +
  // s/6h + V/16lh) with full recompute): compared with IterationResult::hardware_tflops_per_gpu.
  kHardwareTflopsPerGpu,
  // TFLOP/s per GPU of model FLOPs only (no recomputation; the MFU numerator): compared with
  // IterationResult::tflops_per_gpu.
  kModelTflopsPerGpu,
  // Seconds per optimizer step: compared with IterationResult::iteration_time_s.
  kIterationTime,
  // Tokens per second per GPU (the whole job's tokens/s over its GPUs): compared with
  // IterationResult::tokens_per_s / gpus. Free of FLOP-counting conventions (Megatron-Bridge
  // counts causal attention at half the FLOPs; this suite's model FLOPs count it in full).
  kTokensPerSecondPerGpu,
  // Milliseconds one transformer layer takes on one GPU for one micro-batch, forward and
  // backward together (recomputation and the layer's tensor-parallel collectives included),
  // as a per-layer profile measures it. Compared with the marginal cost of a layer: the
  // row's experiment simulated at its layer count and at one layer more, the difference of
  // the two iteration times less their optimizer steps (validate/training_suite.cpp).
  // Rows of this metric run one micro-batch on one pipeline stage without data parallelism.
  kLayerTime,
};
[[nodiscard]] std::string_view trainingMetricName(TrainingMetric metric);  // "hardware_tflops_per_gpu", ...
[[nodiscard]] std::string_view trainingMetricUnit(TrainingMetric metric);  // "TFLOP/s", "s", "tokens/s" or "ms"

struct TrainingSource {
  std::string id;        // the source id of training.yaml
  std::string title;     // short name for tables
  std::string citation;  // paper / document, table, and where the configuration comes from
  TrainingMetric metric;
  std::string metric_definition;
};

struct TrainingMeasurement {
  std::string id;      // row id in training.yaml
  std::string source;  // TrainingSource::id
  std::string model;   // the model as the source names it
  // Model: architecture gpt (LayerNorm, GELU MLP, learned positions) or llama (RMSNorm,
  // SwiGLU MLP, RoPE, grouped-query attention with kv_heads key/value heads).
  std::string architecture = "gpt";
  int64_t kv_heads = 0;  // 0: as many as attention heads
  int64_t layers = 0;
  int64_t hidden_size = 0;
  int64_t attention_heads = 0;
  int64_t ffn_hidden_size = 0;  // 4 x hidden_size where the source gives none
  int64_t vocab_size = 0;
  bool tied_embeddings = true;
  // Dropout probability on the residual stream and on the attention probabilities; negative:
  // the architecture's default (0.1 for gpt, 0 for llama; ModelSpec).
  double dropout = -1.0;
  // Training.
  int64_t seq_len = 0;
  int64_t global_batch_size = 0;
  // The published micro-batch size. Where the source does not publish it
  // (micro_batch_published false) the suite runs the row at the fastest size that fits
  // (validate/unpublished_plan_choice.h) and this holds the smallest candidate, 1.
  int64_t micro_batch_size = 1;
  bool micro_batch_published = true;
  std::string precision;                  // fp16 / bf16 / fp8
  std::string optimizer_state_precision;  // fp32 / bf16; empty: the default (fp32)
  std::string grad_reduce_precision;      // training.grad_reduce_precision; empty: Megatron-LM's default
  bool fp8_param_gather = false;          // training.fp8_param_gather: the recipe keeps FP8 weights
  std::string fp8_recipe;                 // training.fp8_recipe (delayed / current); empty: delayed
  // Parallel plan.
  int64_t gpus = 0;
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t dp = 1;
  int64_t cp = 1;
  int64_t virtual_stages = 1;  // model chunks per GPU
  // false: the source does not publish the chunk count, which the suite then chooses with
  // the micro-batch size (validate/unpublished_plan_choice.h); virtual_stages holds 1.
  bool virtual_stages_published = true;
  // Uneven first / last pipeline stages (parallelism.first_stage_layers / last_stage_layers).
  std::optional<int64_t> first_stage_layers;
  std::optional<int64_t> last_stage_layers;
  bool sequence_parallel = false;
  std::string recompute;  // none / selective / full
  int zero = 0;
  bool overlap_grad_reduce = false;
  bool overlap_param_gather = false;
  std::optional<double> ddp_bucket_size;  // parameters per gradient bucket; unset: Megatron-Core's default
  bool tp_comm_overlap = false;
  // The recipe's userbuffers settings per GEMM, as the YAML flow mapping written to
  // parallelism.tp_comm_overlap_config; empty: Transformer Engine 2.x's defaults.
  std::string tp_comm_overlap_config;
  // The attention kernel the measured software ran: flash attention (fused, no s x s matrix
  // in memory) or Megatron-LM's unfused path (QK^T GEMM, fused scale-mask-softmax, dropout,
  // context GEMM). Written as training.flash_attention in the row's experiment.
  bool flash_attention = true;
  // The loss kernel: Transformer Engine's fused cross-entropy where the recipe turns it on
  // (training.fused_cross_entropy), else Megatron's unfused vocab_parallel_cross_entropy.
  bool fused_cross_entropy = false;
  // Cluster preset (configs/clusters/) whose nodes are set to gpus / 8.
  std::string cluster;
  // The published figure, in the source's metric (TrainingSource::metric).
  double published = 0.0;
  // Takes long to simulate (see training_measurements.cpp for the measured times): left
  // out of the suite unless asked for (`trainsim validate training --all`).
  bool slow = false;
  // Settings the source does not publish and what the row assumes for them.
  std::string assumptions;
};

// The sources, in a fixed order.
[[nodiscard]] const std::vector<TrainingSource>& trainingSources();
// Every row of the suite, grouped by source, in a fixed order.
[[nodiscard]] const std::vector<TrainingMeasurement>& trainingMeasurements();
// The source of a row; throws std::out_of_range for an unknown id.
[[nodiscard]] const TrainingSource& trainingSource(std::string_view id);

}  // namespace trainsim::validate
