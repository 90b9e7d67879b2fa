#include "parallelism/pipeline_schedule.h"

#include <algorithm>
#include <cassert>

namespace trainsim::parallelism {
namespace {

// Megatron's interleaved ordering: the k-th forward (or backward) of a stage; with one chunk,
// micro-batch k.
PipelineStep interleavedStep(PassKind pass, int64_t k, int64_t stages, int64_t chunks) {
  const int64_t group = k / (stages * chunks);
  const int64_t within = k % (stages * chunks);
  int64_t chunk = within / stages;
  if (pass == PassKind::kBackward) chunk = chunks - 1 - chunk;
  return PipelineStep{pass, static_cast<int32_t>(group * stages + within % stages), static_cast<int32_t>(chunk)};
}

// torch.distributed.pipelining's _get_1f1b_rank_ops with enable_zero_bubble (ZB1P): the
// warm-up is one forward per stage downstream (plus the other chunks' rounds), and the W of
// each B is deferred by `stage` B passes, so that a stage's B passes reach its upstream
// neighbour without waiting for its W passes.
std::vector<PipelineStep> zeroBubbleOrder(int64_t stages, int64_t chunks, int64_t microbatches, int64_t stage) {
  const int64_t total = microbatches * chunks;
  const int64_t warmup = std::min((chunks - 1) * stages + stages - stage - 1, total);
  auto forward = [&](int64_t k) { return interleavedStep(PassKind::kForward, k, stages, chunks); };
  auto backward = [&](int64_t k) { return interleavedStep(PassKind::kBackward, k, stages, chunks); };
  std::vector<PipelineStep> order;
  order.reserve(static_cast<std::size_t>(3 * total));
  std::vector<PipelineStep> pending_weights;  // B passes whose W has not run, oldest first
  std::size_t next_weight = 0;
  auto weight = [&]() {
    PipelineStep step = pending_weights[next_weight++];
    step.pass = PassKind::kWeight;
    order.push_back(step);
  };
  int64_t next_forward = 0;
  for (; next_forward < warmup; ++next_forward) order.push_back(forward(next_forward));
  for (int64_t k = 0; k < total; ++k) {
    if (next_forward < total) order.push_back(forward(next_forward++));
    order.push_back(backward(k));
    pending_weights.push_back(order.back());
    if (k >= stage) weight();
  }
  while (next_weight < pending_weights.size()) weight();
  return order;
}

// ZB-V as torch.distributed.pipelining's ScheduleZBVZeroBubble orders it (pytorch 1fd7abc2f5,
// _calculate_single_rank_operations): chunk 0 runs virtual stage `stage`, chunk 1 virtual stage
// 2 stages - 1 - stage. Its counts assume at least 2 stages - 1 micro-batches; the passes of the
// micro-batches beyond `microbatches` are dropped, as torch drops them.
std::vector<PipelineStep> zeroBubbleVOrder(int64_t stages, int64_t microbatches, int64_t stage) {
  const int64_t n = std::max(2 * stages - 1, microbatches);
  std::vector<PipelineStep> order;
  int32_t forwards[2] = {0, 0};
  int32_t backwards[2] = {0, 0};
  int32_t weights[2] = {0, 0};
  auto add = [&](PassKind pass, int32_t chunk) {
    int32_t& counter = pass == PassKind::kForward    ? forwards[chunk]
                       : pass == PassKind::kBackward ? backwards[chunk]
                                                     : weights[chunk];
    const int32_t microbatch = counter++;
    if (microbatch < microbatches) order.push_back({pass, microbatch, chunk});
  };
  for (int64_t i = 0; i < 2 * (stages - stage) - 1; ++i) add(PassKind::kForward, 0);
  for (int64_t i = 0; i < stage; ++i) {
    add(PassKind::kForward, 1);
    add(PassKind::kForward, 0);
  }
  for (int64_t i = 0; i < stages - stage; ++i) {
    add(PassKind::kForward, 1);
    add(PassKind::kBackward, 1);
    add(PassKind::kWeight, 1);
  }
  while (forwards[1] < forwards[0] || forwards[0] < n) {
    if (forwards[0] < n) add(PassKind::kForward, 0);
    add(PassKind::kBackward, 0);
    add(PassKind::kWeight, 0);
    add(PassKind::kForward, 1);
    add(PassKind::kBackward, 1);
    add(PassKind::kWeight, 1);
  }
  for (int64_t i = 0; i < stage; ++i) {
    add(PassKind::kBackward, 0);
    add(PassKind::kBackward, 1);
  }
  for (int64_t i = 0; i < stages - stage; ++i) {
    add(PassKind::kBackward, 0);
    add(PassKind::kWeight, 0);
  }
  while (weights[1] < backwards[1]) add(PassKind::kWeight, 1);
  while (weights[0] < backwards[0]) add(PassKind::kWeight, 0);
  return order;
}

// DualPipeV as deepseek-ai/DualPipe orders it (dualpipev.py DualPipeV.step at 3da1bbe, its
// eight steps): chunk 0 runs virtual stage `stage`, chunk 1 virtual stage 2 stages - 1 - stage.
// A backward that does not "use zero bubble" runs whole: its W right after its B. The W of the
// others wait in a first-in first-out queue (WeightGradStore) for the steps that pop it.
// DualPipeV runs the forward and backward of its steps 4 and 5 overlapped: here they are
// adjacent (pairedSteps pairs them).
std::vector<PipelineStep> dualPipeVOrder(int64_t stages, int64_t microbatches, int64_t stage) {
  std::vector<PipelineStep> order;
  int32_t forwards[2] = {0, 0};
  int32_t backwards[2] = {0, 0};
  std::vector<PipelineStep> weight_queue;
  std::size_t next_weight = 0;
  auto forward = [&](int32_t chunk) { order.push_back({PassKind::kForward, forwards[chunk]++, chunk}); };
  auto backward = [&](int32_t chunk, bool deferred_weight) {
    const PipelineStep step{PassKind::kBackward, backwards[chunk]++, chunk};
    order.push_back(step);
    if (deferred_weight) {
      weight_queue.push_back({PassKind::kWeight, step.microbatch, chunk});
    } else {
      order.push_back({PassKind::kWeight, step.microbatch, chunk});
    }
  };
  auto weight = [&]() { order.push_back(weight_queue[next_weight++]); };
  const int64_t rank = stage;
  for (int64_t i = 0; i < 2 * (stages - rank - 1); ++i) forward(0);  // step 1: nF0
  for (int64_t i = 0; i < rank + 1; ++i) {                           // step 2: nF0F1
    forward(0);
    forward(1);
  }
  for (int64_t i = 0; i < stages - rank - 1; ++i) {  // step 3: nB1W1F1
    backward(1, true);
    weight();
    forward(1);
  }
  for (int64_t i = 0; i < microbatches - 2 * stages + rank + 1; ++i) {  // step 4: nF0B1F1B0
    forward(0);
    backward(1, false);
    forward(1);
    backward(0, false);
  }
  for (int64_t i = 0; i < stages - rank - 1; ++i) {  // step 5: nB1F1B0
    backward(1, false);
    forward(1);
    backward(0, false);
  }
  bool deferred = false;  // step 6: nB1B0, the second half with deferred weights
  for (int64_t i = 0; i < rank + 1; ++i) {
    if (i == (rank + 1) / 2 && rank % 2 == 1) deferred = true;
    backward(1, deferred);
    if (i == (rank + 1) / 2 && rank % 2 == 0) deferred = true;
    backward(0, deferred);
  }
  for (int64_t i = 0; i < stages - rank - 1; ++i) {  // step 7: nWB0
    weight();
    backward(0, true);
  }
  while (next_weight < weight_queue.size()) weight();  // step 8: nW
  return order;
}

// DualPipe as deepseek-ai/DualPipe orders it (dualpipe.py DualPipe.step at 3da1bbe): the eight
// steps of dualpipev.py with the rank taken as min(rank, pp - 1 - rank) of pp / 2 ranks and half
// the micro-batches (each direction's), "phase 0" being the first direction on the first half of
// the GPUs and the second direction on the others. Here chunk 0 is the first direction on every
// GPU: the second half's phases swap.
std::vector<PipelineStep> dualPipeOrder(int64_t stages, int64_t microbatches, int64_t stage) {
  const int64_t half_stages = stages / 2;
  const int64_t half_rank = std::min(stage, stages - 1 - stage);
  std::vector<PipelineStep> order = dualPipeVOrder(half_stages, microbatches / 2, half_rank);
  if (stage >= half_stages) {
    for (PipelineStep& step : order) step.chunk = 1 - step.chunk;
  }
  return order;
}

}  // namespace

std::vector<PipelineStep> stageOrder(PipelineSchedule schedule, int64_t stages, int64_t virtual_stages,
                                     int64_t microbatches, int64_t stage) {
  assert(stages >= 1 && virtual_stages >= 1 && microbatches >= 1 && stage >= 0 && stage < stages);
  std::vector<PipelineStep> order;
  const int64_t total = microbatches * virtual_stages;
  order.reserve(static_cast<std::size_t>(2 * total));
  if (schedule == PipelineSchedule::kGpipe) {
    for (int64_t mb = 0; mb < microbatches; ++mb) order.push_back({PassKind::kForward, static_cast<int32_t>(mb), 0});
    for (int64_t mb = 0; mb < microbatches; ++mb) order.push_back({PassKind::kBackward, static_cast<int32_t>(mb), 0});
    return order;
  }
  if (schedule == PipelineSchedule::kZeroBubble) return zeroBubbleOrder(stages, virtual_stages, microbatches, stage);
  if (schedule == PipelineSchedule::kZeroBubbleV) return zeroBubbleVOrder(stages, microbatches, stage);
  if (schedule == PipelineSchedule::kDualPipeV) return dualPipeVOrder(stages, microbatches, stage);
  if (schedule == PipelineSchedule::kDualPipe) return dualPipeOrder(stages, microbatches, stage);
  auto forward = [&](int64_t k) { return interleavedStep(PassKind::kForward, k, stages, virtual_stages); };
  auto backward = [&](int64_t k) { return interleavedStep(PassKind::kBackward, k, stages, virtual_stages); };
  const int64_t warmup = virtual_stages == 1
                             ? std::min(stages - stage - 1, microbatches)
                             : std::min((stages - stage - 1) * 2 + (virtual_stages - 1) * stages, total);
  int64_t next_forward = 0;
  int64_t next_backward = 0;
  for (; next_forward < warmup; ++next_forward) order.push_back(forward(next_forward));
  while (next_forward < total) {
    order.push_back(forward(next_forward++));
    order.push_back(backward(next_backward++));
  }
  while (next_backward < total) order.push_back(backward(next_backward++));
  return order;
}

std::vector<StageStep> upstreamSteps(const ParallelPlan& plan, int64_t stage, const PipelineStep& step) {
  std::vector<StageStep> result;
  const int32_t mb = step.microbatch;
  if (step.pass == PassKind::kWeight) {
    result.push_back({stage, {PassKind::kBackward, mb, step.chunk}});
    return result;
  }
  const int64_t virtual_stage = plan.virtualStage(stage, step.chunk);
  if (step.pass == PassKind::kForward) {
    if (!plan.startsADirection(virtual_stage)) {
      const ParallelPlan::StageChunk before = plan.stageChunkOf(virtual_stage - 1);
      result.push_back({before.stage, {PassKind::kForward, mb, static_cast<int32_t>(before.chunk)}});
    }
    return result;
  }
  // A backward needs its own forward, and the gradient from downstream.
  result.push_back({stage, {PassKind::kForward, mb, step.chunk}});
  if (!plan.endsADirection(virtual_stage)) {
    const ParallelPlan::StageChunk after = plan.stageChunkOf(virtual_stage + 1);
    result.push_back({after.stage, {PassKind::kBackward, mb, static_cast<int32_t>(after.chunk)}});
  }
  return result;
}

std::vector<StageStep> upstreamSteps(int64_t stages, int64_t virtual_stages, int64_t stage, const PipelineStep& step) {
  ParallelPlan plan;
  plan.pp = stages;
  plan.virtual_stages = virtual_stages;
  return upstreamSteps(plan, stage, step);
}

int64_t peakInFlight(const std::vector<PipelineStep>& order) {
  int64_t in_flight = 0;
  int64_t peak = 0;
  for (const auto& step : order) {
    if (step.pass == PassKind::kForward) ++in_flight;
    if (step.pass == PassKind::kBackward) --in_flight;
    peak = std::max(peak, in_flight);
  }
  return peak;
}

double peakHeld(const std::vector<PipelineStep>& order, double weight_share) {
  const bool split =
      std::any_of(order.begin(), order.end(), [](const PipelineStep& s) { return s.pass == PassKind::kWeight; });
  int64_t forwarded = 0;  // forwards whose backward has not run
  int64_t pending = 0;    // input-gradient passes whose weight-gradient pass has not run
  double peak = 0.0;
  for (const auto& step : order) {
    switch (step.pass) {
      case PassKind::kForward: ++forwarded; break;
      case PassKind::kBackward:
        --forwarded;
        ++pending;
        break;
      case PassKind::kWeight: --pending; break;
    }
    peak = std::max(peak, static_cast<double>(forwarded) + (split ? weight_share * static_cast<double>(pending) : 0.0));
  }
  return peak;
}

std::vector<bool> pairedSteps(const std::vector<PipelineStep>& order) {
  std::vector<bool> paired(order.size(), false);
  for (std::size_t i = 0; i + 1 < order.size(); ++i) {
    if (paired[i] || order[i].pass != PassKind::kForward || order[i + 1].pass != PassKind::kBackward) continue;
    paired[i] = true;
    paired[i + 1] = true;
  }
  return paired;
}

}  // namespace trainsim::parallelism
