#include "parallelism/plan_validation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <numeric>
#include <optional>
#include <sstream>

#include "parallelism/gradient_buckets.h"
#include "parallelism/memory_model.h"
#include "parallelism/transformer_workload.h"

namespace trainsim::parallelism {
namespace {

using topology::Precision;

// Degrees come from user files and may be absurd (tp: 9e15): products saturate instead of
// overflowing, and a saturated product never equals or divides a real GPU count.
int64_t product(std::initializer_list<int64_t> factors) {
  int64_t result = 1;
  for (int64_t factor : factors) {
    if (__builtin_mul_overflow(result, factor, &result)) return std::numeric_limits<int64_t>::max();
  }
  return result;
}

std::string str(int64_t value) { return std::to_string(value); }

// "1", "1 or 2", "1, 2, 4 or 8".
std::string alternatives(const std::vector<std::string>& values) {
  std::string text;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += i + 1 == values.size() ? " or " : ", ";
    text += values[i];
  }
  return text;
}

std::string alternatives(const std::vector<int64_t>& values) {
  std::vector<std::string> texts;
  texts.reserve(values.size());
  for (int64_t value : values) texts.push_back(str(value));
  return alternatives(texts);
}

// Divisors of `n` up to `limit`, ascending; `also_dividing` (when > 0) must be a multiple of
// each. Suggestions, so the search and the list stay short even for absurd sizes.
std::vector<int64_t> divisors(int64_t n, int64_t limit, int64_t also_dividing = 0) {
  constexpr int64_t kSearchLimit = 1 << 20;
  constexpr std::size_t kMaxValues = 16;
  std::vector<int64_t> values;
  for (int64_t d = 1; d <= n && d <= limit && d <= kSearchLimit && values.size() < kMaxValues; ++d) {
    if (n % d == 0 && (also_dividing <= 0 || also_dividing % d == 0)) values.push_back(d);
  }
  return values;
}

// Suggested degrees stop at the GPU count, once it is known.
int64_t gpuLimit(const ParallelPlan& plan) {
  return plan.gpus == ParallelPlan::kAuto ? std::numeric_limits<int64_t>::max() : plan.gpus;
}

std::string gpuLabel(const topology::GpuSpec& gpu) {
  if (!gpu.key.empty() && gpu.key != "inline") return gpu.key;
  if (!gpu.name.empty() && gpu.name != "inline") return gpu.name;
  return "the cluster's GPU";
}

std::optional<PlanIssue> checkGpuCount(const topology::ClusterSpec& cluster, const ParallelPlan& plan) {
  if (plan.gpus <= cluster.totalGpus()) return std::nullopt;
  return PlanIssue{"parallelism.gpus", "gpus = " + str(plan.gpus) + " but the cluster has " + str(cluster.totalGpus()) +
                                           " GPUs (" + str(cluster.nodes) + " nodes x " + str(cluster.gpus_per_node) +
                                           " per node); lower gpus or add nodes"};
}

// tp * pp * cp * dp must be the GPU count; `gpus_note` says where the count came from.
std::optional<PlanIssue> checkDegreeProduct(const ParallelPlan& plan, const std::string& gpus_note) {
  const int64_t model_parallel = product({plan.tp, plan.pp, plan.cp});
  if (product({model_parallel, plan.dp}) == plan.gpus) return std::nullopt;
  std::string message = "tp x pp x cp x dp = " + str(plan.tp) + " x " + str(plan.pp) + " x " + str(plan.cp) + " x " +
                        str(plan.dp) + " = " + str(product({model_parallel, plan.dp})) +
                        " but gpus = " + str(plan.gpus) + gpus_note;
  if (plan.gpus % model_parallel == 0) {
    message += "; use dp: " + str(plan.gpus / model_parallel) + " or dp: auto";
  } else {
    message += "; no dp fits, because tp x pp x cp = " + str(model_parallel) + " does not divide " + str(plan.gpus);
  }
  return PlanIssue{"parallelism.dp", message};
}

void checkTensorParallel(const ModelSpec& model, const ParallelPlan& plan, std::vector<PlanIssue>& issues) {
  // Megatron splits whole heads, whole key/value groups and the MLP width over tp ranks
  // (experts' MLPs too while expert tensor parallelism is left at tp; checkExpertParallel
  // checks an etp of its own).
  int64_t common = std::gcd(std::gcd(model.attention_heads, model.kv_heads), model.ffn_hidden_size);
  // Shared experts are split like a dense MLP of their summed width (Megatron-Core's SharedExpertMLP).
  const int64_t shared =
      model.moe && model.moe->shared_experts > 0 ? model.moe->shared_experts * model.moe->shared_ffn_hidden_size : 0;
  const bool experts_on_tp = model.moe && plan.etp == ParallelPlan::kAuto;
  if (experts_on_tp) common = std::gcd(common, model.moe->ffn_hidden_size);
  if (shared > 0) common = std::gcd(common, shared);
  const std::string fits = "; tp values that fit this model: " + alternatives(divisors(common, gpuLimit(plan)));
  const std::array<std::pair<const char*, int64_t>, 5> sizes = {{
      {"attention_heads", model.attention_heads},
      {"kv_heads", model.kv_heads},
      {"ffn_hidden_size", model.ffn_hidden_size},
      {"moe.ffn_hidden_size", experts_on_tp ? model.moe->ffn_hidden_size : model.ffn_hidden_size},
      {"moe.shared_experts x shared_ffn_hidden_size", shared > 0 ? shared : model.ffn_hidden_size},
  }};
  for (const auto& [name, size] : sizes) {
    if (size % plan.tp != 0) {
      issues.push_back(
          {"parallelism.tp", "tp = " + str(plan.tp) + " does not divide " + name + " = " + str(size) + fits});
      return;
    }
  }
}

// first_stage_layers / last_stage_layers given: the rest must fill the middle stages evenly.
void checkUnevenStages(const ModelSpec& model, const ParallelPlan& plan, std::vector<PlanIssue>& issues) {
  const bool first = plan.first_stage_layers.has_value();
  const bool last = plan.last_stage_layers.has_value();
  const std::string blamed = first ? "parallelism.first_stage_layers" : "parallelism.last_stage_layers";
  for (const auto& [key, value] : {std::pair{"first_stage_layers", plan.first_stage_layers},
                                   std::pair{"last_stage_layers", plan.last_stage_layers}}) {
    if (value == 0) {
      issues.push_back({std::string("parallelism.") + key,
                        std::string(key) + " = 0 leaves a pipeline stage without transformer layers; expected a "
                                           "positive integer (only zbv's and dualpipev's first and last model chunks "
                                           "may hold none)"});
      return;
    }
  }
  const std::string given_name = first && last ? "first_stage_layers + last_stage_layers"
                                 : first       ? "first_stage_layers"
                                               : "last_stage_layers";
  if (plan.pp == 1) {
    issues.push_back({blamed, given_name + " needs pp > 1: with one pipeline stage that stage holds every layer"});
    return;
  }
  const int64_t given = plan.first_stage_layers.value_or(0) + plan.last_stage_layers.value_or(0);
  std::string given_text = given_name + " = ";
  if (first && last) {
    given_text += str(*plan.first_stage_layers) + " + " + str(*plan.last_stage_layers) + " = " + str(given);
  } else {
    given_text += str(given);
  }
  const int64_t middle_stages = plan.pp - (first ? 1 : 0) - (last ? 1 : 0);
  const int64_t rest = model.layers - given;
  if (middle_stages == 0) {
    if (rest != 0) {
      issues.push_back({blamed, given_text + " must equal layers = " + str(model.layers) + " when pp = " +
                                    str(plan.pp) + " (no stages are left between the first and the last)"});
    }
    return;
  }
  const std::string others = "the other " + str(middle_stages) + " stage" + (middle_stages == 1 ? "" : "s");
  if (rest < middle_stages) {
    issues.push_back({blamed, given_text + " leaves " + str(std::max<int64_t>(rest, 0)) + " of the " +
                                  str(model.layers) + " layers for " + others +
                                  "; every stage needs at least one layer"});
    return;
  }
  if (rest % middle_stages != 0) {
    issues.push_back({blamed, "the " + str(rest) + " layers left after " + given_text + " do not split evenly over " +
                                  others + "; make layers minus " + given_name + " a multiple of " +
                                  str(middle_stages)});
    return;
  }
  if (plan.virtual_stages > 1) {
    // Interleaving cuts every middle stage into virtual_stages equal model chunks; an uneven
    // first or last stage gives its chunks next to the embedding or the loss one layer fewer
    // (ParallelPlan::layersOfChunk), so it needs at least one layer per chunk.
    const std::string chunks =
        " leaves a model chunk without a layer: it needs at least virtual_stages = " + str(plan.virtual_stages);
    if (first && *plan.first_stage_layers < plan.virtual_stages) {
      issues.push_back(
          {"parallelism.first_stage_layers", "first_stage_layers = " + str(*plan.first_stage_layers) + chunks});
    } else if (last && *plan.last_stage_layers < plan.virtual_stages) {
      issues.push_back(
          {"parallelism.last_stage_layers", "last_stage_layers = " + str(*plan.last_stage_layers) + chunks});
    } else if ((rest / middle_stages) % plan.virtual_stages != 0) {
      issues.push_back({"parallelism.virtual_stages", "virtual_stages = " + str(plan.virtual_stages) +
                                                          " does not divide the " + str(rest / middle_stages) +
                                                          " layers of each middle pipeline stage"});
    }
  }
}

// A V placement (zbv, dualpipev): 2 pp model chunks, the first and the last (both on the first
// GPU) as first/last_stage_layers give them, possibly empty, and every other chunk the same
// number of layers, at least one.
void checkVChunks(const ModelSpec& model, const ParallelPlan& plan, std::vector<PlanIssue>& issues) {
  const std::string name(scheduleName(plan.schedule));
  const int64_t chunks = 2 * plan.pp;
  const bool first = plan.first_stage_layers.has_value();
  const bool last = plan.last_stage_layers.has_value();
  if (!first && !last) {
    if (model.layers % chunks != 0) {
      issues.push_back({"parallelism.pp", name + " places " + str(chunks) + " model chunks (2 x pp = " + str(plan.pp) +
                                              ") in a V; they do not split layers = " + str(model.layers) +
                                              " evenly: set first_stage_layers / last_stage_layers, the layers of "
                                              "the first and the last chunk"});
    }
    return;
  }
  const std::string blamed = first ? "parallelism.first_stage_layers" : "parallelism.last_stage_layers";
  const int64_t given = plan.first_stage_layers.value_or(0) + plan.last_stage_layers.value_or(0);
  const int64_t middle = chunks - (first ? 1 : 0) - (last ? 1 : 0);
  const int64_t rest = model.layers - given;
  const std::string in_v = " in " + name +
                           "'s V (first_stage_layers and last_stage_layers are the layers of its "
                           "first and last model chunk, both on the first GPU)";
  if (rest < middle) {
    issues.push_back({blamed, "first and last chunks of " + str(given) + " layers leave " +
                                  str(std::max<int64_t>(rest, 0)) + " of the " + str(model.layers) +
                                  " layers for the " + str(middle) + " other model chunks" + in_v +
                                  "; each needs at least one layer"});
  } else if (rest % middle != 0) {
    issues.push_back({blamed, "the " + str(rest) + " layers left after first and last chunks of " + str(given) +
                                  " layers do not split evenly over the other " + str(middle) + " model chunks" + in_v +
                                  "; make layers minus their sum a multiple of " + str(middle)});
  }
}

// DualPipe: its stage of each direction on every GPU (virtual_stages 2), an even pp, the
// layers split over the pp stages as 1F1B splits them; its copies' gradient exchange is built
// beside ZeRO 0-2's reductions only.
void checkBothDirections(const ModelSpec& model, const ParallelPlan& plan, std::vector<PlanIssue>& issues) {
  if (plan.virtual_stages != 2) {
    issues.push_back({"parallelism.virtual_stages",
                      "dualpipe holds two model chunks per GPU (its stage of each direction); virtual_stages = " +
                          str(plan.virtual_stages) + ", expected 2"});
    return;
  }
  if (plan.pp % 2 != 0) {
    issues.push_back({"parallelism.pp", "dualpipe needs an even pp (dualpipe.py asserts it); pp = " + str(plan.pp)});
    return;
  }
  if (plan.zero >= 3) {
    issues.push_back({"parallelism.zero", "dualpipe with zero: 3 is not modelled; use zero: 0, 1 or 2"});
    return;
  }
  ParallelPlan stages = plan;  // each chunk is a whole pipeline stage
  stages.virtual_stages = 1;
  if (plan.first_stage_layers || plan.last_stage_layers) {
    checkUnevenStages(model, stages, issues);
  } else if (model.layers % plan.pp != 0) {
    issues.push_back({"parallelism.pp", "pp = " + str(plan.pp) + " does not divide layers = " + str(model.layers) +
                                            "; use pp = " + alternatives(divisors(model.layers, gpuLimit(plan))) +
                                            ", or set first_stage_layers / last_stage_layers for an uneven split"});
  }
}

void checkPipeline(const ModelSpec& model, const ParallelPlan& plan, std::vector<PlanIssue>& issues) {
  if (plan.virtual_stages > 1 && plan.pp == 1) {
    issues.push_back({"parallelism.virtual_stages",
                      "virtual_stages = " + str(plan.virtual_stages) + " (interleaved 1F1B) needs pp > 1"});
    return;
  }
  const std::string name(scheduleName(plan.schedule));
  if (splitsWeightGradients(plan.schedule) && plan.pp == 1) {
    issues.push_back({"parallelism.schedule",
                      name + " fills a pipeline's bubbles and needs pp > 1 (pp = 1 has none); use schedule: 1f1b"});
    return;
  }
  if (runsBothDirections(plan.schedule)) {
    checkBothDirections(model, plan, issues);
    return;
  }
  if (placesChunksInAV(plan.schedule)) {
    if (plan.virtual_stages != 2) {
      issues.push_back({"parallelism.virtual_stages",
                        name + " places two model chunks per GPU in a V; virtual_stages = " + str(plan.virtual_stages) +
                            ", expected 2"});
      return;
    }
    checkVChunks(model, plan, issues);
    return;
  }
  if (plan.virtual_stages > 1 && plan.schedule == PipelineSchedule::kGpipe) {
    issues.push_back({"parallelism.schedule", "gpipe cannot interleave model chunks; virtual_stages = " +
                                                  str(plan.virtual_stages) + " needs schedule: 1f1b"});
    return;
  }
  if (plan.first_stage_layers || plan.last_stage_layers) {
    checkUnevenStages(model, plan, issues);
    return;
  }
  if (model.layers % plan.pp != 0) {
    issues.push_back({"parallelism.pp", "pp = " + str(plan.pp) + " does not divide layers = " + str(model.layers) +
                                            "; use pp = " + alternatives(divisors(model.layers, gpuLimit(plan))) +
                                            ", or set first_stage_layers / last_stage_layers for an uneven split"});
    return;
  }
  const int64_t per_stage = model.layers / plan.pp;
  if (per_stage % plan.virtual_stages != 0) {
    issues.push_back({"parallelism.virtual_stages",
                      "virtual_stages = " + str(plan.virtual_stages) + " does not divide the " + str(per_stage) +
                          " layers of each pipeline stage (layers = " + str(model.layers) + ", pp = " + str(plan.pp) +
                          "); use virtual_stages = " + alternatives(divisors(per_stage, per_stage))});
  }
}

// The recompute_modules that need a part of the model (Megatron-Core's TransformerConfig
// refuses moe_act without grouped experts and mla_up_proj without latent attention), the
// whole MoE layer's checkpoint, which reruns the token dispatch and is not modelled (both
// checked whatever recompute reads the list), and what Megatron-Core refuses under selective
// recomputation: moe_act and layernorm with FP8's delayed scaling (their output-discarding
// checkpoints need the quantizers' original inputs, transformer_config.py).
void checkRecomputeModules(const ModelSpec& model, const TrainingSpec& training, const ParallelPlan& plan,
                           std::vector<PlanIssue>& issues) {
  const uint32_t modules = plan.recompute_modules;
  std::string why;
  const bool discarding = (modules & (recompute_module::kMoeActivation | recompute_module::kLayerNorm)) != 0;
  if ((modules & recompute_module::kMoeLayer) != 0) {
    why =
        "moe (the whole mixture-of-experts layer, its token dispatch rerun) is not modelled; list what it holds "
        "instead (moe_act, layernorm, shared_experts) or use recompute: full";
  } else if ((modules & recompute_module::kMoeActivation) != 0 && !model.moe) {
    why = "moe_act needs a mixture-of-experts model; " + model.name + " has none";
  } else if ((modules & recompute_module::kLatentUpProjection) != 0 && !model.mla) {
    why = "mla_up_proj needs multi-head latent attention; " + model.name + " has none";
  } else if ((modules & recompute_module::kSharedExperts) != 0 && !(model.moe && model.moe->shared_experts > 0)) {
    why = "shared_experts needs a model with shared experts; " + model.name + " has none";
  } else if (plan.recompute == Recompute::kSelective && discarding && training.precision == topology::Precision::kFp8 &&
             training.fp8_recipe == Fp8Recipe::kDelayed) {
    why =
        "moe_act and layernorm need an fp8_recipe other than delayed with fp8 (Megatron-Core refuses them under "
        "delayed scaling)";
  }
  if (!why.empty()) issues.push_back({"parallelism.recompute_modules", why});
}

void checkRecompute(const ModelSpec& model, const ParallelPlan& plan, std::vector<PlanIssue>& issues) {
  if (auto issue = checkRecomputeLayers(model, plan)) issues.push_back(*issue);
}

// Which matmuls selective_op saves is mapped for torchtitan's Llama layers: bias-free linears
// (aten.mm; a biased one is aten.addmm, which the policy neither saves nor counts), a fused
// attention kernel (the math path's bmm is not saved), and no Transformer Engine overlap.
// torchao's float8 linears count as aten.mm: they call torch.mm on Float8Tensor operands, and
// the checkpoint's dispatch mode, which applies the policy, sees the op before the tensor
// subclass turns it into _scaled_mm (PyTorch runs dispatch modes before subclasses' handlers).
// That holds compiled (torchtitan's published float8 runs keep what their bf16 ones keep:
// 76.8 against 77.0 GiB); eager, the list's aten.abs (torchtitan until 88247277c) also keeps
// each float8 cast's full-size abs() output, which is not modelled: fp8 needs a compiled
// dispatch. Expert layers and latent attention are not mapped.
void checkSelectiveOp(const ModelSpec& model, const TrainingSpec& training, const ParallelPlan& plan,
                      std::vector<PlanIssue>& issues) {
  if (plan.recompute != Recompute::kSelectiveOp) return;
  std::string why;
  if (model.moe) {
    why = model.name + " has mixture-of-experts layers";
  } else if (model.mla) {
    why = model.name + " has multi-head latent attention";
  } else if (model.architecture != Architecture::kLlama || model.attention_bias) {
    why = model.name + " has biased linear layers";
  } else if (training.precision == topology::Precision::kFp8 && training.dispatch != DispatchMode::kCompiled) {
    why = "the run is in fp8 without a compiled dispatch (eager, the policy also keeps each float8 cast's abs())";
  } else if (!training.flash_attention) {
    why = "the attention is not a fused kernel (training.flash_attention: false)";
  } else if (plan.tp_comm_overlap) {
    why = "tp_comm_overlap is on";
  }
  if (why.empty()) return;
  issues.push_back({"parallelism.recompute",
                    "recompute: selective_op is modelled for torchtitan's Llama layers "
                    "(bias-free, 16-bit or compiled fp8, fused attention, no tp_comm_overlap); " +
                        why + " (use none, selective or full)"});
}

void checkBatch(const TrainingSpec& training, const ParallelPlan& plan, std::vector<PlanIssue>& issues) {
  const int64_t step = product({plan.dp, training.micro_batch_size});
  if (training.global_batch_size % step != 0) {
    const int64_t below = training.global_batch_size / step * step;
    const std::string examples = below > 0 ? str(below) + " or " + str(below + step) : str(step);
    issues.push_back({"training.global_batch_size", "global_batch_size = " + str(training.global_batch_size) +
                                                        " is not divisible by dp x micro_batch_size = " + str(plan.dp) +
                                                        " x " + str(training.micro_batch_size) + " = " + str(step) +
                                                        "; use a multiple of " + str(step) + ", e.g. " + examples});
    return;
  }
  const int64_t microbatches = training.global_batch_size / step;
  if (plan.schedule == PipelineSchedule::kDualPipeV && microbatches < 2 * plan.pp) {
    issues.push_back({"training.global_batch_size",
                      "dualpipev needs at least 2 x pp = " + str(2 * plan.pp) +
                          " micro-batches (dualpipev.py asserts it); global_batch_size / (dp x micro_batch_size) = " +
                          str(microbatches)});
    return;
  }
  if (runsBothDirections(plan.schedule) && (microbatches < 2 * plan.pp || microbatches % 2 != 0)) {
    issues.push_back({"training.global_batch_size",
                      "dualpipe needs an even number of micro-batches, at least 2 x pp = " + str(2 * plan.pp) +
                          " (half run each direction; dualpipe.py asserts it); global_batch_size / (dp x "
                          "micro_batch_size) = " +
                          str(microbatches)});
    return;
  }
  if (plan.virtual_stages > 1 && plan.pp > 1 && microbatches % plan.pp != 0 && !placesChunksInAV(plan.schedule) &&
      !runsBothDirections(plan.schedule)) {
    issues.push_back(
        {"parallelism.virtual_stages",
         "interleaved 1F1B (virtual_stages = " + str(plan.virtual_stages) +
             ") needs the number of microbatches, global_batch_size / (dp x micro_batch_size) = " + str(microbatches) +
             ", to be a multiple of pp = " + str(plan.pp) + " (a Megatron-LM requirement)"});
  }
}

void checkExpertParallel(const ModelSpec& model, const ParallelPlan& plan, std::vector<PlanIssue>& issues) {
  if (plan.moe_a2a_overlap && !model.moe) {
    issues.push_back({"parallelism.moe_a2a_overlap", "moe_a2a_overlap needs a mixture-of-experts model; " + model.name +
                                                         " is dense (it has no moe section)"});
    return;
  }
  if (plan.moe_dispatcher != MoeDispatcher::kAllToAll && !model.moe) {
    issues.push_back({"parallelism.moe_dispatcher", "moe_dispatcher flex needs a mixture-of-experts model; " +
                                                        model.name + " is dense (it has no moe section)"});
    return;
  }
  if (plan.ep == 1 && plan.etp == ParallelPlan::kAuto) return;
  const char* key = plan.ep > 1 ? "parallelism.ep" : "parallelism.etp";
  if (!model.moe) {
    const std::string what = plan.ep > 1 ? "ep = " + str(plan.ep) : "etp = " + str(plan.etp);
    issues.push_back(
        {key, what + " needs a mixture-of-experts model; " + model.name + " is dense (it has no moe section)"});
    return;
  }
  const int64_t etp = plan.expertTensorParallel();
  if (plan.etp != ParallelPlan::kAuto && model.moe->ffn_hidden_size % etp != 0) {
    issues.push_back({"parallelism.etp", "etp = " + str(etp) + " does not divide moe.ffn_hidden_size = " +
                                             str(model.moe->ffn_hidden_size) + "; etp values that fit: " +
                                             alternatives(divisors(model.moe->ffn_hidden_size, gpuLimit(plan)))});
    return;
  }
  // Megatron-Core folds the tp x cp x dp ranks of a stage into etp x ep x expert-dp
  // (megatron/core/parallel_state.py, the expert RankGenerator; world size divisible by
  // etp x ep x pp) and gives every ep rank the same number of experts.
  const int64_t ranks = product({plan.tp, plan.dp, plan.cp});
  const int64_t folded = product({etp, plan.ep});
  const std::string ep = "ep = " + str(plan.ep);
  const std::string fits =
      "; ep values that fit: " + alternatives(divisors(model.moe->experts, ranks / etp, ranks / etp));
  if (model.moe->experts % plan.ep != 0) {
    issues.push_back({"parallelism.ep", ep + " does not divide moe.experts = " + str(model.moe->experts) + fits});
  } else if (ranks % folded != 0 && plan.etp == ParallelPlan::kAuto) {
    const int64_t dp_cp = product({plan.dp, plan.cp});
    issues.push_back({"parallelism.ep", ep + " does not divide dp x cp = " + str(plan.dp) + " x " + str(plan.cp) +
                                            " = " + str(dp_cp) +
                                            " (expert-parallel groups are formed from data- and context-parallel "
                                            "ranks, as in Megatron-Core)" +
                                            fits});
  } else if (ranks % folded != 0) {
    issues.push_back({key, "etp x ep = " + str(etp) + " x " + str(plan.ep) + " = " + str(folded) +
                               " does not divide tp x dp x cp = " + str(plan.tp) + " x " + str(plan.dp) + " x " +
                               str(plan.cp) + " = " + str(ranks) +
                               " (the expert layers fold the ranks of a pipeline stage into etp x ep x expert-dp, "
                               "as Megatron-Core does)" +
                               (ranks % etp == 0 ? fits : "")});
  }
}

void checkSequenceSplits(const TrainingSpec& training, const ParallelPlan& plan, std::vector<PlanIssue>& issues) {
  const int64_t chunks = product({2, plan.cp});
  if (plan.cp > 1 && training.seq_len % chunks != 0) {
    issues.push_back({"parallelism.cp", "seq_len = " + str(training.seq_len) +
                                            " is not divisible by 2 x cp = " + str(chunks) +
                                            " (load-balanced ring attention cuts each sequence into 2 x cp chunks)"});
    return;
  }
  if (plan.tp_comm_overlap && (plan.tp == 1 || !plan.sequence_parallel)) {
    issues.push_back({"parallelism.tp_comm_overlap",
                      "tp_comm_overlap overlaps the sequence-parallel all-gathers and reduce-scatters with GEMMs; it "
                      "needs tp > 1 and sequence_parallel: true (as Megatron-Core requires)"});
  }
  const int64_t ranks = product({plan.tp, plan.cp});
  if (plan.sequence_parallel && plan.tp > 1 && training.seq_len % ranks != 0) {
    issues.push_back({"parallelism.sequence_parallel",
                      "sequence_parallel splits each sequence over tp x cp = " + str(plan.tp) + " x " + str(plan.cp) +
                          " = " + str(ranks) + " ranks, but seq_len = " + str(training.seq_len) +
                          " is not divisible by " + str(ranks)});
  }
}

// The userbuffers settings only act under tp_comm_overlap, and a collective cannot hold
// every SM of the GPU it shares with the GEMM.
void checkTpOverlapConfig(const topology::ClusterSpec& cluster, const ParallelPlan& plan,
                          std::vector<PlanIssue>& issues) {
  const std::string key = "parallelism.tp_comm_overlap_config";
  if (!plan.tp_comm_overlap) {
    if (plan.tp_comm_overlap_config != TpCommOverlapConfig{}) {
      issues.push_back({key, "tp_comm_overlap_config sets how tp_comm_overlap runs; it needs tp_comm_overlap: true"});
    }
    return;
  }
  const int sms = cluster.gpu.compute_units;
  if (sms <= 0) return;
  for (std::size_t index = 0; index < kTpOverlapGemmCount; ++index) {
    const auto gemm = static_cast<TpOverlapGemm>(index);
    const int64_t num_sm = plan.tp_comm_overlap_config[gemm].num_sm;
    if (num_sm >= sms) {
      issues.push_back({key + "." + std::string(tpOverlapGemmName(gemm)) + ".num_sm",
                        "num_sm = " + str(num_sm) + " leaves the GEMM no SM of the " + str(sms) + " of a " +
                            gpuLabel(cluster.gpu) + "; expected at most " + str(sms - 1)});
    }
  }
}

// Hybrid sharding (training.zero3.replicas; sharded_data_parallel.h): FSDP's shard groups
// within the data-parallel group, in transformer blocks, without pipeline or expert parallelism
// (not modelled).
void checkReplicas(const ModelSpec& model, const TrainingSpec& training, const ParallelPlan& plan,
                   std::vector<PlanIssue>& issues) {
  const int64_t replicas = training.zero3.replicas;
  if (replicas == 1) return;
  const std::string key = "training.zero3.replicas";
  const std::string what = "replicas = " + str(replicas) + " (hybrid sharding, HSDP) ";
  if (plan.zero < 3 || training.zero3.unit != ShardingUnit::kBlock) {
    issues.push_back(
        {key, what + "needs parallelism.zero: 3 and training.zero3.unit: block (PyTorch FSDP); expected 1"});
  } else if (plan.dp % replicas != 0) {
    issues.push_back({key, what + "does not divide dp = " + str(plan.dp) + "; expected a divisor of dp"});
  } else if (training.zero3.shardRanks(plan.dp * plan.cp) < 2) {
    issues.push_back({key, what +
                               "leaves shard groups of one rank (nothing sharded: use zero 0-2); expected a "
                               "divisor of dp below dp x cp = " +
                               str(plan.dp * plan.cp)});
  } else if (plan.pp > 1) {
    issues.push_back({key, what + "with pipeline parallelism (pp = " + str(plan.pp) + ") is not modelled; expected 1"});
  } else if (model.isMoe()) {
    issues.push_back({key, what + "of a mixture-of-experts model (expert data-parallel groups) is not modelled; "
                                  "expected 1"});
  }
}

// How a block's collectives are issued (training.zero3.gathers_per_block,
// reduce_scatters_per_block, persistent_gathers_per_block, list_collectives) is modelled for
// ZeRO-3 in blocks only.
void checkBlockCollectives(const TrainingSpec& training, const ParallelPlan& plan, std::vector<PlanIssue>& issues) {
  const ShardedDataParallel& sharding = training.zero3;
  if (plan.zero >= 3 && sharding.unit == ShardingUnit::kBlock) return;
  const std::string needs = "needs parallelism.zero: 3 and training.zero3.unit: block";
  if (sharding.gathers_per_block != 1) {
    issues.push_back({"training.zero3.gathers_per_block",
                      "gathers_per_block = " + str(sharding.gathers_per_block) + " " + needs + "; expected 1"});
  }
  if (sharding.reduce_scatters_per_block != 1) {
    issues.push_back(
        {"training.zero3.reduce_scatters_per_block",
         "reduce_scatters_per_block = " + str(sharding.reduce_scatters_per_block) + " " + needs + "; expected 1"});
  }
  if (sharding.persistent_gathers_per_block != 0) {
    issues.push_back({"training.zero3.persistent_gathers_per_block",
                      "persistent_gathers_per_block = " + str(sharding.persistent_gathers_per_block) + " " + needs +
                          "; expected 0"});
  }
  if (sharding.list_collectives) {
    issues.push_back({"training.zero3.list_collectives", "list_collectives " + needs + "; expected false"});
  }
}

void checkZero(const TrainingSpec& training, const ParallelPlan& plan, std::vector<PlanIssue>& issues) {
  if (plan.zero < 3 || plan.pp == 1) return;
  // Only PyTorch FSDP under torch.distributed.pipelining shards parameters across pipeline
  // stages (sharded_data_parallel.h); it keeps them gathered for the iteration.
  if (training.zero3.unit != ShardingUnit::kBlock) {
    issues.push_back(
        {"parallelism.zero", "zero 3 (sharded parameters) with pipeline parallelism (pp = " + str(plan.pp) +
                                 ") is not supported by Megatron-LM or DeepSpeed; use zero 1 or 2, pp = 1, or "
                                 "training.zero3.unit: block (PyTorch FSDP with torch.distributed.pipelining, as "
                                 "torchtitan runs it)"});
  } else if (training.zero3.reshardsAfterForward(plan.pp)) {
    issues.push_back({"training.zero3.reshard_after_forward",
                      "resharding after every forward with pipeline parallelism (pp = " + str(plan.pp) +
                          ") is not modelled; expected never or unless_pipelined (torchtitan's default)"});
  }
}

// Simulated time runs to sim::kTimeLimit (sim/sim_time.h), about 46 days. An iteration whose
// lower-bound estimate passes 10^6 s (11.6 days) could pass that limit once the
// bubbles, recomputation and communication the estimate leaves out are added; no real
// configuration comes near it (iterations take seconds).
constexpr double kMaxIterationSeconds = 1e6;

// Per-GPU bandwidth (bytes/s) a data-parallel gradient reduction must at least cross: the
// node's NICs shared by its GPUs once the job spans nodes, else the intra-node fabric.
// 0 when the cluster does not say (explicit graphs, tori).
double gradientBandwidthBps(const topology::ClusterSpec& cluster, const ParallelPlan& plan) {
  if (cluster.explicit_graph) return 0.0;
  const auto& net = cluster.inter_node;
  if (plan.gpus > cluster.gpus_per_node && net && net->topology != topology::NetworkTopology::kTorus) {
    return net->nic_bandwidth_Gbps * 1e9 / 8.0 * net->nics_per_node / cluster.gpus_per_node;
  }
  return cluster.intra_node.bandwidth_GBps * 1e9;
}

// Values that are each within their bounds can still multiply to an iteration the simulator
// cannot time (a huge batch on a slow GPU); refused here with the estimate that rules it out.
void checkIterationLength(const ModelSpec& model, const topology::ClusterSpec& cluster, const TrainingSpec& training,
                          const ParallelPlan& plan, std::vector<PlanIssue>& issues) {
  const auto peak_tflops = cluster.gpu.peakTflops(training.precision);
  if (!peak_tflops || *peak_tflops <= 0.0) return;  // checkPrecision reports it
  const double flops = modelFlopsPerIteration(model, training);
  const double compute_s = flops / (static_cast<double>(plan.gpus) * *peak_tflops * 1e12);
  double gradient_s = 0.0;
  const double bandwidth = gradientBandwidthBps(cluster, plan);
  if (product({plan.dp, plan.cp}) > 1 && bandwidth > 0.0) {
    // 16-bit gradients of one GPU's share of the weights, sent at least once.
    gradient_s = model.parameterCount() / static_cast<double>(product({plan.tp, plan.pp})) * 2.0 / bandwidth;
  }
  const double total_s = compute_s + gradient_s;
  if (!(total_s > kMaxIterationSeconds)) return;
  const auto days = [](double seconds) {
    std::ostringstream text;
    text << std::fixed << std::setprecision(1) << seconds / 86400.0 << " days";
    return text.str();
  };
  const auto roughly = [](double value) {
    std::ostringstream text;
    text << std::setprecision(3) << value;
    return text.str();
  };
  std::string message = "one iteration would take at least " + days(total_s) + " of simulated time (" + roughly(flops) +
                        " FLOPs on " + str(plan.gpus) + (plan.gpus == 1 ? " GPU at " : " GPUs at ") +
                        roughly(*peak_tflops) + " TFLOP/s: " + days(compute_s);
  if (gradient_s >= 0.01 * total_s) {
    message += "; gradients at " + roughly(bandwidth / 1e9) + " GB/s per GPU: " + days(gradient_s);
  }
  message += "), more than the " + days(kMaxIterationSeconds) +
             " the simulator's clock accepts per iteration; lower global_batch_size or seq_len, or use a faster "
             "cluster";
  issues.push_back({"training.global_batch_size", message});
}

// Every gradient bucket is a collective of its own in the task graph, for each model chunk
// of each GPU. 10,000 per GPU is 100x what Megatron-Core's default bucket size gives the
// largest models (Llama 3 405B: about 80) and keeps the graph to seconds of simulation.
constexpr int64_t kMaxGradientBucketsPerGpu = 10'000;

// Reports a bucket size (given or Megatron-Core's default) that cuts one GPU's gradients
// into more buckets than the simulator builds. Needs a plan whose stages split evenly.
void checkGradientBuckets(const ModelSpec& model, const TrainingSpec& training, const ParallelPlan& plan,
                          std::vector<PlanIssue>& issues) {
  if (!plan.overlap_grad_reduce || product({plan.dp, plan.cp}) <= 1) return;  // one bucket per chunk
  const GradientBuckets buckets;
  const std::vector<int64_t> layers = plan.layersPerStage(model.layers);
  double most_parameters = 0.0;
  int64_t most_buckets = 0;
  for (int64_t stage = 0; stage < plan.pp; ++stage) {
    const double chunk =
        stageParameters(model, training, plan, stage, layers[static_cast<std::size_t>(stage)]).total() /
        static_cast<double>(plan.virtual_stages);
    const double chunk_buckets = std::ceil(chunk / buckets.bucketParameters(plan));
    const double stage_buckets = chunk_buckets * static_cast<double>(plan.virtual_stages);
    if (stage_buckets > static_cast<double>(most_buckets)) {
      // Saturates like product(): a count this large is only compared and printed.
      most_buckets = stage_buckets > 9e18 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(stage_buckets);
      most_parameters = chunk * static_cast<double>(plan.virtual_stages);
    }
  }
  if (most_buckets <= kMaxGradientBucketsPerGpu) return;
  std::ostringstream parameters;
  parameters << std::setprecision(3) << most_parameters;
  // Buckets of at least this many parameters keep every chunk of every GPU within the limit.
  const int64_t per_chunk = std::max<int64_t>(1, kMaxGradientBucketsPerGpu / plan.virtual_stages);
  const double needed =
      std::ceil(most_parameters / static_cast<double>(plan.virtual_stages) / static_cast<double>(per_chunk));
  const std::string size = plan.ddp_bucket_size ? "ddp_bucket_size = " + formatBound(*plan.ddp_bucket_size)
                                                : "Megatron-Core's default bucket size (max(40M, 1M x dp x cp))";
  issues.push_back({"parallelism.ddp_bucket_size",
                    size + " cuts a GPU's " + parameters.str() + " gradient parameters into " + str(most_buckets) +
                        " buckets, each its own collective; the simulator builds at most " +
                        str(kMaxGradientBucketsPerGpu) + ": set ddp_bucket_size to at least " + formatBound(needed)});
}

void checkPrecision(const topology::ClusterSpec& cluster, const TrainingSpec& training,
                    std::vector<PlanIssue>& issues) {
  const topology::GpuSpec& gpu = cluster.gpu;
  if (gpu.peakTflops(training.precision)) return;
  // Suggest the mixed precisions first; the fp32 formats only when the GPU has none.
  const std::vector<std::vector<Precision>> groups = {{Precision::kBf16, Precision::kFp16, Precision::kFp8},
                                                      {Precision::kTf32, Precision::kFp32}};
  std::vector<std::string> supported;
  for (const auto& group : groups) {
    for (Precision precision : group) {
      if (gpu.peakTflops(precision)) supported.emplace_back(topology::precisionName(precision));
    }
    if (!supported.empty()) break;
  }
  std::string message =
      gpuLabel(gpu) + " has no " + std::string(topology::precisionName(training.precision)) + " support";
  if (supported.empty()) {
    message += " nor any other training precision (fp32, tf32, fp16, bf16, fp8)";
  } else {
    message += "; use " + alternatives(supported);
  }
  issues.push_back({"training.precision", message});
}

}  // namespace

std::optional<PlanIssue> resolvePlan(ParallelPlan& plan, const topology::ClusterSpec& cluster) {
  std::string gpus_note;
  if (plan.gpus == ParallelPlan::kAuto) {
    plan.gpus = cluster.totalGpus();
    gpus_note = " (the whole cluster; set parallelism.gpus to use fewer)";
  }
  if (auto issue = checkGpuCount(cluster, plan)) return issue;
  if (plan.dp == ParallelPlan::kAuto) {
    const int64_t model_parallel = product({plan.tp, plan.pp, plan.cp});
    if (plan.gpus % model_parallel != 0) {
      return PlanIssue{"parallelism.dp", "dp: auto needs tp x pp x cp = " + str(plan.tp) + " x " + str(plan.pp) +
                                             " x " + str(plan.cp) + " = " + str(model_parallel) +
                                             " to divide gpus = " + str(plan.gpus) + gpus_note +
                                             "; choose tp, pp and cp whose product divides " + str(plan.gpus)};
    }
    plan.dp = plan.gpus / model_parallel;
  } else if (auto issue = checkDegreeProduct(plan, gpus_note)) {
    return issue;
  }
  // Megatron-LM switches sequence parallelism off at tp = 1, where it has nothing to split.
  if (plan.tp == 1) plan.sequence_parallel = false;
  return std::nullopt;
}

std::optional<PlanIssue> checkRecomputeLayers(const ModelSpec& model, const ParallelPlan& plan) {
  if (!plan.recompute_num_layers) return std::nullopt;
  const int64_t count = *plan.recompute_num_layers;
  if (plan.recompute != Recompute::kFull) {
    return PlanIssue{"parallelism.recompute_num_layers",
                     "recompute_num_layers = " + str(count) + " needs recompute: full (it chooses whole layers to " +
                         "recompute); the plan has recompute: " + std::string(recomputeName(plan.recompute))};
  }
  if (count > model.layers) {
    return PlanIssue{"parallelism.recompute_num_layers", "recompute_num_layers = " + str(count) +
                                                             " exceeds the model's " + str(model.layers) +
                                                             " layers; use at most " + str(model.layers)};
  }
  return std::nullopt;
}

std::vector<PlanIssue> checkModelFit(const ModelSpec& model, const ParallelPlan& plan) {
  std::vector<PlanIssue> issues;
  checkTensorParallel(model, plan, issues);
  checkPipeline(model, plan, issues);
  checkRecompute(model, plan, issues);
  return issues;
}

std::vector<PlanIssue> checkPlan(const ModelSpec& model, const topology::ClusterSpec& cluster,
                                 const TrainingSpec& training, const ParallelPlan& plan) {
  std::vector<PlanIssue> issues;
  // Degrees below 1 can only come from code that built the plan by hand (the reader rejects them).
  for (const auto& [key, value] :
       std::array<std::pair<const char*, int64_t>, 8>{{{"parallelism.gpus", plan.gpus},
                                                       {"parallelism.tp", plan.tp},
                                                       {"parallelism.pp", plan.pp},
                                                       {"parallelism.dp", plan.dp},
                                                       {"parallelism.cp", plan.cp},
                                                       {"parallelism.ep", plan.ep},
                                                       {"parallelism.etp", plan.expertTensorParallel()},
                                                       {"parallelism.virtual_stages", plan.virtual_stages}}}) {
    if (value < 1) {
      issues.push_back({key, "expected a positive integer, found \"" + str(value) + "\" (is the plan resolved?)"});
      return issues;
    }
  }
  issues = checkModelFit(model, plan);
  if (auto issue = checkGpuCount(cluster, plan)) issues.push_back(*issue);
  // Transformer Engine's MXFP8 kernels need compute capability 10 (check_mxfp8_support).
  const std::optional<double> capability = cluster.gpu.compute_capability;
  if (training.precision == topology::Precision::kFp8 && training.fp8_recipe == Fp8Recipe::kMxfp8 && capability &&
      *capability < 10.0) {
    std::ostringstream has;
    has << std::fixed << std::setprecision(1) << *capability;
    issues.push_back({"training.fp8_recipe", "mxfp8 needs a Blackwell GPU (compute capability 10 or more); " +
                                                 cluster.gpu.key + " has " + has.str() + ": use current or blockwise"});
  }
  if (auto issue = checkDegreeProduct(plan, "")) {
    // Every later rule assumes a consistent set of degrees.
    issues.push_back(*issue);
    return issues;
  }
  checkBatch(training, plan, issues);
  checkExpertParallel(model, plan, issues);
  checkSequenceSplits(training, plan, issues);
  checkZero(training, plan, issues);
  checkBlockCollectives(training, plan, issues);
  checkSelectiveOp(model, training, plan, issues);
  checkRecomputeModules(model, training, plan, issues);
  checkReplicas(model, training, plan, issues);
  checkTpOverlapConfig(cluster, plan, issues);
  checkPrecision(cluster, training, issues);
  checkIterationLength(model, cluster, training, plan, issues);
  // Needs even pipeline stages and the other rules met.
  if (issues.empty()) checkGradientBuckets(model, training, plan, issues);
  return issues;
}

}  // namespace trainsim::parallelism
