#include "calibrate/harness/gemm_shape_list.h"

#include <algorithm>

#include "parallelism/micro_batch_shard.h"

namespace trainsim::harness {

namespace {

constexpr const char* kReference = "reference";

// What parallelism::ComputeTimer::seconds runs as GEMM kernels (keep the two in step).
bool timedAsGemms(const parallelism::Op& op, bool backward) {
  const auto& gemms = backward ? op.backward_gemms : op.forward_gemms;
  if (gemms.empty()) return false;
  if (op.kind == parallelism::OpKind::kGemm) return true;
  return op.kind == parallelism::OpKind::kAttention && op.name != "flash_attention";
}

void addWorkload(std::vector<HarnessGemmShape>& shapes, const parallelism::Workload& workload,
                 const std::string& source) {
  for (const bool backward : {false, true}) {
    for (const parallelism::Op& op : workload.ops) {
      if (!timedAsGemms(op, backward)) continue;
      for (const parallelism::GemmShape& gemm : backward ? op.backward_gemms : op.forward_gemms) {
        // A GEMM split by tp_comm_overlap is timed as its concurrent chunks' rows together.
        const int64_t rows = gemm.concurrentRows();
        appendDistinctShapes(shapes, {HarnessGemmShape{rows, gemm.n, gemm.k, gemm.batch, source}});
      }
    }
  }
}

}  // namespace

std::vector<HarnessGemmShape> referenceGemmShapes() {
  std::vector<HarnessGemmShape> shapes;
  auto add = [&](int64_t m, int64_t n, int64_t k) { shapes.push_back({m, n, k, 1, kReference}); };
  for (const int64_t size : {1024, 2048, 4096, 8192, 16384}) add(size, size, size);
  for (const int64_t hidden : {1024, 2048, 4096, 12288}) add(8192, hidden, hidden);
  for (const int64_t k : {256, 512, 1024}) add(8192, 8192, k);
  for (const int64_t m : {64, 128, 256, 512}) add(m, 8192, 8192);
  add(4096, 32768, 4096);
  return shapes;
}

std::vector<HarnessGemmShape> experimentGemmShapes(const parallelism::Experiment& experiment,
                                                   const parallelism::FlopsOptions& options) {
  // Unfused when the experiment's training.flash_attention or the caller (--unfused-attention) asks.
  parallelism::FlopsOptions flops = parallelism::kernelsFor(experiment, options);
  flops.tp_comm_overlap = experiment.plan.tp_comm_overlap;  // as the iteration builds its chunks
  flops.tp_overlap_config = experiment.plan.tp_comm_overlap_config;
  const auto shard = parallelism::MicroBatchShard::of(experiment.training, experiment.plan);
  const std::string source = experiment.name.empty() ? std::string("experiment") : experiment.name;
  std::vector<HarnessGemmShape> shapes;
  addWorkload(shapes, parallelism::embeddingLayer(experiment.model, shard, flops), source);
  addWorkload(shapes, parallelism::transformerLayer(experiment.model, shard, flops), source);
  addWorkload(shapes, parallelism::outputLayer(experiment.model, shard, flops), source);
  return shapes;
}

void appendDistinctShapes(std::vector<HarnessGemmShape>& list, const std::vector<HarnessGemmShape>& more) {
  for (const HarnessGemmShape& shape : more) {
    const bool known =
        std::any_of(list.begin(), list.end(), [&](const HarnessGemmShape& held) { return held.sameShape(shape); });
    if (!known) list.push_back(shape);
  }
}

}  // namespace trainsim::harness
