#include "parallelism/parallel_plan.h"

#include <algorithm>
#include <array>
#include <cassert>

#include "base/error.h"

namespace trainsim::parallelism {

std::string_view scheduleName(PipelineSchedule schedule) {
  switch (schedule) {
    case PipelineSchedule::kGpipe: return "gpipe";
    case PipelineSchedule::kOneFOneB: return "1f1b";
    case PipelineSchedule::kZeroBubble: return "zero_bubble";
    case PipelineSchedule::kZeroBubbleV: return "zbv";
    case PipelineSchedule::kDualPipeV: return "dualpipev";
    case PipelineSchedule::kDualPipe: return "dualpipe";
  }
  return "unknown";
}

bool splitsWeightGradients(PipelineSchedule schedule) {
  return schedule == PipelineSchedule::kZeroBubble || placesChunksInAV(schedule) || runsBothDirections(schedule);
}

bool placesChunksInAV(PipelineSchedule schedule) {
  return schedule == PipelineSchedule::kZeroBubbleV || schedule == PipelineSchedule::kDualPipeV;
}

bool runsBothDirections(PipelineSchedule schedule) { return schedule == PipelineSchedule::kDualPipe; }

std::string_view recomputeName(Recompute recompute) {
  switch (recompute) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
    case Recompute::kSelectiveOp: return "selective_op";
  }
  return "unknown";
}

namespace {

// Megatron-Core's names of the recompute modules, in bit order.
constexpr std::array<std::string_view, 7> kRecomputeModuleNames = {
    "core_attn", "layernorm", "moe_act", "mla_up_proj", "mlp", "shared_experts", "moe"};

// "core_attn, layernorm, ... or moe": what a recompute_modules list may hold.
std::string recomputeModuleChoices() {
  std::string text;
  for (std::size_t i = 0; i < kRecomputeModuleNames.size(); ++i) {
    if (i > 0) text += i + 1 == kRecomputeModuleNames.size() ? " or " : ", ";
    text += kRecomputeModuleNames[i];
  }
  return text;
}

}  // namespace

std::vector<std::string> recomputeModuleNames(uint32_t modules) {
  std::vector<std::string> names;
  for (std::size_t bit = 0; bit < kRecomputeModuleNames.size(); ++bit) {
    if ((modules & (1u << bit)) != 0) names.emplace_back(kRecomputeModuleNames[bit]);
  }
  return names;
}

std::string recomputeModulesText(uint32_t modules) {
  std::string text;
  for (const std::string& name : recomputeModuleNames(modules)) text += (text.empty() ? "" : ", ") + name;
  return text;
}

int64_t ParallelPlan::microbatches(const TrainingSpec& training) const {
  assert(dp > 0 && "resolvePlan fills in dp");
  return training.global_batch_size / (dp * training.micro_batch_size);
}

namespace {

// `count` parts of `layers` layers: the first and the last given ones, the rest spread evenly
// over the others (checkPlan rejects a rest that does not split evenly).
std::vector<int64_t> splitWithEnds(int64_t layers, int64_t count, std::optional<int64_t> first,
                                   std::optional<int64_t> last) {
  std::vector<int64_t> parts(static_cast<std::size_t>(count), 0);
  int64_t remaining = layers;
  int64_t middle = count;
  if (first) {
    parts.front() = *first;
    remaining -= *first;
    --middle;
  }
  if (last) {
    parts.back() = *last;
    remaining -= *last;
    --middle;
  }
  if (middle == 0) return parts;
  assert(remaining % middle == 0 && "checkPlan rejects uneven middle stages");
  const std::size_t begin = first ? 1 : 0;
  const std::size_t end = parts.size() - (last ? 1 : 0);
  for (std::size_t part = begin; part < end; ++part) parts[part] = remaining / middle;
  return parts;
}

}  // namespace

std::vector<int64_t> ParallelPlan::layersPerStage(int64_t layers) const {
  assert(pp > 0);
  if (runsBothDirections(schedule)) {
    // Each GPU holds its stage of one direction and the mirror stage of the other.
    const std::vector<int64_t> split = splitWithEnds(layers, pp, first_stage_layers, last_stage_layers);
    std::vector<int64_t> both(split.size());
    for (std::size_t s = 0; s < split.size(); ++s) both[s] = split[s] + split[split.size() - 1 - s];
    return both;
  }
  if (!placesChunksInAV(schedule)) return splitWithEnds(layers, pp, first_stage_layers, last_stage_layers);
  const std::vector<int64_t> chunks = layersPerVChunk(layers);
  std::vector<int64_t> stages(static_cast<std::size_t>(pp), 0);
  for (int64_t stage = 0; stage < pp; ++stage) {
    stages[static_cast<std::size_t>(stage)] = chunks[static_cast<std::size_t>(virtualStage(stage, 0))] +
                                              chunks[static_cast<std::size_t>(virtualStage(stage, 1))];
  }
  return stages;
}

std::vector<int64_t> ParallelPlan::layersPerVChunk(int64_t layers) const {
  assert(pp > 0 && placesChunksInAV(schedule));
  return splitWithEnds(layers, 2 * pp, first_stage_layers, last_stage_layers);
}

int64_t ParallelPlan::layersOfChunk(int64_t layers, int64_t stage, int64_t chunk) const {
  assert(stage >= 0 && stage < pp && chunk >= 0 && chunk < virtual_stages);
  if (placesChunksInAV(schedule)) return layersPerVChunk(layers)[static_cast<std::size_t>(virtualStage(stage, chunk))];
  if (runsBothDirections(schedule)) {
    return splitWithEnds(layers, pp, first_stage_layers,
                         last_stage_layers)[static_cast<std::size_t>(virtualStage(stage, chunk) % pp)];
  }
  const int64_t stage_layers = layersPerStage(layers)[static_cast<std::size_t>(stage)];
  const int64_t base = stage_layers / virtual_stages;
  const int64_t longer = stage_layers % virtual_stages;  // chunks that hold base + 1
  // The last stage's shorter chunks are its last ones; every other stage's its first ones.
  const bool longer_chunk = stage == pp - 1 && pp > 1 ? chunk < longer : chunk >= virtual_stages - longer;
  return base + (longer_chunk ? 1 : 0);
}

int64_t ParallelPlan::firstLayerOfChunk(int64_t layers, int64_t stage, int64_t chunk) const {
  assert(stage >= 0 && stage < pp && chunk >= 0 && chunk < virtual_stages);
  int64_t first = 0;
  // DualPipe: the layers before the chunk's stage in its own direction.
  const int64_t begin = runsBothDirections(schedule) && virtualStage(stage, chunk) >= pp ? pp : 0;
  for (int64_t virtual_stage = begin; virtual_stage < virtualStage(stage, chunk); ++virtual_stage) {
    const StageChunk before = stageChunkOf(virtual_stage);
    first += layersOfChunk(layers, before.stage, before.chunk);
  }
  return first;
}

int64_t ParallelPlan::virtualStage(int64_t stage, int64_t chunk) const {
  assert(stage >= 0 && stage < pp && chunk >= 0 && chunk < virtual_stages);
  if (placesChunksInAV(schedule) || runsBothDirections(schedule)) return chunk == 0 ? stage : 2 * pp - 1 - stage;
  return chunk * pp + stage;
}

ParallelPlan::StageChunk ParallelPlan::stageChunkOf(int64_t virtual_stage) const {
  assert(virtual_stage >= 0 && virtual_stage < pp * virtual_stages);
  if (placesChunksInAV(schedule) || runsBothDirections(schedule)) {
    return virtual_stage < pp ? StageChunk{virtual_stage, 0} : StageChunk{2 * pp - 1 - virtual_stage, 1};
  }
  return {virtual_stage % pp, virtual_stage / pp};
}

int64_t ParallelPlan::recomputedLayersOfChunk(int64_t chunk_layers) const {
  if (recompute == Recompute::kNone) return 0;
  return recompute_num_layers ? std::min(*recompute_num_layers, chunk_layers) : chunk_layers;
}

bool ParallelPlan::partialRecompute(int64_t layers) const {
  if (recompute == Recompute::kNone || !recompute_num_layers) return false;
  for (int64_t stage = 0; stage < pp; ++stage) {
    for (int64_t chunk = 0; chunk < virtual_stages; ++chunk) {
      const int64_t chunk_layers = layersOfChunk(layers, stage, chunk);
      if (recomputedLayersOfChunk(chunk_layers) < chunk_layers) return true;
    }
  }
  return false;
}

std::string recomputeText(const ParallelPlan& plan) {
  std::string text(recomputeName(plan.recompute));
  if (plan.recompute_num_layers)
    text += ", first " + std::to_string(*plan.recompute_num_layers) + " layers of each chunk";
  if (plan.recomputesOtherModules()) {
    text += plan.recompute_modules == 0 ? " (no modules)" : " (" + recomputeModulesText(plan.recompute_modules) + ")";
  }
  return text;
}

std::string recomputeLabel(const ParallelPlan& plan) {
  if (plan.recompute == Recompute::kSelectiveOp) return "sel_op";
  if (plan.recomputesOtherModules()) return "sel_mod";
  std::string text(recomputeName(plan.recompute));
  if (plan.recompute_num_layers) text += "/" + std::to_string(*plan.recompute_num_layers);
  return text;
}

std::string ParallelPlan::unevenSplitText(int64_t layers) const {
  if (!first_stage_layers && !last_stage_layers) return {};
  const bool v = placesChunksInAV(schedule);
  const std::vector<int64_t> parts =
      v ? layersPerVChunk(layers) : splitWithEnds(layers, pp, first_stage_layers, last_stage_layers);
  const auto count = static_cast<int64_t>(parts.size());
  std::string text = std::to_string(parts.front());
  if (count > 2) text += " + " + std::to_string(count - 2) + " x " + std::to_string(parts[1]);
  if (count > 1) text += " + " + std::to_string(parts.back());
  return v ? "V: " + text : text;
}

// Parameters per data-parallel gradient bucket (--ddp-bucket-size). Each bucket is its own
// collective in the task graph: 1M parameters (Megatron-Core's per-rank step; its default
// floor is 40M) keeps a trillion-parameter chunk to a million buckets, and smaller buckets
// than that are latency-bound in practice. Above: more parameters than any model has.
constexpr double kMinDdpBucketSize = 1e6;
constexpr double kMaxDdpBucketSize = 1e15;

ParallelPlan readParallelPlan(const ConfigNode& section) {
  section.allowKeys({"gpus",
                     "tp",
                     "pp",
                     "dp",
                     "cp",
                     "ep",
                     "etp",
                     "sequence_parallel",
                     "virtual_stages",
                     "schedule",
                     "zero",
                     "recompute",
                     "recompute_num_layers",
                     "recompute_modules",
                     "overlap_grad_reduce",
                     "overlap_param_gather",
                     "ddp_bucket_size",
                     "tp_comm_overlap",
                     "tp_comm_overlap_config",
                     "first_stage_layers",
                     "last_stage_layers",
                     "moe_a2a_overlap",
                     "moe_dispatcher"});
  ParallelPlan plan;
  if (auto gpus = section.optionalChild("gpus")) plan.gpus = gpus->asPositiveInteger();
  plan.tp = section.positiveInteger("tp", 1);
  plan.pp = section.positiveInteger("pp", 1);
  if (auto dp = section.optionalChild("dp")) {
    if (!(dp->isScalar() && dp->yaml().Scalar() == "auto")) {
      try {
        plan.dp = dp->asPositiveInteger();
      } catch (const InputError&) {
        dp->failExpected("a positive integer or auto");
      }
    }
  }
  plan.cp = section.positiveInteger("cp", 1);
  plan.ep = section.positiveInteger("ep", 1);
  if (auto etp = section.optionalChild("etp")) plan.etp = etp->asPositiveInteger();
  plan.sequence_parallel = section.boolean("sequence_parallel", false);
  plan.virtual_stages = section.positiveInteger("virtual_stages", 1);
  const std::string schedule =
      section.enumeration("schedule", {"gpipe", "1f1b", "zero_bubble", "zbv", "dualpipev", "dualpipe"}, "1f1b");
  plan.schedule = schedule == "gpipe"         ? PipelineSchedule::kGpipe
                  : schedule == "zero_bubble" ? PipelineSchedule::kZeroBubble
                  : schedule == "zbv"         ? PipelineSchedule::kZeroBubbleV
                  : schedule == "dualpipev"   ? PipelineSchedule::kDualPipeV
                  : schedule == "dualpipe"    ? PipelineSchedule::kDualPipe
                                              : PipelineSchedule::kOneFOneB;
  plan.zero = std::stoi(section.enumeration("zero", {"0", "1", "2", "3"}, "0"));
  const std::string recompute = section.enumeration("recompute", {"none", "selective", "full", "selective_op"}, "none");
  plan.recompute = recompute == "full"           ? Recompute::kFull
                   : recompute == "selective"    ? Recompute::kSelective
                   : recompute == "selective_op" ? Recompute::kSelectiveOp
                                                 : Recompute::kNone;
  if (auto count = section.optionalChild("recompute_num_layers"))
    plan.recompute_num_layers = count->asPositiveInteger();
  // Read as Megatron-Core reads --recompute-modules: only recompute: selective reruns them, so
  // `--set parallelism.recompute=full` on a file that lists them needs no other change.
  if (auto modules = section.optionalChild("recompute_modules")) {
    plan.recompute_modules = 0;
    for (const ConfigNode& item : modules->elements()) {
      const auto* found = std::find(kRecomputeModuleNames.begin(), kRecomputeModuleNames.end(),
                                    item.isScalar() ? item.yaml().Scalar() : std::string());
      if (found == kRecomputeModuleNames.end()) item.failExpected(recomputeModuleChoices());
      plan.recompute_modules |= 1u << static_cast<uint32_t>(found - kRecomputeModuleNames.begin());
    }
  }
  plan.overlap_grad_reduce = section.boolean("overlap_grad_reduce", true);
  plan.overlap_param_gather = section.boolean("overlap_param_gather", true);
  if (auto bucket = section.optionalChild("ddp_bucket_size")) {
    plan.ddp_bucket_size = bucket->asNumberIn(kMinDdpBucketSize, kMaxDdpBucketSize);
  }
  plan.tp_comm_overlap = section.boolean("tp_comm_overlap", false);
  plan.moe_a2a_overlap = section.boolean("moe_a2a_overlap", false);
  plan.moe_dispatcher = section.enumeration("moe_dispatcher", {"alltoall", "flex"}, "alltoall") == "flex"
                            ? MoeDispatcher::kFlex
                            : MoeDispatcher::kAllToAll;
  if (auto config = section.optionalChild("tp_comm_overlap_config")) {
    plan.tp_comm_overlap_config = readTpCommOverlapConfig(*config);
  }
  if (auto first = section.optionalChild("first_stage_layers")) plan.first_stage_layers = first->asNonNegativeInteger();
  if (auto last = section.optionalChild("last_stage_layers")) plan.last_stage_layers = last->asNonNegativeInteger();
  return plan;
}

}  // namespace trainsim::parallelism
