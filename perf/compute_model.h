// How long one kernel takes on one GPU. sim/ sees kernels, not layers: a GEMM of a given
// shape, a fused attention kernel, or an element-wise (memory-bound) kernel, each with the
// FLOPs it performs and the bytes it moves to and from device memory.
//
//   time = max(FLOPs / (peak x efficiency), bytes / (memory bandwidth x memory efficiency))
//          + launch overhead
//
// GEMM efficiency comes from the shape (perf/compute_parameters.h has every constant and its
// source): the output is cut into tiles (m and n padded up to tile multiples), the tiles run
// in waves of one per SM (a partial last wave still costs a whole wave), each tile costs its
// k-loop at the SM's share of the best achievable matmul rate (the MAMF ceiling), derated for
// small tiles that reuse their operands too little, plus a fixed prologue/epilogue time. The
// tile that gives the shortest time is taken, as cuBLAS's heuristics would. The result never
// exceeds the ceiling and never decreases when m, n, k or the batch grows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.h"
#include "perf/compute_parameters.h"
#include "sim/sim_time.h"
#include "topology/gpu_spec.h"

namespace trainsim::perf {

// C[m x n] = A[m x k] . B[k x n], `batch` times (a batched / grouped GEMM of equal shapes).
struct GemmShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch = 1;

  // 2 m n k batch (one multiply-add = 2 FLOPs).
  [[nodiscard]] double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(batch);
  }
};

enum class KernelKind : uint8_t {
  kGemm,         // tensor-core matrix multiply (shape-aware when KernelCost::gemm is set)
  kAttention,    // fused attention (FlashAttention-style: scores, softmax, context in one kernel)
  kElementwise,  // everything else: norms, activations, residual adds, optimizer: memory-bound
};
[[nodiscard]] std::string_view kernelKindName(KernelKind kind);

// One kernel's work. A cost with a GEMM shape is a GEMM (`kind` must then be kGemm or left
// at its default); without one, `kind` says what it is, and kGemm means a matrix multiply
// of unknown shape, run at the ceiling rate. `flops` of a shaped GEMM may be left 0: the
// shape's 2mnk is used.
struct KernelCost {
  double flops = 0.0;
  double bytes = 0.0;
  std::optional<GemmShape> gemm = std::nullopt;
  KernelKind kind = KernelKind::kElementwise;
  AttentionPass attention_pass = AttentionPass::kForward;  // kAttention only

  [[nodiscard]] KernelKind effectiveKind() const { return gemm ? KernelKind::kGemm : kind; }

  [[nodiscard]] static KernelCost gemmOf(const GemmShape& shape, double bytes) {
    return {shape.flops(), bytes, shape, KernelKind::kGemm};
  }
  [[nodiscard]] static KernelCost attention(double flops, double bytes, AttentionPass pass = AttentionPass::kForward) {
    return {flops, bytes, std::nullopt, KernelKind::kAttention, pass};
  }
  [[nodiscard]] static KernelCost elementwise(double bytes, double flops = 0.0) {
    return {flops, bytes, std::nullopt, KernelKind::kElementwise};
  }
};

// Which tensor-core rate a GEMM runs at: the model's training precision, or 16 bits for the
// matmuls an fp8 recipe leaves in bf16/fp16 (outside Transformer Engine's FP8 modules). The
// same thing at every other precision.
enum class GemmPrecision : uint8_t { kTraining, kSixteenBit };

// How the model runs one GEMM shape (for reports and tests).
struct GemmPlan {
  GemmTile tile{0, 0};
  int64_t tiles = 0;            // ceil(m / tile.m) x ceil(n / tile.n) x batch
  int64_t waves = 0;            // ceil(tiles / SMs)
  double reuse_derating = 1.0;  // small-tile operand-feed factor (<= 1)
  double seconds = 0.0;         // tensor-core time: no memory term, no launch overhead
  double efficiency = 0.0;      // shape FLOPs / (seconds x peak); <= the ceiling
};

// The shape class a measured GEMM efficiency is recorded under (ComputeParameters::
// gemm_shape_efficiency): which dimension is the smallest ("cubic" when the largest is at
// most twice the smallest, else "m", "n" or "k") and the smallest dimension's band (tiny
// < 256, small < 1024, medium < 4096, large), e.g. "cubic_large", "k_small". The batch
// does not enter.
[[nodiscard]] std::string gemmShapeClass(const GemmShape& shape);

// The math clocks of `gpu` under its power limit over those its rates hold at: (limit /
// rated)^power_clock_exponent, never above 1 (ComputeParameters::power_clock_exponent).
[[nodiscard]] double powerLimitClockRatio(const topology::GpuSpec& gpu, const ComputeParameters& parameters);

class ComputeModel {
 public:
  // An error when `gpu` has no peak rate at `precision` or no memory bandwidth, or when
  // `parameters` hold an impossible value (no tiles, a non-positive reuse, ...).
  [[nodiscard]] static Expected<ComputeModel> create(const topology::GpuSpec& gpu, topology::Precision precision,
                                                     ComputeParameters parameters);
  // The same, for arguments known to be valid (asserts).
  ComputeModel(const topology::GpuSpec& gpu, topology::Precision precision, ComputeParameters parameters);

  // Seconds one kernel takes, launch overhead included.
  [[nodiscard]] double time(const KernelCost& cost) const;
  // The same, rounded up to the next picosecond, for a compute task.
  [[nodiscard]] sim::SimTime duration(const KernelCost& cost) const;

  // `bytes`: all the kernel's device-memory traffic; `epilogue_bytes`: the part of it its
  // epilogue moves (output tiles), which adds to the tensor-core time on GPUs whose GEMM
  // epilogue does not overlap the math (ComputeParameters::gemm_epilogue_exposed).
  // `sms`: the SMs the GEMM is planned for and runs on (0: all of them; fewer when a
  // concurrent kernel holds the rest, see gemmPlan).
  [[nodiscard]] double gemmTime(const GemmShape& shape, double bytes, double epilogue_bytes = 0.0,
                                GemmPrecision precision = GemmPrecision::kTraining, int sms = 0) const;
  // A fused attention kernel of `pass` on `shape` (ComputeParameters::attention_rates): the
  // measured rate scaled by the shape's tile efficiency over that of the problem it was
  // measured on (perf/attention_tiles.h); with rates measured over sequence length, those
  // around the shape's, interpolated (MeasuredAttentionRate). An empty shape runs at the
  // first row's rate.
  [[nodiscard]] double attentionTime(double flops, double bytes, AttentionPass pass = AttentionPass::kForward,
                                     const AttentionShape& shape = {}) const;
  // The attention rate on `shape` over the first row's.
  [[nodiscard]] double attentionShapeFactor(const AttentionShape& shape, AttentionPass pass) const;
  [[nodiscard]] double elementwiseTime(double bytes, double flops = 0.0) const;
  // What `kernels` more kernels of an op cost the GPU beyond their work: the gap each takes
  // (launch_overhead_us; with the host modelled, the gap between kernels already launched).
  [[nodiscard]] double kernelGapsTime(double kernels) const;

  // The tile and wave plan on `sms` SMs (0: all). A GEMM told to leave SMs to a concurrent
  // kernel (cuBLASLt's CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, which Transformer Engine sets to
  // the SMs minus those of its overlapped collective) spreads its tiles over fewer SMs, in
  // more waves: the wave quantization of the smaller count, not just a proportional slowdown.
  [[nodiscard]] GemmPlan gemmPlan(const GemmShape& shape, GemmPrecision precision = GemmPrecision::kTraining,
                                  int sms = 0) const;
  // Fraction of peak the GEMM's tensor-core time reaches (memory and launch excluded).
  [[nodiscard]] double gemmEfficiency(const GemmShape& shape) const { return gemmPlan(shape).efficiency; }

  [[nodiscard]] const std::string& gpuKey() const { return gpu_key_; }
  [[nodiscard]] topology::Precision precision() const { return precision_; }
  [[nodiscard]] double peakFlops() const { return peak_flops_; }                     // FLOP/s
  [[nodiscard]] double matmulCeiling() const { return matmul_ceiling_; }             // fraction
  [[nodiscard]] double attentionPeakFlops() const { return attention_peak_flops_; }  // FLOP/s
  // The first attention row's fraction of peak, on its measured problem.
  [[nodiscard]] double attentionEfficiency(AttentionPass pass = AttentionPass::kForward) const {
    return attention_efficiency_.of(pass);
  }
  [[nodiscard]] double achievableBandwidth() const { return achievable_bandwidth_; }  // B/s
  [[nodiscard]] int computeUnits() const { return compute_units_; }
  [[nodiscard]] double launchOverhead() const { return launch_overhead_s_; }           // seconds
  [[nodiscard]] double gemmEpilogueExposed() const { return gemm_epilogue_exposed_; }  // fraction
  // The math clocks under the GPU's power limit over those its rates hold at (<= 1).
  [[nodiscard]] double clockRatio() const { return clock_ratio_; }
  // Share of the SMs an overlapped NCCL collective holds (ComputeParameters::collective_sms).
  [[nodiscard]] double collectiveComputeShare() const { return collective_compute_share_; }
  [[nodiscard]] const ComputeParameters& parameters() const { return parameters_; }

 private:
  // A tensor-core rate: the precision, its peak and the best achievable fraction of it.
  struct MatmulRate {
    topology::Precision precision = topology::Precision::kBf16;
    double peak_flops = 0.0;
    double ceiling = 0.0;
  };

  // `compute_seconds` run at the clocks' rate, `exposed_memory_seconds` (a GEMM's epilogue
  // traffic) after them, both against `bytes` of memory traffic.
  [[nodiscard]] double finish(double compute_seconds, double bytes, double exposed_memory_seconds = 0.0) const;
  // Fraction of peak of `pass` on a non-empty `shape`, before the cap at 1.
  [[nodiscard]] double unboundedAttentionEfficiency(const AttentionShape& shape, AttentionPass pass) const;

  ComputeParameters parameters_;
  std::string gpu_key_;
  topology::Precision precision_;
  int compute_units_ = 0;
  double peak_flops_ = 0.0;
  double vector_peak_flops_ = 0.0;
  double attention_peak_flops_ = 0.0;
  double matmul_ceiling_ = 0.0;
  MatmulRate sixteen_bit_;  // GemmPrecision::kSixteenBit (the training precision's own rate unless fp8)
  AttentionEfficiency attention_efficiency_;
  AttentionTileOverhead attention_tile_overhead_;
  // The attention rows in force (ComputeParameters::attentionEfficiencies) by sequence
  // length, each with the tile efficiency of its measured problem; attention_efficiency_ is
  // the first row listed.
  struct AttentionPoint {
    AttentionEfficiency efficiency;
    AttentionShape measured_at;
    AttentionEfficiency tiles;
  };
  std::vector<AttentionPoint> attention_points_;
  double achievable_bandwidth_ = 0.0;
  double launch_overhead_s_ = 0.0;
  double training_rate_fraction_ = 1.0;  // ComputeParameters::training_rate_fraction
  double clock_ratio_ = 1.0;             // under a power limit (ComputeParameters::power_clock_exponent)
  double gemm_epilogue_exposed_ = 0.0;
  double tile_fixed_overhead_s_ = 0.0;
  double collective_compute_share_ = 0.0;
};

}  // namespace trainsim::perf
