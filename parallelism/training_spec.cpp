#include "parallelism/training_spec.h"

namespace trainsim::parallelism {

std::string_view optimizerName(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kAdam: return "adam";
    case Optimizer::kSgd: return "sgd";
  }
  return "unknown";
}

std::string_view dispatchModeName(DispatchMode mode) {
  switch (mode) {
    case DispatchMode::kEager: return "eager";
    case DispatchMode::kCompiled: return "compiled";
    case DispatchMode::kCudaGraphs: return "cuda_graphs";
  }
  return "unknown";
}

std::optional<DispatchMode> parseDispatchMode(std::string_view name) {
  for (const DispatchMode mode : {DispatchMode::kEager, DispatchMode::kCompiled, DispatchMode::kCudaGraphs}) {
    if (dispatchModeName(mode) == name) return mode;
  }
  return std::nullopt;
}

// Bounds on the batch, far above any training run and low enough that sequence and batch
// sizes, and their product (tokens per iteration, at most 2^48), stay exact in int64 and in
// the doubles FLOP and byte counts are computed in.
// 2^24 tokens: above the longest contexts trained (10M tokens, Llama 4 Scout).
constexpr int64_t kMaxSeqLen = int64_t{1} << 24;
// 2^24 sequences per iteration: 1,000x the largest LLM batches (about 16K sequences).
constexpr int64_t kMaxGlobalBatchSize = int64_t{1} << 24;
// 10^18 training tokens: 25,000x the largest published budgets (36T, Qwen3).
constexpr double kMaxTrainingTokens = 1e18;
// Checkpoint intervals: a second (faster than any storage writes a model) to ten years.
constexpr double kMinCheckpointIntervalSeconds = 1.0;
constexpr double kMaxCheckpointIntervalSeconds = 10.0 * 365.0 * 86400.0;
constexpr int64_t kMaxCheckpointIntervalIterations = int64_t{1} << 40;

CheckpointPolicy readCheckpointPolicy(const ConfigNode& section) {
  section.requireMap();
  section.allowKeys({"interval_iterations", "interval_s", "async"});
  CheckpointPolicy policy;
  if (auto iterations = section.optionalChild("interval_iterations")) {
    policy.interval_iterations = iterations->asIntegerIn(1, kMaxCheckpointIntervalIterations);
  }
  if (auto seconds = section.optionalChild("interval_s")) {
    if (policy.interval_iterations) seconds->fail("give interval_s or interval_iterations, not both");
    policy.interval_s = seconds->asNumberIn(kMinCheckpointIntervalSeconds, kMaxCheckpointIntervalSeconds);
  }
  policy.async = section.boolean("async", false);
  return policy;
}

TrainingDefaults readKernelChoices(const ConfigNode& section, TrainingDefaults defaults) {
  defaults.flash_attention = section.boolean("flash_attention", defaults.flash_attention);
  defaults.fused_cross_entropy = section.boolean("fused_cross_entropy", defaults.fused_cross_entropy);
  defaults.fused_gate_up = section.boolean("fused_gate_up", defaults.fused_gate_up);
  defaults.fused_pointwise = section.boolean("fused_pointwise", defaults.fused_pointwise);
  defaults.fused_expert_mlp = section.boolean("fused_expert_mlp", defaults.fused_expert_mlp);
  defaults.compile_loss = section.boolean("compile_loss", defaults.compile_loss);
  if (auto dispatch = section.optionalChild("dispatch")) {
    defaults.dispatch = parseDispatchMode(dispatch->asEnum({"eager", "compiled", "cuda_graphs"}));
  }
  if (auto zero3 = section.optionalChild("zero3")) defaults.zero3 = readShardedDataParallel(*zero3, defaults.zero3);
  defaults.retain_16bit_grads = section.boolean("retain_16bit_grads", defaults.retain_16bit_grads);
  return defaults;
}

TrainingSpec readTrainingSpec(const ConfigNode& section, const TrainingDefaults& defaults) {
  section.allowKeys({"seq_len",
                     "global_batch_size",
                     "micro_batch_size",
                     "precision",
                     "optimizer",
                     "tokens",
                     "flash_attention",
                     "fused_cross_entropy",
                     "fused_gate_up",
                     "fused_pointwise",
                     "fused_expert_mlp",
                     "compile_loss",
                     "dispatch",
                     "stack",
                     "stack_overrides",
                     "grad_reduce_precision",
                     "optimizer_state_precision",
                     "fp8_param_gather",
                     "fp8_recipe",
                     "checkpoint",
                     "moe_load_imbalance",
                     "moe_capacity_factor",
                     "zero3",
                     "retain_16bit_grads"});
  TrainingSpec training;
  training.seq_len = section.child("seq_len").asIntegerIn(1, kMaxSeqLen);
  training.global_batch_size = section.child("global_batch_size").asIntegerIn(1, kMaxGlobalBatchSize);
  training.micro_batch_size = section.integerIn("micro_batch_size", 1, 1, kMaxGlobalBatchSize);
  // fp64 is a GPU capability, not a training precision anyone uses, so it is not offered.
  const std::string precision = section.enumeration("precision", {"fp32", "tf32", "fp16", "bf16", "fp8"}, "bf16");
  training.precision = *topology::parsePrecision(precision);
  training.optimizer =
      section.enumeration("optimizer", {"adam", "sgd"}, "adam") == "sgd" ? Optimizer::kSgd : Optimizer::kAdam;
  if (auto tokens = section.optionalChild("tokens")) training.tokens = tokens->asNumberIn(1.0, kMaxTrainingTokens);
  if (auto checkpoint = section.optionalChild("checkpoint")) training.checkpoint = readCheckpointPolicy(*checkpoint);
  const TrainingDefaults choices = readKernelChoices(section, defaults);
  training.flash_attention = choices.flash_attention;
  training.fused_cross_entropy = choices.fused_cross_entropy;
  training.fused_gate_up = choices.fused_gate_up;
  training.fused_pointwise = choices.fused_pointwise;
  training.fused_expert_mlp = choices.fused_expert_mlp;
  training.compile_loss = choices.compile_loss;
  training.dispatch = choices.dispatch;
  training.zero3 = choices.zero3;
  training.retain_16bit_grads = choices.retain_16bit_grads;
  if (auto grad = section.optionalChild("grad_reduce_precision")) {
    const auto grad_precision = *topology::parsePrecision(grad->asEnum({"fp32", "bf16", "fp16"}));
    training.grad_reduce_precision = grad_precision;
    // Megatron-Core's DDP keeps the main gradients in fp32 or in the parameters' dtype,
    // which is bf16 for bf16 and fp8 training and fp16 for fp16; fp32 training has no other.
    const bool sixteen_bit_params = training.precision == topology::Precision::kBf16 ||
                                    training.precision == topology::Precision::kFp8 ||
                                    training.precision == topology::Precision::kFp16;
    const topology::Precision parameter_type =
        training.precision == topology::Precision::kFp16 ? topology::Precision::kFp16 : topology::Precision::kBf16;
    if (grad_precision != topology::Precision::kFp32 && (!sixteen_bit_params || grad_precision != parameter_type)) {
      grad->fail("grad_reduce_precision " + std::string(topology::precisionName(grad_precision)) +
                 " does not go with precision " + std::string(topology::precisionName(training.precision)) +
                 ": expected fp32" +
                 (sixteen_bit_params ? " or " + std::string(topology::precisionName(parameter_type)) : std::string()) +
                 " (main gradients are fp32 or the parameters' 16-bit type)");
    }
  }
  training.optimizer_state_precision =
      *topology::parsePrecision(section.enumeration("optimizer_state_precision", {"fp32", "bf16"}, "fp32"));
  training.fp8_param_gather = section.boolean("fp8_param_gather", false);
  if (training.fp8_param_gather && training.precision != topology::Precision::kFp8) {
    section.child("fp8_param_gather")
        .fail("FP8 parameters need precision fp8, found precision " +
              std::string(topology::precisionName(training.precision)));
  }
  if (auto recipe = section.optionalChild("fp8_recipe")) {
    const std::string name = recipe->asEnum({"delayed", "current", "mxfp8", "blockwise"});
    training.fp8_recipe = name == "current"     ? Fp8Recipe::kCurrent
                          : name == "mxfp8"     ? Fp8Recipe::kMxfp8
                          : name == "blockwise" ? Fp8Recipe::kBlockwise
                                                : Fp8Recipe::kDelayed;
    if (training.precision != topology::Precision::kFp8) {
      recipe->fail("an FP8 scaling recipe needs precision fp8, found precision " +
                   std::string(topology::precisionName(training.precision)));
    }
  }
  // Beyond every expert's tokens on one rank is not an imbalance but a misreading.
  constexpr double kMaxMoeLoadFactor = 1024.0;
  if (auto imbalance = section.optionalChild("moe_load_imbalance")) {
    training.moe_load_imbalance = imbalance->asNumberIn(1.0, kMaxMoeLoadFactor);
  }
  if (auto capacity = section.optionalChild("moe_capacity_factor")) {
    training.moe_capacity_factor = capacity->asNumberIn(1.0, kMaxMoeLoadFactor);
  }
  return training;
}

}  // namespace trainsim::parallelism
