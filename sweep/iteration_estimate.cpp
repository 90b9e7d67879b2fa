#include "sweep/iteration_estimate.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "parallelism/chunk_workload.h"
#include "parallelism/compute_timer.h"
#include "parallelism/memory_model.h"
#include "parallelism/micro_batch_shard.h"
#include "parallelism/parallel_group_members.h"
#include "parallelism/pass_work.h"
#include "parallelism/pipeline_schedule.h"
#include "parallelism/rank_layout.h"
#include "parallelism/transformer_workload.h"
#include "perf/collective_builder.h"

namespace trainsim::sweep {
namespace {

using parallelism::ParallelGroup;
using parallelism::PassKind;

// Bytes of the requests the link load is measured with: every flow's bytes are proportional
// to its request's for a given algorithm, protocol and channel count.
constexpr double kReferenceBytes = 1024.0 * 1024.0 * 1024.0;

// ZeRO-3 at pp = 1 (one chunk), as IterationBuilder schedules it (DeepSpeed stage 3,
// PyTorch FSDP: parameters are freed after use and gathered again before every pass):
//   - the first pass runs bucket by bucket behind a bucketed parameter all-gather that
//     starts with the iteration (gatheredPassEnd);
//   - every later pass waits for a full all-gather, issued after the previous gather and
//     when the previous pass's first compute task is done: the zero-length marker with
//     tp_comm_overlap (so as that pass starts), else its whole compute;
//   - every backward but the last reduce-scatters its gradients once its collectives are
//     done, after the previous reduce-scatter.
// Gathers and reduce-scatters cross the same data-parallel links: when one is issued while
// the other is in flight they share them (both at half rate until the shorter is done), as
// the flow network shares them.
struct Zero3Pass {
  double compute = 0.0;  // the pass's compute, after which the next gather may be issued
  double total = 0.0;    // compute and its tensor/context-parallel collectives
};
struct Zero3Timeline {
  double last_backward_end = 0.0;
  double reduce_free = 0.0;  // when the last of the per-micro-batch reduce-scatters is done
};
// When a pass of `seconds`, split evenly into `buckets` parts, ends if each part must also
// wait for its bucket of a parameter all-gather whose buckets arrive every `bucket_gather`
// seconds from time 0 (IterationBuilder::addParameterGathers: the chunk's first forward).
// The last part waits longest when the gather is slower than the compute, else the first.
double gatheredPassEnd(double seconds, double buckets, double bucket_gather) {
  return std::max(bucket_gather + seconds, buckets * bucket_gather + seconds / buckets);
}

Zero3Timeline zero3Timeline(const std::vector<parallelism::PipelineStep>& order, const Zero3Pass& forward,
                            const Zero3Pass& backward, bool issue_at_start, double bucket_gather, double buckets,
                            double gather, double reduce) {
  std::size_t last_backward = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (order[i].pass == PassKind::kBackward) last_backward = i;
  }
  // A transfer of `seconds` (alone) issued at `at` while the other chain is busy until
  // `other_end`: both run at half rate until the shorter is done.
  auto share = [](double at, double seconds, double& other_end) {
    const double overlap = std::min(seconds, std::max(0.0, other_end - at));
    other_end += overlap;
    return at + seconds + overlap;
  };
  double gather_end = buckets * bucket_gather;
  double ready = 0.0;  // the current pass's parameters (the first pass waits bucket by bucket)
  double reduce_end = 0.0;
  double pass_end = 0.0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Zero3Pass& pass = order[i].pass == PassKind::kForward ? forward : backward;
    const double start = std::max(pass_end, ready);
    pass_end = i == 0 ? gatheredPassEnd(pass.total, buckets, bucket_gather) : start + pass.total;
    if (i + 1 < order.size()) {
      const double issued = std::max(gather_end, issue_at_start ? start : start + pass.compute);
      gather_end = share(issued, gather, reduce_end);
    }
    if (order[i].pass == PassKind::kBackward && i != last_backward) {
      reduce_end = share(std::max(pass_end, reduce_end), reduce, gather_end);
    }
    ready = gather_end;
  }
  return {pass_end, reduce_end};
}

// The kind's group of rank 0.
std::vector<int64_t> groupOf(const parallelism::RankLayout& layout, ParallelGroup group) {
  return parallelism::groupMembers(layout, group, parallelism::RankCoordinate{});
}

IterationEstimator::GroupKind kindOf(ParallelGroup group) {
  switch (group) {
    case ParallelGroup::kContext: return IterationEstimator::GroupKind::kContext;
    case ParallelGroup::kExpert: return IterationEstimator::GroupKind::kExpert;
    case ParallelGroup::kExpertTensor: return IterationEstimator::GroupKind::kExpertTensor;
    case ParallelGroup::kTensor:
    case ParallelGroup::kPipeline: break;
  }
  return IterationEstimator::GroupKind::kTensor;
}

// A chunk's `layers` transformer layers: chunk (0, 0)'s layer part (`first_parts` front;
// the layer's workload is the same on every stage) with its repeats set to that count.
parallelism::ChunkPart layerPart(const std::vector<parallelism::ChunkPart>& first_parts, int64_t layers) {
  parallelism::ChunkPart part = first_parts.front();
  part.repeats = static_cast<double>(layers);
  return part;
}

// The parts of chunk (stage, chunk) other than its transformer layers: the embedding on the
// first chunk of the first stage, the output layer and loss on the last of the last
// (parallelism/chunk_workload.h). `first_parts`: chunk (0, 0)'s.
std::vector<parallelism::ChunkPart> otherParts(const parallelism::Experiment& experiment,
                                               const std::vector<parallelism::ChunkPart>& first_parts,
                                               const parallelism::FlopsOptions& flops, int64_t stage, int64_t chunk) {
  const auto& plan = experiment.plan;
  const bool first = plan.holdsEmbedding(stage, chunk);
  const bool last = plan.holdsOutput(stage, chunk);
  std::vector<parallelism::ChunkPart> others;
  if (!first && !last) return others;
  const auto parts = first ? first_parts : chunkWorkloads(experiment, stage, chunk, flops);
  for (const auto& part : parts) {
    if (!part.recomputable) others.push_back(part);
  }
  return others;
}

// Whether every chunk's transformer layers are one kind of layer and no chunk holds more
// (no multi-token-prediction modules, every layer under the plan's recomputation): a chunk is then chunk (0, 0)'s layer
// part with its repeats set to the chunk's layer count, plus otherParts, and chunks of equal layer counts cost the
// same. Otherwise (dense first layers, layer frequencies, sliding-window layers, MTP modules, or a chunk (0, 0)
// without a layer to take the part from: a V whose first chunk holds only the embedding) each chunk is priced from
// its own parts.
bool uniformChunks(const parallelism::Experiment& experiment) {
  return experiment.model.uniformLayers() && experiment.model.mtp_layers == 0 &&
         !experiment.plan.partialRecompute(experiment.model.layers) &&
         experiment.plan.layersOfChunk(experiment.model.layers, 0, 0) > 0;
}

// The parts the screen prices for chunk (stage, chunk): as the builder's chunkWorkloads,
// with uniform chunks built from chunk (0, 0)'s parts (`first_parts`).
std::vector<parallelism::ChunkPart> screenParts(const parallelism::Experiment& experiment,
                                                const std::vector<parallelism::ChunkPart>& first_parts,
                                                const parallelism::FlopsOptions& flops, int64_t stage, int64_t chunk) {
  if (!uniformChunks(experiment)) return chunkWorkloads(experiment, stage, chunk, flops);
  std::vector<parallelism::ChunkPart> parts{
      layerPart(first_parts, experiment.plan.layersOfChunk(experiment.model.layers, stage, chunk))};
  for (auto& part : otherParts(experiment, first_parts, flops, stage, chunk)) parts.push_back(std::move(part));
  return parts;
}

// The micro-batches each chunk of a GPU runs: every one passes every chunk of a stage, but
// under DualPipe only its direction's, half the micro-batches through each of the two chunks.
double microbatchesPerChunk(const parallelism::Experiment& experiment) {
  const auto microbatches = static_cast<double>(experiment.plan.microbatches(experiment.training));
  return parallelism::runsBothDirections(experiment.plan.schedule) ? microbatches / 2.0 : microbatches;
}

// ZeRO-3 that gathers before every pass, as the builder runs it: pp = 1 and one chunk
// (checkPlan), over more than one replica. (With pipeline parallelism, only in blocks, the
// parameters are gathered once per iteration, as ZeRO 1-2's overlapped gather.)
bool zero3(const parallelism::ParallelPlan& plan) { return plan.zero >= 3 && plan.dp * plan.cp > 1 && plan.pp == 1; }

// ZeRO-3 in transformer blocks (training.zero3.unit: block; parallelism/sharded_data_parallel.h).
bool shardedBlocks(const parallelism::Experiment& experiment) {
  return experiment.plan.zero >= 3 && experiment.training.zero3.unit == parallelism::ShardingUnit::kBlock;
}

// Without pipeline parallelism, the block collectives of m micro-batches as
// IterationBuilder::addBlockCollectives runs them: each pass computes beside its blocks'
// gathers (the backward's only where the forward resharded them, less the block the forward
// ended with) and, in a backward, their reduce-scatters; the two chains share the
// data-parallel links, so a pass takes the longer of its compute and their sum. The prefetch
// crosses pass boundaries: only the iteration's first gather and last reduce-scatter are
// exposed, besides the SMs the collectives take from the compute beside them (`contended`).
// Under hybrid sharding each block's reduce-scatter is followed by the all-reduce across the
// shard groups (`block_across`) on a stream of its own: where the shard groups stay inside a
// node it runs on other links (between nodes) and the backward's collectives take the longer
// of the two; where they span nodes all three share the NICs and add up (`across_shares_links`).
// A block's calls beyond the first and a list-form call's copies (`gather_fixed`,
// `reduce_fixed`: part of `block_gather` and `block_reduce`) hold no link: the two chains
// overlap them, so the backward takes the longer of the links' sum and either chain. The
// host's share of list-form calls (`host`, a block's gather and reduce-scatter) stalls the
// compute.
struct BlockHostStalls {
  double gather = 0.0;
  double reduce = 0.0;
  double once = 0.0;  // an iteration's gathers of persistent tensors, calls and host stalls
};
template <typename Contended>
double blockTimeline(double microbatches, double blocks, bool reshard, double forward, double backward,
                     double block_gather, double block_reduce, const Contended& contended, double block_across = 0.0,
                     bool across_shares_links = false, double gather_fixed = 0.0, double reduce_fixed = 0.0,
                     BlockHostStalls host = {}) {
  const double forward_comm = blocks * block_gather;
  const double backward_gathers = reshard ? blocks - 1.0 : 0.0;
  const double links =
      std::max({backward_gathers * (block_gather - gather_fixed) + blocks * (block_reduce - reduce_fixed),
                backward_gathers * block_gather, blocks * block_reduce});
  const double backward_comm =
      across_shares_links ? links + blocks * block_across : std::max(links, blocks * block_across);
  const double stalls = (blocks + backward_gathers) * host.gather + blocks * host.reduce;
  const double passes = std::max(forward, forward_comm) + contended(forward_comm, forward) +
                        std::max(backward, backward_comm) + contended(backward_comm, backward) + stalls;
  return microbatches * passes + block_gather + block_reduce + block_across + host.once;
}

// The groups of `kind` a data-parallel group `group` holds: under hybrid sharding with
// `hybrid` shard groups, its shard groups (kShard) or its ranks holding the same shard
// (kShardReplicas); else the group itself.
std::vector<std::vector<int64_t>> hybridGroups(IterationEstimator::GroupKind kind, const std::vector<int64_t>& group,
                                               int64_t hybrid) {
  using Kind = IterationEstimator::GroupKind;
  if ((kind != Kind::kShard && kind != Kind::kShardReplicas) || hybrid < 2) return {group};
  const auto shard_groups = static_cast<std::size_t>(hybrid);
  const std::size_t size = group.size() / shard_groups;
  std::vector<std::vector<int64_t>> parts(kind == Kind::kShard ? shard_groups : size);
  for (std::size_t g = 0; g < shard_groups; ++g) {
    for (std::size_t j = 0; j < size; ++j) parts[kind == Kind::kShard ? g : j].push_back(group[g * size + j]);
  }
  return parts;
}

}  // namespace

IterationEstimator::IterationEstimator(const topology::ClusterSpec& spec, topology::Precision precision,
                                       const parallelism::SimulationOptions& options)
    : cluster_(std::make_unique<topology::Cluster>(valueOrThrow(topology::Cluster::build(spec)))),
      router_(std::make_unique<topology::Router>(*cluster_)),
      compute_(valueOrThrow(perf::ComputeModel::create(spec.gpu, precision, options.compute))),
      options_(options),
      link_capacity_Bps_(perf::CollectiveBuilder::effectiveCapacities(*cluster_, options.communication)) {}

const IterationEstimator::TunerEstimate& IterationEstimator::tunerEstimate(const parallelism::ParallelPlan& plan,
                                                                           GroupKind kind, perf::CollectiveOp op,
                                                                           const std::vector<int64_t>& ranks,
                                                                           double bytes, int64_t hybrid) {
  const auto key = std::make_tuple(static_cast<int>(op), static_cast<int>(kind), plan.tp, plan.cp, plan.dp, plan.ep,
                                   plan.expertTensorParallel(), bytes, hybrid);
  auto cached = tuner_cache_.find(key);
  if (cached != tuner_cache_.end()) return cached->second;
  perf::CollectiveBuilder builder(*cluster_, *router_, scratch_graph_, options_.communication);
  perf::CollectiveRequest request{op, ranks, bytes, {}, {}};
  TunerEstimate estimate;
  estimate.choice = valueOrThrow(builder.choose(request));
  // The tuner's time is fixed costs (launch, base and per-step latencies), the pipeline
  // fill (which stops growing once a step's share of the bytes reaches a chunk) and bytes /
  // bus bandwidth. Its slope far beyond the fill's saturation is the bandwidth term alone.
  request.algorithm = estimate.choice.algorithm;
  request.protocol = estimate.choice.protocol;
  constexpr double kLarge = 1024.0 * 1024.0 * 1024.0 * 1024.0;  // 1 TiB
  request.bytes = kLarge;
  const double at_large = valueOrThrow(builder.choose(request)).estimated_time_s;
  request.bytes = 2.0 * kLarge;
  const double slope = (valueOrThrow(builder.choose(request)).estimated_time_s - at_large) / kLarge;
  estimate.fixed_s = estimate.choice.estimated_time_s - slope * bytes;
  return tuner_cache_.emplace(key, estimate).first->second;
}

double IterationEstimator::collectiveSeconds(const parallelism::ParallelPlan& plan, GroupKind kind,
                                             perf::CollectiveOp op, const std::vector<int64_t>& ranks, double bytes,
                                             int64_t hybrid) {
  if (ranks.size() < 2) return 0.0;
  const TunerEstimate& tuner = tunerEstimate(plan, kind, op, ranks, bytes, hybrid);
  if (bytes <= 0.0) return tuner.choice.estimated_time_s;
  // The tuner's bandwidth term prices one group with the node's NIC bandwidth / its GPUs per
  // node. The simulation lays a ring out on min(NICs, GPUs per node) channels, each leaving
  // the node through one NIC, while the groups of the same kind on the other GPUs of the
  // stage run the same collective over the other NICs and share the fabric's links (ECMP).
  // So a group with one GPU per node gets one NIC, not eight, and a full node gets all
  // eight, not one. The bytes are timed by the busiest link of those flows instead.
  double seconds_per_byte = busiestLinkSecondsPerByte(plan, kind, op, tuner.choice, hybrid);
  // NCCL's cap on the protocol's bus bandwidth (LL's, LL128's), which the flows honour too.
  if (tuner.choice.protocol_max_bus_Bps > 0.0) {
    const double per_bus_byte = tuner.choice.algorithm == perf::CollectiveAlgorithm::kTree
                                    ? 1.0 / options_.communication.tree_algorithm_bandwidth_ratio
                                    : perf::busBandwidthFactor(op, static_cast<int64_t>(ranks.size()));
    seconds_per_byte = std::max(seconds_per_byte, per_bus_byte / tuner.choice.protocol_max_bus_Bps);
  }
  return tuner.fixed_s + bytes * seconds_per_byte;
}

double IterationEstimator::busiestLink(const sim::TaskGraph& graph) {
  link_load_.resize(link_capacity_Bps_.size(), 0.0);
  touched_links_.clear();
  double seconds = 0.0;
  for (sim::TaskId task = 0; task < graph.taskCount(); ++task) {
    if (graph.kind(task) != sim::TaskKind::kFlow) continue;
    const double bytes = graph.flowBytes(task);
    const sim::RouteId route = graph.route(task);
    const auto links = graph.routeLinks(route);
    const auto multiplicity = graph.routeMultiplicity(route);  // a bundle's members per link; empty: 1
    for (std::size_t i = 0; i < links.size(); ++i) {
      if (link_load_[links[i]] == 0.0) touched_links_.push_back(links[i]);
      link_load_[links[i]] += multiplicity.empty() ? bytes : bytes * multiplicity[i];
    }
    seconds = std::max(seconds, bytes / graph.flowRateCap(task));  // NVLS: capped flows
  }
  for (topology::LinkId link : touched_links_) {
    if (link_capacity_Bps_[link] > 0.0) seconds = std::max(seconds, link_load_[link] / link_capacity_Bps_[link]);
    link_load_[link] = 0.0;
  }
  return seconds;
}

double IterationEstimator::busiestLinkSecondsPerByte(const parallelism::ParallelPlan& plan, GroupKind kind,
                                                     perf::CollectiveOp op, const perf::CollectiveChoice& choice,
                                                     int64_t hybrid) {
  // Flow bytes scale with 1 / the protocol's bandwidth factor (sim::detail::wireBytes), and a
  // ring reduce-scatter moves the same bytes over the same edges as an all-gather: measured
  // once with the Simple protocol per flow pattern, without the protocol's own cap
  // (collectiveSeconds adds it).
  const auto& communication = options_.communication;
  const double protocol_scale = communication.protocolBandwidthFactor(choice.algorithm, perf::Protocol::kSimple) /
                                communication.protocolBandwidthFactor(choice.algorithm, choice.protocol);
  const perf::CollectiveOp pattern = op == perf::CollectiveOp::kReduceScatter ? perf::CollectiveOp::kAllGather : op;
  // The groups of each pipeline stage run the collective at once (they follow the same
  // schedule, so in step), each built from its first rank as IterationBuilder does: in
  // symmetric mode only replica 0 runs tensor/context/expert collectives, while
  // data-parallel groups span every replica. Stages take turns in the pipeline and the
  // slowest one sets its pace: the busiest link of the worst stage (they differ by ECMP).
  const bool data = kind == GroupKind::kData || kind == GroupKind::kExpertData || kind == GroupKind::kShard ||
                    kind == GroupKind::kShardReplicas;
  const int64_t replicas = options_.iteration.symmetric && !data ? 1 : plan.dp;
  const bool expert = kind == GroupKind::kExpert || kind == GroupKind::kExpertTensor || kind == GroupKind::kExpertData;
  // Stage 0 holds ranks [0, tp x cp x dp) whatever pp is: when its groups stay inside nodes
  // (so every stage is alike), the result is kept under pp 0 for every pp.
  LinkKey key{static_cast<int>(pattern),
              static_cast<int>(choice.algorithm),
              choice.channels,
              static_cast<int>(kind),
              plan.tp,
              plan.cp,
              replicas,
              0,
              expert ? plan.ep : 0,
              expert ? plan.expertTensorParallel() : 0,
              hybrid};
  auto cached = link_cache_.find(key);
  if (cached != link_cache_.end()) return cached->second * protocol_scale;
  std::get<7>(key) = plan.pp;
  cached = link_cache_.find(key);
  if (cached != link_cache_.end()) return cached->second * protocol_scale;
  const parallelism::RankLayout layout(plan);
  perf::CollectiveChoice simple = choice;
  simple.protocol = perf::Protocol::kSimple;
  simple.protocol_max_bus_Bps = 0.0;
  double busiest = 0.0;
  bool network = false;  // whether a group of stage 0 spans nodes
  for (int64_t stage = 0; stage < plan.pp; ++stage) {
    sim::TaskGraph graph;
    perf::CollectiveBuilder builder(*cluster_, *router_, graph, options_.communication);
    for (int64_t dp = 0; dp < replicas; ++dp) {
      for (int64_t cp = 0; cp < plan.cp; ++cp) {
        for (int64_t tp = 0; tp < plan.tp; ++tp) {
          const parallelism::RankCoordinate coordinate{tp, cp, dp, stage};
          std::vector<int64_t> group;
          switch (kind) {
            case GroupKind::kTensor: group = layout.tensorGroup(coordinate); break;
            case GroupKind::kContext: group = layout.contextGroup(coordinate); break;
            case GroupKind::kExpert: group = layout.expertGroup(coordinate); break;
            case GroupKind::kExpertTensor: group = layout.expertTensorGroup(coordinate); break;
            case GroupKind::kData:
            case GroupKind::kShard:
            case GroupKind::kShardReplicas: group = layout.dataGroup(coordinate); break;
            case GroupKind::kExpertData: group = layout.expertDataGroup(coordinate); break;
            case GroupKind::kPipeline: break;  // not a collective group
          }
          if (group.size() < 2 || group.front() != layout.rank(coordinate)) continue;
          for (const std::vector<int64_t>& part : hybridGroups(kind, group, hybrid)) {
            if (part.size() < 2) continue;
            if (stage == 0 && !network) network = !builder.layout(part).singleNode();
            builder.add({pattern, part, kReferenceBytes, simple.algorithm, simple.protocol}, simple);
          }
        }
      }
    }
    busiest = std::max(busiest, busiestLink(graph));
    if (!network) break;
  }
  const double seconds_per_byte = busiest / kReferenceBytes;
  if (!network) std::get<7>(key) = 0;
  link_cache_.emplace(key, seconds_per_byte);
  return seconds_per_byte * protocol_scale;
}

parallelism::PassWork IterationEstimator::partWork(const parallelism::ParallelPlan& plan,
                                                   const parallelism::ChunkPart& part,
                                                   const parallelism::OpTimer& timer) {
  const parallelism::RankLayout layout(plan);
  const auto one_call_seconds = [&](const parallelism::Communication& comm) {
    return collectiveSeconds(plan, kindOf(comm.group), comm.op, groupOf(layout, comm.group), comm.bytes);
  };
  parallelism::PassWork work;
  parallelism::addPassWork(work, part, plan, timer, one_call_seconds, options_.communication, options_.iteration.host);
  return work;
}

std::vector<parallelism::PassWork> IterationEstimator::chunkPassWork(const parallelism::Experiment& experiment,
                                                                     int64_t stage, int64_t chunk) {
  const auto& plan = experiment.plan;
  const auto& flops = options_.iteration.flops;
  const parallelism::ComputeTimer timer(compute_);
  const std::vector<parallelism::ChunkPart> first_parts = chunkWorkloads(experiment, 0, 0, flops);
  std::vector<parallelism::PassWork> works;
  for (const auto& part : screenParts(experiment, first_parts, flops, stage, chunk)) {
    works.push_back(partWork(plan, part, timer));
  }
  return works;
}

// One model chunk's pass times for one micro-batch on one GPU.
struct IterationEstimator::ChunkTimes {
  double forward_compute = 0.0;
  double backward_compute = 0.0;  // recomputation included
  double forward_comm = 0.0;      // tensor/context/expert-parallel collectives
  double backward_comm = 0.0;
  // The part that runs beside the pass's compute: tensor-parallel collectives bound to a
  // GEMM under tp_comm_overlap (Communication::beside) and ring-attention exchanges
  // (Communication::beside_attention).
  double beside_forward_comm = 0.0;
  double beside_backward_comm = 0.0;
  // What the collectives beside the compute that hold SMs (the paired expert all-to-alls,
  // PassCollective::needs_partner) take from it: their share of the SMs times their time
  // (ComputeParameters::collective_sms; IterationBuilder::addGroupCollective's contention).
  double forward_contention = 0.0;
  double backward_contention = 0.0;
  double weight_compute = 0.0;  // of backward_compute, the weight-gradient GEMMs (PassWork::weight_s)

  void add(const ChunkTimes& other) {
    forward_compute += other.forward_compute;
    backward_compute += other.backward_compute;
    weight_compute += other.weight_compute;
    forward_comm += other.forward_comm;
    backward_comm += other.backward_comm;
    beside_forward_comm += other.beside_forward_comm;
    beside_backward_comm += other.beside_backward_comm;
    forward_contention += other.forward_contention;
    backward_contention += other.backward_contention;
  }
  // One pass; the collectives beside the compute cost only what exceeds it.
  [[nodiscard]] double forward() const {
    return std::max(forward_compute + forward_contention, beside_forward_comm) + forward_comm - beside_forward_comm;
  }
  [[nodiscard]] double backward() const {
    return std::max(backward_compute + backward_contention, beside_backward_comm) + backward_comm -
           beside_backward_comm;
  }
  [[nodiscard]] double total() const { return forward() + backward(); }
};

// The pipeline's passes of one iteration, and the chunk times the data-parallel part needs.
struct IterationEstimator::PipelineEstimate {
  double seconds = 0.0;  // m micro-batches of the slowest stage plus fill and drain (0 under ZeRO-3)
  ChunkTimes first_chunk;
  ChunkTimes last_chunk;
  ChunkTimes middle;  // a chunk of transformer layers only
};

// One part of a chunk as the builder accounts it (parallelism/pass_work.h), its collectives
// priced one by one: a call with their summed bytes plus the fixed latency of the other
// calls, each beside the compute or after it.
IterationEstimator::ChunkTimes IterationEstimator::partTimes(const parallelism::ParallelPlan& plan,
                                                             const parallelism::ChunkPart& part,
                                                             const parallelism::OpTimer& timer) {
  const parallelism::RankLayout layout(plan);
  const parallelism::PassWork work = partWork(plan, part, timer);
  ChunkTimes times;
  // With host dispatch a pass lasts at least as long as its kernels' launches (the builder's
  // host stream, parallelism/iteration_builder.h), and a forward waits on its host at syncs.
  const double per_kernel = options_.iteration.host.per_kernel_s;
  const double wait = work.forward_host_wait_s;
  times.forward_compute = work.computeAndExposedSeconds(PassKind::kForward) + wait +
                          std::max(0.0, work.forward_kernels * per_kernel + work.forward_host_extra_s -
                                            work.forward_host_covered_s - work.forward_s - wait);
  times.backward_compute =
      work.computeAndExposedSeconds(PassKind::kBackward) +
      std::max(0.0, work.backward_kernels * per_kernel + work.backward_host_extra_s - work.backward_s);
  times.weight_compute = work.weight_s;
  for (const parallelism::PassCollective& call : work.collectives) {
    if (call.group == ParallelGroup::kPipeline) continue;
    const std::vector<int64_t> group = groupOf(layout, call.group);
    const GroupKind kind = kindOf(call.group);
    const double seconds =
        collectiveSeconds(plan, kind, call.op, group, call.bytes) +
        std::max(0.0, static_cast<double>(call.count) - 1.0) * collectiveSeconds(plan, kind, call.op, group, 0.0);
    (call.backward ? times.backward_comm : times.forward_comm) += seconds;
    if (call.beside_compute) (call.backward ? times.beside_backward_comm : times.beside_forward_comm) += seconds;
    if (call.beside_compute && call.needs_partner) {
      (call.backward ? times.backward_contention : times.forward_contention) +=
          timer.collectiveComputeShare() * seconds;
    }
  }
  return times;
}

// Pipeline: m micro-batches of the slowest stage, plus the fill and drain bubble. The first
// chunk of the first stage adds the embedding, the last of the last stage the output layer
// and loss (parallelism/chunk_workload.h, the builder's list). An uneven split
// (first/last_stage_layers) gives chunks of different layer counts: each count is priced
// once, by the transformer-layer part with its repeats set to that count.
IterationEstimator::PipelineEstimate IterationEstimator::pipelineEstimate(const parallelism::Experiment& experiment,
                                                                          const parallelism::OpTimer& timer) {
  const auto& plan = experiment.plan;
  const auto& model = experiment.model;
  const auto& flops = options_.iteration.flops;
  const std::vector<parallelism::ChunkPart> first_parts = chunkWorkloads(experiment, 0, 0, flops);
  std::map<int64_t, ChunkTimes> layer_times;
  auto layerTimes = [&](int64_t layers) -> ChunkTimes {
    auto found = layer_times.find(layers);
    if (found == layer_times.end()) {
      found = layer_times.emplace(layers, partTimes(plan, layerPart(first_parts, layers), timer)).first;
    }
    return found->second;
  };
  const bool uniform = uniformChunks(experiment);
  // Another model's chunks, each priced once from its own parts: the whole chunk, and its
  // transformer layers alone (the recomputable parts).
  struct OwnChunk {
    ChunkTimes all;
    ChunkTimes layers;
  };
  std::map<std::pair<int64_t, int64_t>, OwnChunk> own_chunks;
  auto ownChunk = [&](int64_t stage, int64_t chunk) -> const OwnChunk& {
    auto [found, inserted] = own_chunks.try_emplace({stage, chunk});
    if (inserted) {
      for (const auto& part : screenParts(experiment, first_parts, flops, stage, chunk)) {
        const ChunkTimes times = partTimes(plan, part, timer);
        found->second.all.add(times);
        if (part.recomputable) found->second.layers.add(times);
      }
    }
    return found->second;
  };
  auto chunkOf = [&](int64_t stage, int64_t chunk) {
    if (!uniform) return ownChunk(stage, chunk).all;
    ChunkTimes times = layerTimes(plan.layersOfChunk(model.layers, stage, chunk));
    for (const auto& part : otherParts(experiment, first_parts, flops, stage, chunk))
      times.add(partTimes(plan, part, timer));
    return times;
  };
  auto layersOf = [&](int64_t stage, int64_t chunk) {
    if (!uniform) return ownChunk(stage, chunk).layers;
    return layerTimes(plan.layersOfChunk(model.layers, stage, chunk));
  };
  // One micro-batch through every chunk of a stage, each chunk's passes priced on their own.
  auto stageTime = [&](int64_t stage) {
    double total = 0.0;
    for (int64_t chunk = 0; chunk < plan.virtual_stages; ++chunk) total += chunkOf(stage, chunk).total();
    return total;
  };
  PipelineEstimate estimate;
  estimate.first_chunk = chunkOf(0, 0);
  const parallelism::ParallelPlan::StageChunk output = plan.stageChunkOf(plan.pp * plan.virtual_stages - 1);
  estimate.last_chunk = chunkOf(output.stage, output.chunk);
  estimate.middle = layersOf(plan.pp > 2 ? 1 : 0, plan.virtual_stages - 1);
  // 1F1B over stages of unequal time t_s per micro-batch: the slowest stage sets the steady
  // state and every stage adds its own share of the fill and drain, (m - 1) max t_s + sum t_s
  // for one chunk per stage; interleaving divides the fill and drain by the chunks. (Pricing
  // the fill at the slowest stage's time overestimated plans with many one-layer stages and a
  // large output layer by up to 1.7x.)
  const double first_time = stageTime(0);
  const double last_time = plan.pp == 1 ? first_time : stageTime(plan.pp - 1);
  const double middle_time = plan.pp > 2 ? stageTime(1) : 0.0;
  const double stage_time = std::max({first_time, last_time, middle_time});
  const double stage_sum =
      plan.pp == 1 ? first_time : first_time + last_time + static_cast<double>(plan.pp - 2) * middle_time;
  const double microbatches = microbatchesPerChunk(experiment);
  const double chunks = static_cast<double>(plan.virtual_stages);
  // A zero-bubble schedule fills the fill and drain with deferred weight-gradient passes:
  // each stage's share of them shrinks from F + B + W to F + B - W (Qi et al. 2024, ZB-H1's
  // bubble (p - 1)(T_F + T_B - T_W) against 1F1B's (p - 1)(T_F + T_B + T_W)), B the
  // input-gradient pass; in proportion on the middle chunk's times.
  double bubble_share = 1.0;
  if (parallelism::splitsWeightGradients(plan.schedule) && estimate.middle.total() > 0.0) {
    bubble_share =
        std::max(0.0, estimate.middle.total() - 2.0 * estimate.middle.weight_compute) / estimate.middle.total();
  }
  // Under ZeRO-3 the passes are timed with their parameter gathers (dataParallelEnd).
  estimate.seconds = zero3(plan) ? 0.0 : microbatches * stage_time + bubble_share * (stage_sum - stage_time) / chunks;
  return estimate;
}

// Pipeline sends: each chunk boundary, both directions, stretches the 1F1B cycle. (Priced
// alone, at the tuner's estimate: the simulation hides most of their time behind other
// stages' work, so pricing their link load as well would overestimate pp-heavy plans.)
double IterationEstimator::pipelineSendSeconds(const parallelism::Experiment& experiment) {
  const auto& plan = experiment.plan;
  if (plan.pp <= 1) return 0.0;
  const auto shard = parallelism::MicroBatchShard::of(experiment.training, plan);
  const parallelism::RankLayout layout(plan);
  const double activation_bytes = (plan.sequence_parallel ? shard.replicatedRegionTokens() : shard.tokens()) *
                                  static_cast<double>(experiment.model.hidden_size) * shard.activationBytes();
  parallelism::RankCoordinate next_stage;
  next_stage.pp = 1;
  const double send = tunerEstimate(plan, GroupKind::kPipeline, perf::CollectiveOp::kSendRecv,
                                    {0, layout.rank(next_stage)}, activation_bytes)
                          .choice.estimated_time_s;
  const double microbatches = microbatchesPerChunk(experiment);
  const double chunks = static_cast<double>(plan.virtual_stages);
  return 2.0 * (microbatches * chunks + static_cast<double>(plan.pp - 1)) * send;
}

// Where the iteration's passes and gradient reduction end, from `seconds` (the passes and
// sends): the last backward's reduction (bucketed under it when overlapped), the parameter
// gather of ZeRO 1-2 (overlapped with the next forward when asked), under ZeRO-3 the whole
// timeline of per-pass gathers and reduce-scatters (zero3Timeline), and under ZeRO-3 in
// blocks the blocks' (blockTimeline, or once a step with pipeline parallelism).
double IterationEstimator::dataParallelEnd(const parallelism::Experiment& experiment, const parallelism::OpTimer& timer,
                                           const PipelineEstimate& pipeline, const parallelism::StageParameters& stage,
                                           double seconds) {
  const auto& plan = experiment.plan;
  const auto& training = experiment.training;
  const auto& iteration = options_.iteration;
  const auto shard = parallelism::MicroBatchShard::of(training, plan);
  const parallelism::RankLayout layout(plan);
  const parallelism::RankCoordinate first_rank;
  // Dense gradients reduce over dp x cp (RankLayout::dataGroup); expert ones, where the
  // experts have groups of their own, over the expert data-parallel group. The two run on
  // their own communicators in the simulation; the screen adds their times.
  const parallelism::ReplicaShares shares = parallelism::replicaShares(plan, stage);
  const std::vector<int64_t> dense_group = layout.dataGroup(first_rank);
  const std::vector<int64_t> expert_group =
      shares.expert > 0.0 ? layout.expertDataGroup(first_rank) : std::vector<int64_t>{};
  if (dense_group.size() < 2 && expert_group.size() < 2) return seconds;
  const double chunks = static_cast<double>(plan.virtual_stages);
  const double chunk_parameters = stage.total() / chunks;
  const auto buckets = static_cast<double>(iteration.grad_buckets.count(plan, chunk_parameters));
  const double grad_bytes = iteration.grad_reduce_bytes_per_parameter.value_or(shard.mainGradientBytes());
  const auto reduce = plan.zero >= 1 ? perf::CollectiveOp::kReduceScatter : perf::CollectiveOp::kAllReduce;
  const bool overlap_grads = plan.overlap_grad_reduce;
  const double parameter_bytes = shard.parameterGatherBytes();  // the all-gathered (updated) parameters
  auto overGroups = [&](perf::CollectiveOp op, double bytes) {
    double total = 0.0;
    if (shares.dense > 0.0) total += collectiveSeconds(plan, GroupKind::kData, op, dense_group, shares.dense * bytes);
    if (shares.expert > 0.0)
      total += collectiveSeconds(plan, GroupKind::kExpertData, op, expert_group, shares.expert * bytes);
    return total;
  };
  auto reduction = [&](double parameters) { return overGroups(reduce, parameters * grad_bytes); };
  auto gathering = [&](double parameters) {
    return overGroups(perf::CollectiveOp::kAllGather, parameters * parameter_bytes);
  };
  // The last backward's reduction: bucketed under the last backward of each chunk (what
  // exceeds it is exposed), or one call per chunk after the last backward.
  const double bucket = overlap_grads ? reduction(chunk_parameters / buckets) : 0.0;
  // (Where the schedule splits the backward, the chunk's last weight-gradient pass.)
  const double hidden_under = chunks * (parallelism::splitsWeightGradients(plan.schedule)
                                            ? pipeline.middle.weight_compute
                                            : pipeline.middle.backward_compute + pipeline.middle.backward_comm);
  // The overlapped collectives hold `share` of the SMs (ComputeParameters::collective_sms):
  // compute of length c beside collectives of length g ends at max(g, c + share x g)
  // instead of max(g, c) (the executor's contention, for one stretch of each).
  const double share = timer.collectiveComputeShare();
  auto contended = [share](double collectives, double compute) {
    return std::max(collectives, compute + share * collectives) - std::max(collectives, compute);
  };
  const double last_reduction = overlap_grads ? std::max(bucket, chunks * buckets * bucket - hidden_under) +
                                                    contended(chunks * buckets * bucket, hidden_under)
                                              : chunks * reduction(chunk_parameters);
  if (shardedBlocks(experiment)) {
    // A chunk's blocks: its share of the model's layers (the end stages may hold fewer).
    const double blocks =
        std::ceil(static_cast<double>(experiment.model.layers) / (static_cast<double>(plan.pp) * chunks));
    const int64_t hybrid = training.zero3.replicas;
    if (plan.pp == 1 && hybrid > 1 && shares.expert <= 0.0) {
      // Hybrid sharding: each block gathered and reduce-scattered over the shard groups, then
      // its gradient shard all-reduced across them (IterationBuilder::addBlockCollectives).
      const auto shard_groups = hybridGroups(GroupKind::kShard, dense_group, hybrid);
      const auto holders = hybridGroups(GroupKind::kShardReplicas, dense_group, hybrid);
      const double block = chunk_parameters / blocks;
      const double shard_size = static_cast<double>(shard_groups.front().size());
      auto oneNode = [&](const std::vector<int64_t>& ranks) {
        const int32_t node = cluster_->device(cluster_->accelerator(ranks.front())).node;
        return std::all_of(ranks.begin(), ranks.end(),
                           [&](int64_t rank) { return cluster_->device(cluster_->accelerator(rank)).node == node; });
      };
      const double block_reduce = collectiveSeconds(plan, GroupKind::kShard, perf::CollectiveOp::kReduceScatter,
                                                    shard_groups.front(), block * grad_bytes, hybrid);
      const double block_across = collectiveSeconds(plan, GroupKind::kShardReplicas, perf::CollectiveOp::kAllReduce,
                                                    holders.front(), block / shard_size * grad_bytes, hybrid);
      return blockTimeline(static_cast<double>(plan.microbatches(training)), blocks,
                           training.zero3.reshardsAfterForward(plan.pp), pipeline.last_chunk.forward(),
                           pipeline.last_chunk.backward(),
                           collectiveSeconds(plan, GroupKind::kShard, perf::CollectiveOp::kAllGather,
                                             shard_groups.front(), block * parameter_bytes, hybrid),
                           block_reduce, contended, block_across, !oneNode(shard_groups.front()));
    }
    // A block's collectives as the stack issues them (training.zero3.gathers_per_block,
    // reduce_scatters_per_block and list_collectives; IterationBuilder::addBlockCollectives):
    // each call beyond the first adds a zero-byte call's latency, each list-form call a copy
    // kernel per rank and, on the host, a view and a launch per rank that the compute waits for.
    const parallelism::ShardedDataParallel& sharding = training.zero3;
    const auto ranks = static_cast<double>(dense_group.size());
    auto blockCalls = [&](perf::CollectiveOp op, double block_bytes, int64_t count) {
      const auto calls = static_cast<double>(count);
      double extra = (calls - 1.0) * overGroups(op, 0.0);
      if (sharding.list_collectives) {
        const double parts = calls * ranks;
        extra += parts * timer.memoryBoundSeconds(2.0 * block_bytes / parts);
      }
      return extra;
    };
    const double per_rank_host =
        sharding.list_collectives ? iteration.host.per_bare_op_s + iteration.host.per_native_kernel_s : 0.0;
    const auto persistent = static_cast<double>(sharding.persistent_gathers_per_block);
    const double persistent_call = overGroups(perf::CollectiveOp::kAllGather, 0.0) + ranks * per_rank_host +
                                   (sharding.list_collectives ? ranks * timer.memoryBoundSeconds(0.0) : 0.0);
    const BlockHostStalls stalls{static_cast<double>(sharding.gathers_per_block) * ranks * per_rank_host,
                                 static_cast<double>(sharding.reduce_scatters_per_block) * ranks * per_rank_host,
                                 blocks * persistent * persistent_call};
    const double block = chunk_parameters / blocks;
    const double gather_fixed =
        blockCalls(perf::CollectiveOp::kAllGather, block * parameter_bytes, sharding.gathers_per_block);
    const double block_gather = gathering(block) + gather_fixed;
    if (plan.pp == 1) {
      const double reduce_fixed = blockCalls(reduce, block * grad_bytes, sharding.reduce_scatters_per_block);
      return blockTimeline(static_cast<double>(plan.microbatches(training)), blocks,
                           training.zero3.reshardsAfterForward(plan.pp), pipeline.last_chunk.forward(),
                           pipeline.last_chunk.backward(), block_gather, reduction(block) + reduce_fixed, contended,
                           0.0, false, gather_fixed, reduce_fixed, stalls);
    }
    // Pipelined: each chunk's blocks gathered under its first forward; after its last backward
    // each block's gradients reduce-scattered in turn (priced as one call a chunk: the blocks'
    // latencies are left out).
    const double forward = pipeline.first_chunk.forward();
    return seconds + chunks * reduction(chunk_parameters) + gatheredPassEnd(forward, blocks, block_gather) - forward +
           contended(chunks * blocks * block_gather, forward);
  }
  if (zero3(plan)) {
    // (The SMs these collectives take from the passes beside them are left to the
    // simulation: the screen's error absorbs them.)
    // ZeRO-3 gathers the parameters before every pass of every micro-batch (they are freed
    // after use) and reduce-scatters every backward's gradients
    // (IterationBuilder::addZero3PassGathers, addZero3Reductions).
    const double gather_bucket = gathering(chunk_parameters / buckets);
    const double whole = reduction(chunk_parameters);
    const auto order = parallelism::stageOrder(plan.schedule, 1, 1, plan.microbatches(training), 0);
    const Zero3Pass forward{pipeline.last_chunk.forward_compute, pipeline.last_chunk.forward()};
    const Zero3Pass backward{pipeline.last_chunk.backward_compute, pipeline.last_chunk.backward()};
    // The prefetch is issued when the pass before starts (IterationBuilder's start marker).
    const Zero3Timeline timeline =
        zero3Timeline(order, forward, backward, true, gather_bucket, buckets, gathering(chunk_parameters), whole);
    // The last backward's reduction, after the previous reduce-scatters (one NCCL stream).
    const double passes_end = timeline.last_backward_end;
    const double reduction_start =
        std::max(timeline.reduce_free, overlap_grads ? passes_end - backward.total : passes_end);
    return std::max(passes_end + last_reduction, reduction_start + (overlap_grads ? buckets * bucket : whole));
  }
  seconds += last_reduction;
  if (plan.zero >= 1) {
    // Overlapped with the next iteration's first forward of the chunk, which waits for
    // each bucket as it reaches it (gatheredPassEnd); else after the optimizer step.
    const double gather_bucket = gathering(chunk_parameters / buckets);
    const double forward = pipeline.first_chunk.forward();
    seconds += plan.overlap_param_gather ? gatheredPassEnd(forward, buckets, gather_bucket) - forward +
                                               contended(chunks * buckets * gather_bucket, forward)
                                         : chunks * buckets * gather_bucket;
  }
  return seconds;
}

double IterationEstimator::iterationSeconds(const parallelism::Experiment& experiment) {
  const auto& plan = experiment.plan;
  const parallelism::ComputeTimer timer(compute_);
  const PipelineEstimate pipeline = pipelineEstimate(experiment, timer);
  const double passes = pipeline.seconds + pipelineSendSeconds(experiment);
  // Data parallelism and the optimizer, on the stage with the most parameters.
  parallelism::StageParameters largest;
  const auto layers_per_stage = plan.layersPerStage(experiment.model.layers);
  for (int64_t stage : {int64_t{0}, plan.pp - 1}) {
    const parallelism::StageParameters parameters = parallelism::stageParameters(
        experiment.model, experiment.training, plan, stage, layers_per_stage[static_cast<std::size_t>(stage)]);
    if (parameters.total() > largest.total()) largest = parameters;
  }
  return dataParallelEnd(experiment, timer, pipeline, largest, passes) +
         timer.memoryBoundSeconds(parallelism::optimizerStepTraffic(experiment.training, plan, largest.dense,
                                                                    largest.expert, options_.iteration.optimizer_step));
}

}  // namespace trainsim::sweep
