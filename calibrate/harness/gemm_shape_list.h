// The GEMM shapes trainsim-calib-gemm measures: every distinct matmul that the workload model
// (parallelism/transformer_workload.h) times as a GEMM for one GPU of an experiment (forward, and the
// backward's input-gradient and weight-gradient matmuls, sharded by TP/SP/CP/EP), plus a
// fixed reference set, so that a calibration covers what simulations of that experiment ask.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parallelism/experiment.h"
#include "parallelism/transformer_workload.h"

namespace trainsim::harness {

struct HarnessGemmShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch = 1;
  std::string source;  // "reference" or the experiment's name

  [[nodiscard]] bool sameShape(const HarnessGemmShape& other) const {
    return m == other.m && n == other.n && k == other.k && batch == other.batch;
  }
};

// The reference set (docs/harness.md), in this order:
//  - square m = n = k: 1024, 2048, 4096, 8192, 16384;
//  - tokens x hidden projections: m = 8192 tokens, n = k in {1024, 2048, 4096, 12288};
//  - short inner dimension: m = n = 8192, k in {256, 512, 1024};
//  - few tokens (small micro-batches, MoE experts): m in {64, 128, 256, 512}, n = k = 8192;
//  - wide output (logits): m = 4096, n = 32768, k = 4096.
[[nodiscard]] std::vector<HarnessGemmShape> referenceGemmShapes();

// The distinct matmuls that parallelism::ComputeTimer runs as GEMM kernels for one
// micro-batch on one GPU of `experiment`: the transformer layer's weight GEMMs (and, with
// unfused attention, its score and context batched matmuls: the experiment's
// training.flash_attention false or flops.fused_attention false), the embedding's and the output
// layer's, forward then backward, in first-seen order. Fused (flash) attention is a kernel
// of its own, not a GEMM, and is left out.
[[nodiscard]] std::vector<HarnessGemmShape> experimentGemmShapes(const parallelism::Experiment& experiment,
                                                                 const parallelism::FlopsOptions& flops = {});

// `list` followed by the shapes of `more` it does not hold yet (a shape is measured once,
// labelled with the first source that asked for it).
void appendDistinctShapes(std::vector<HarnessGemmShape>& list, const std::vector<HarnessGemmShape>& more);

}  // namespace trainsim::harness
