// Named parameters of the compute model (perf/compute_model.h). The struct is plain data,
// copied into each ComputeModel; its values come from the shipped defaults,
// configs/defaults/compute.yaml (perf::defaultComputeParameters, perf/default_parameters.h),
// where every value is given with its source, and a calibration (`--calibration`) may replace
// any of them (docs/calibration.md). A default-constructed ComputeParameters is empty: no
// model can be built from it.
//
// Per-GPU figures are keyed by the catalog key of configs/gpus.yaml (GpuSpec::key). A GPU
// without an entry (an inline GPU, a part nobody has published a measurement for) gets the
// documented *_default value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "perf/attention_tiles.h"
#include "perf/measured_values.h"
#include "topology/gpu_spec.h"

namespace trainsim::perf {

// Measured fused-attention rates of one GPU at one precision, TFLOP/s of the kernels'
// executed FLOPs (the causal half where masked; the backward's 2.5x the forward's), as
// attention benchmarks count them (cudnn-frontend sdpa_benchmark_training, FlashAttention),
// on the problem `measured_at` (perf/attention_tiles.h); other problems run at this rate times
// their tile efficiency over that one's. No shape: the kernel's full rate (an unbounded
// problem), as `trainsim calibrate --attention` writes it. Several rows of one GPU and
// precision are its rates over sequence length: a problem takes the two measured at the
// sequence lengths (queries) around its own, each scaled to it by the tile efficiencies, and
// interpolates between them in log sequence length (ComputeModel::attentionTime); beyond the
// range the nearest. They carry what the tile model does not: cuDNN's rates fall again at
// long sequences (B200's and GB200's forward beyond 32,768 tokens).
struct MeasuredAttentionRate {
  std::string gpu_key;
  topology::Precision precision;
  double forward_tflops;
  double backward_tflops;
  AttentionShape measured_at{};
};

// Fixed cost of one attention CTA of one GPU (AttentionTileOverhead).
struct MeasuredAttentionTileOverhead {
  std::string gpu_key;
  AttentionTileOverhead overhead;
};

// Fractions of peak a fused attention kernel reaches, per pass.
struct AttentionEfficiency {
  double forward = 0.0;
  double backward = 0.0;
  [[nodiscard]] double of(AttentionPass pass) const { return pass == AttentionPass::kBackward ? backward : forward; }
};

// Two rows of attention_rates, `earlier` listed before `later`: where they are of one GPU and
// precision (its rates over sequence length), what `later` lacks to be one of them, as the
// expectation an error states (each needs its measured problem, at a sequence length of its
// own); empty where nothing does.
[[nodiscard]] std::string attentionRowConflict(const MeasuredAttentionRate& earlier,
                                               const MeasuredAttentionRate& later);

// Fractions of peak a fused attention kernel reaches, per pass, on the problem measured.
struct MeasuredAttentionEfficiency {
  AttentionEfficiency efficiency;
  AttentionShape measured_at;
};

// A measured efficiency of one GPU at one precision on one GEMM shape class (gemmShapeClass
// in perf/compute_model.h), as a fraction of the catalog peak at that precision.
struct GemmShapeEfficiency {
  std::string gpu_key;
  topology::Precision precision;
  std::string shape_class;
  double efficiency;
};

// One output tile shape a GEMM library may run on a streaming multiprocessor (one CTA).
struct GemmTile {
  int64_t m;
  int64_t n;
};

// The range a training-step rate fraction may take (ComputeParameters::training_rate_fraction):
// the kernels at a quarter of their measured rates to four times them.
inline constexpr double kMinTrainingRateFraction = 0.25;
inline constexpr double kMaxTrainingRateFraction = 4.0;

struct ComputeParameters {
  // ---- GEMM ceiling ----
  // Best matmul rate a GPU sustains, TFLOP/s, per GPU and precision (a 16-bit row serves
  // fp16 and bf16); the ceiling is this rate over the catalog peak. A GPU with rows at other
  // precisions only uses its own row's fraction of peak (16-bit preferred), one with no row
  // matmul_ceiling_default.
  std::vector<MeasuredRate> matmul_ceilings;
  double matmul_ceiling_default = 0.0;

  // ---- GEMM shape: tile and wave quantization ----
  // The output tiles (one per CTA) the model picks the fastest of, per shape.
  std::vector<GemmTile> gemm_tiles;
  // FMAs per loaded operand element at which a tile runs at the SM's full rate; below it, at
  // reuse / full_rate_operand_reuse of it.
  double full_rate_operand_reuse = 0.0;
  // Fixed time per tile on top of its k-loop (prologue and epilogue), microseconds; per GPU
  // in tile_fixed_overhead, else tile_fixed_overhead_us.
  double tile_fixed_overhead_us = 0.0;
  std::vector<MeasuredMicroseconds> tile_fixed_overhead;
  // SM count for a GPU whose catalog entry has none.
  int fallback_compute_units = 0;
  // Share of a GEMM's epilogue traffic whose streaming time adds to its tensor-core time
  // (1 = serial, 0 = hidden under it), per GPU, else gemm_epilogue_exposed_default.
  std::vector<MeasuredFraction> gemm_epilogue_exposed;
  double gemm_epilogue_exposed_default = 0.0;

  // ---- Memory-bound kernels ----
  // Achievable fraction of the catalog's peak HBM bandwidth, per GPU, else the default.
  std::vector<MeasuredFraction> memory_efficiency;
  double memory_efficiency_default = 0.0;
  // Fraction of the catalog's fp32 (CUDA-core) rate element-wise kernels reach.
  double elementwise_compute_efficiency = 0.0;

  // ---- Fused attention (FlashAttention) ----
  // Forward and backward rates, TFLOP/s of executed FLOPs (MeasuredAttentionRate). A GPU's
  // rows at the precision of its first row are in force: one row, or its rates measured over
  // sequence length (one row per measured_at.queries).
  std::vector<MeasuredAttentionRate> attention_rates;
  // Elsewhere: this fraction of the GPU's own matmul ceiling, on this problem.
  double attention_to_matmul_default = 0.0;
  AttentionShape attention_default_measured_at;
  // Fixed cost of one attention CTA beside its loop, in loop iterations, per pass
  // (perf/attention_tiles.h), per GPU, else the default.
  std::vector<MeasuredAttentionTileOverhead> attention_tile_overheads;
  AttentionTileOverhead attention_tile_overhead_default;

  // ---- Collectives beside compute ----
  // SMs an NCCL collective holds while it runs beside compute kernels, per GPU; elsewhere
  // the share collective_compute_share_default of the compute units, or none on a GPU of a
  // vendor in collective_offload_vendors (collectives moved by DMA engines).
  std::vector<MeasuredCount> collective_sms;
  double collective_compute_share_default = 0.0;
  std::vector<std::string> collective_offload_vendors;

  // ---- Launch ----
  // Time a kernel costs beyond its own work (launch and the gap between dependent kernels),
  // microseconds.
  double launch_overhead_us = 0.0;
  // Host dispatch (an experiment's training.dispatch): the host's time per launched kernel
  // in each mode, microseconds, and what then replaces launch_overhead_us on the GPU: the
  // gap between back-to-back kernels already launched.
  double dispatch_eager_us = 0.0;
  // Inside an eager training step the host spends this many times dispatch_eager_us per
  // kernel the model counts (Python modules, autograd, the kernels the model does not name).
  double dispatch_eager_in_step_factor = 1.0;
  double dispatch_compiled_us = 0.0;
  double dispatch_cuda_graphs_us = 0.0;
  double dispatch_kernel_gap_us = 0.0;
  // The host's time for one call a framework's C++ makes to a GEMM library beyond the ops the
  // model counts (Op::library_calls_forward: Transformer Engine's grouped GEMM, one cuBLASLt
  // call per expert), eager or compiled; none under CUDA graphs. Microseconds.
  double dispatch_library_call_us = 0.0;
  // The host's time for one kernel a framework's C++ launches inside an op beyond the one
  // its dispatch counts (Op::native_kernels_forward: Transformer Engine's current-scaling
  // amax, scale and cast kernels), eager or compiled; none under CUDA graphs. Microseconds.
  double dispatch_native_kernel_us = 0.0;

  // ---- Calibration ----
  // Measured GEMM efficiency per shape class (gemmShapeClass in perf/compute_model.h) of a GPU
  // and precision (fp16/bf16 one class), used instead of the tile model's for shapes of that
  // class (`trainsim calibrate --harness`, calibrate/gemm_fit.h).
  std::vector<GemmShapeEfficiency> gemm_shape_efficiency;
  // The rate a GPU's kernels reach inside a training step of a production software stack, as
  // a fraction of the rates above (microbenchmarks that repeat one kernel): every compute
  // kernel's time is divided by it; 1 for a GPU without a row (`trainsim calibrate
  // --training-step`, calibrate/training_step_fit.h).
  std::vector<MeasuredFraction> training_rate_fraction;
  // For a GPU without a row (configs/defaults/compute.yaml: 1, the kernels' own rates).
  double training_rate_fraction_default = 0.0;
  // A software stack's in-step fraction on the GPU types its own training_rate_fraction does
  // not list, as a factor on the fraction those GPUs have without the stack
  // (parallelism::applySoftwareStack applies it; 1 outside a stack).
  double training_rate_stack_factor = 1.0;

  // ---- Power ----
  // A GPU run under a lower power limit than the one its rates hold at (GpuSpec::
  // powerLimitRatio) runs its kernels' math at clocks of (limit / rated)^exponent of its own
  // (never above 1); memory traffic keeps its rate.
  double power_clock_exponent = 0.0;

  // These parameters without any training-rate fraction: the kernels at their microbenchmark
  // rates, for comparing the model with microbenchmarks (`validate gemm`, calibrate's GEMM
  // checks), which repeat one kernel as the rates above were measured.
  [[nodiscard]] ComputeParameters atKernelRates() const {
    ComputeParameters copy = *this;
    copy.training_rate_fraction.clear();
    copy.training_rate_fraction_default = 1.0;
    return copy;
  }

  // Lookups (defined in compute_model.cpp).
  // Fraction of `gpu`'s peak at `precision` reached by the best-shaped GEMM (<= 1).
  [[nodiscard]] double matmulCeiling(const topology::GpuSpec& gpu, topology::Precision precision) const;
  // Fraction of `gpu`'s peak memory bandwidth reached by a streaming kernel.
  [[nodiscard]] double memoryEfficiency(std::string_view gpu_key) const;
  // The fraction of its kernels' rates `gpu_key` reaches in a training step (training_rate_fraction,
  // else training_rate_fraction_default).
  [[nodiscard]] double trainingRateFraction(std::string_view gpu_key) const;
  // Fixed time per GEMM tile on `gpu_key`, seconds (tile_fixed_overhead, else tile_fixed_overhead_us).
  [[nodiscard]] double tileFixedOverheadSeconds(std::string_view gpu_key) const;
  // Share of a GEMM's epilogue traffic that adds to its time on `gpu_key` (gemm_epilogue_exposed).
  [[nodiscard]] double gemmEpilogueExposed(std::string_view gpu_key) const;
  // Share of `gpu`'s compute units an overlapped collective holds (collective_sms, else
  // the vendor rules above); `units`: its compute units.
  [[nodiscard]] double collectiveComputeShare(const topology::GpuSpec& gpu, int units) const;
  // Fractions of `gpu`'s peak at `precision` (a 16-bit one) reached by fused attention, each
  // on the problem it was measured on: its attention_rates rows in force, in their order,
  // else the matmul-ceiling default on attention_default_measured_at.
  [[nodiscard]] std::vector<MeasuredAttentionEfficiency> attentionEfficiencies(const topology::GpuSpec& gpu,
                                                                               topology::Precision precision) const;
  [[nodiscard]] AttentionTileOverhead attentionTileOverhead(std::string_view gpu_key) const;
};

}  // namespace trainsim::perf
