// Named parameters of the compute model (sim/compute_model.h), with their sources. Every value
// here is a default that calibration (`trainsim calibrate`) may replace: the struct is plain
// data, copied into each ComputeModel.
//
// Per-GPU figures are keyed by the catalog key of configs/gpus.yaml (GpuSpec::key). A GPU
// without an entry (an inline GPU, a part nobody has published a measurement for) gets the
// documented *_default value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/attention_tiles.h"
#include "topology/gpu_spec.h"

namespace trainsim::sim {

// A measured rate of one GPU at one precision, TFLOP/s (10^12 FLOP/s).
struct MeasuredRate {
  std::string gpu_key;
  topology::Precision precision;
  double tflops;
};

// Measured fused-attention rates of one GPU at one precision, TFLOP/s of the kernels'
// executed FLOPs (the causal half where masked; the backward's 2.5x the forward's), as
// attention benchmarks count them (cudnn-frontend sdpa_benchmark_training, FlashAttention),
// on the problem `measured_at` (sim/attention_tiles.h); other problems run at this rate times
// their tile efficiency over that one's. No shape: the kernel's full rate (an unbounded
// problem), as `trainsim calibrate --attention` writes it.
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

// A measured fraction of one GPU's peak (memory bandwidth).
struct MeasuredFraction {
  std::string gpu_key;
  double fraction;
};

// A measured efficiency of one GPU at one precision on one GEMM shape class (gemmShapeClass
// in sim/compute_model.h), as a fraction of the catalog peak at that precision.
struct GemmShapeEfficiency {
  std::string gpu_key;
  topology::Precision precision;
  std::string shape_class;
  double efficiency;
};

// A measured count of one GPU (SMs).
struct MeasuredCount {
  std::string gpu_key;
  double count;
};

// A measured time of one GPU, microseconds.
struct MeasuredMicroseconds {
  std::string gpu_key;
  double us;
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
  // ---- GEMM ceiling --------------------------------------------------------------------
  // Best matmul rate a GPU sustains, TFLOP/s. Training runs GEMMs for hours, so the ceiling
  // is a steady-state rate where one is published, else the best short-run rate:
  //  - Steady state: Azure/AI-benchmarking-guide Azure_Results/ND_*_results.md, "GEMM
  //    CuBLASLt" (Sep 2024): cuBLASLt after 10,000 warm-up iterations, random inputs; the
  //    best row of each GPU and precision (A100 SXM 80GB FP16 16384^3: 256.5; H100 SXM FP8
  //    32768^3: 1,382.2; H200 FP8 16384^3: 1,366.3).
  //  - Short run: "Maximum Achievable Matmul FLOPS" (MAMF), the best torch.matmul TFLOP/s
  //    over a sweep of shapes, 50 warm-up and 100 timed iterations, stas00/ml-engineering
  //    compute/accelerator/README.md, MAMF comparison table (snapshot 2026-08).
  // Where both exist the short run is the faster: A100 271.2 vs 256.5 (-5.4%), H100 FP8
  // 1,402.6 vs 1,382.2 (-1.5%), H200 FP8 1,453.4 vs 1,366.3 (-6.0%), consistent with the
  // boost clock settling under sustained power draw (A100 SXM: 400 W board limit). The
  // A100 figure is what moved the Selene validation rows (docs/training-validation.md,
  // change 8): with the MAMF rate they were 4-12% too fast. Parts with only a MAMF figure
  // (H100/H200 BF16 among them) keep it: no steady-state BF16 measurement is published.
  // The model's ceiling for a GPU is this rate divided by the GPU's catalog peak for that
  // precision, so it stays a measured rate even where a table's "theory" column differs
  // from the catalog (Gaudi 3: table 1,677 TF, catalog 1,835 TF spec figure -> 0.677, not
  // 74.1%). A 16-bit entry serves both fp16 and bf16 (one tensor-core rate on every part
  // listed); "H200 is the same" as H100 for BF16 (the MAMF table's note). The MAMF table's
  // B300, MI325X and MI355X rows have no catalog entry yet.
  // Blackwell: GB200 has both figures for FP8, and the gap is wide: Azure's steady state
  // (Azure/AI-benchmarking-guide Azure_Results/ND_GB200_v6_results.md, "GEMM CuBLASLt (FP8)",
  // 10,000 warm-up iterations, CUDA 12.8, driver 570.133.20: 2,906.9 at 16384^3) is 20% under
  // the MAMF run (3,615.6, torch 2.10 dev with CUDA 13.0). Part of that is likely the newer
  // cuBLAS of the MAMF run, not only clocks; the rule above (steady state where published)
  // still picks Azure's figure. B200 FP8 has only a MAMF figure (3,432.5, torch 2.7.1 with
  // CUDA 12.8, the Azure run's CUDA): it is given GB200's measured steady-state / short-run
  // ratio, 2,906.9 / 3,615.6 = 0.804, an estimate from the same die (3,432.5 x 0.804 =
  // 2,759.6). The BF16 rows of both parts keep their MAMF figures: no pair was measured there.
  std::vector<MeasuredRate> matmul_ceilings = {
      {"a100-sxm-40gb", topology::Precision::kBf16, 256.5},   // Azure FP16 steady state (82.2% of 312)
      {"a100-sxm-80gb", topology::Precision::kBf16, 256.5},   // (MAMF 271.2: see above)
      {"a100-pcie-80gb", topology::Precision::kBf16, 252.9},  // MAMF A100 PCIe, 81.1%
      {"h100-sxm", topology::Precision::kBf16, 794.5},        // MAMF, 80.3% of 989
      {"h100-sxm", topology::Precision::kFp8, 1382.2},        // Azure steady state, 69.8% of 1,979 (MAMF 1,402.6)
      {"h200", topology::Precision::kBf16, 794.5},            // MAMF: "H200 is the same" (BF16)
      {"h200", topology::Precision::kFp8, 1366.3},            // Azure steady state, 69.0% (MAMF 1,453.4)
      {"gh200", topology::Precision::kBf16, 828.6},           // MAMF, 83.8%
      {"gh200", topology::Precision::kFp8, 1535.0},           // MAMF, 77.6%
      {"b200", topology::Precision::kBf16, 1745.0},           // MAMF, 77.6% of 2,250
      {"b200", topology::Precision::kFp8, 2759.6},            // MAMF 3,432.5 x GB200's steady/MAMF 0.804: 61.3%
      {"gb200", topology::Precision::kBf16, 1822.0},          // MAMF, 72.9% of 2,500
      {"gb200", topology::Precision::kFp8, 2906.9},           // Azure steady state, 58.1% of 5,000 (MAMF 3,615.6)
      {"mi300x", topology::Precision::kBf16, 668.4},          // MAMF, 51.4% of 1,300 (catalog 1,307.4)
      {"gaudi2", topology::Precision::kBf16, 418.7},          // MAMF, 96.9% of 432
      {"gaudi3", topology::Precision::kBf16, 1243.0},         // MAMF, 74.1% of 1,677 (see above)
  };
  // A GPU with rows at other matrix precisions only (MI300X fp8, A100 tf32) uses the same
  // fraction of peak as its own row (16-bit preferred); a GPU with no row at all uses the
  // median of the table's 18 efficiency figures (51.4% ... 96.9%; median 75.4%).
  double matmul_ceiling_default = 0.75;

  // ---- GEMM shape: tile and wave quantization ----------------------------------------------
  // cuBLAS / CUTLASS split the m x n output into tiles, one per thread block (CTA), and run
  // the tiles in waves of one per SM; partial tiles (m, n padded up to tile multiples) and a
  // partial last wave waste the SMs they occupy (NVIDIA "Matrix Multiplication Background
  // User's Guide", DU-09799-001, sections 2.3 "Typical Tile Dimensions in cuBLAS and
  // Performance", 3.1 "Tile Quantization" and 3.2 "Wave Quantization"). The library picks,
  // per shape, the tile that runs fastest; the model does the same over these candidates
  // (the guide's table: 256x128 and 128x256 most efficient, down to 64x64). The guide's
  // 256x64 / 64x256 are left out: by the operand-reuse rule below they would run at full
  // rate, which the published skinny row (802816 x 192 x 768) contradicts.
  std::vector<GemmTile> gemm_tiles = {{256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 128}, {64, 64}};
  // A tm x tn tile loads tm + tn operand elements per step of k and does tm * tn
  // multiply-adds with them. Below a reuse of `full_rate_operand_reuse` FMAs per loaded
  // element, the SM's operand feed limits the tensor cores and the tile runs at
  // reuse / full_rate_operand_reuse of the SM's rate. Hardware bound on A100: L2 read
  // bandwidth 5,120 B/clk for 108 SMs (NVIDIA A100 Tensor Core GPU Architecture whitepaper)
  // = 23.7 fp16 elements/clk/SM against 1,024 dense FP16 FMA/clk/SM -> reuse >= 43. The
  // value 48 (128x128 and larger: full rate; 128x64: 0.89; 64x64: 0.67) is the one in [43, 64]
  // that best fits the small and skinny rows of the Azure cuBLASLt table; it is kept for all
  // GPUs (Hopper's TMA multicast changes the feed, not re-derived).
  double full_rate_operand_reuse = 48.0;
  // Fixed time per tile on top of its k-loop: the prologue (the first k-blocks of A and B
  // come from HBM before the first MMA: a DRAM round trip of several hundred ns, then the
  // multi-stage shared-memory pipeline fills) and the epilogue (the fp32 accumulators are
  // converted and the tile is stored: 128 x 256 x 2 B = 64 KiB per SM; a whole wave storing
  // at once on A100 is 108 x 64 KiB / ~1.7 TB/s = ~4 us at worst). This is the k-dependent
  // pipeline-fill factor: a tile's efficiency is k_time / (k_time + this). 2 us lies in that
  // range and fits the small-k rows (k <= 2048) of the Azure table; microseconds. Where
  // gemm_epilogue_exposed (below) is 1 (A100), the output-store bandwidth is also counted
  // explicitly on top of this (the Azure A100 rows fit better with both: see there).
  double tile_fixed_overhead_us = 2.0;
  // Blackwell (sm100) overrides it: its cuBLAS kernels keep two accumulators per SM in tensor
  // memory (TMEM) and store one tile while the next one's k-loop runs, and prefetch the next
  // tile's operands by TMA, so little of a tile's fill and store stays on its critical path
  // (CUTLASS media/docs "Blackwell SM100 GEMMs"). With 2 us, the Azure GB200 FP8 table
  // (Azure/AI-benchmarking-guide ND_GB200_v6_results.md) is predicted 26% slow at 4096^3
  // and 5-8% slow at 8192^3 and above; 0.2 us is the value in [0, 2] that best fits the rows
  // with every dimension >= 4096 (-8.9% at 4096^3, where the 4 us launch floor is half the
  // gap, -1.1% to +2.4% above). The short-k rows stay 15-31% slow under either value: the
  // launch floor and wave quantization, not this term, set them.
  std::vector<MeasuredMicroseconds> tile_fixed_overhead = {{"b200", 0.2}, {"gb200", 0.2}};
  // SM count for a GPU whose catalog entry has none (H100 NVL): H100's 132.
  int fallback_compute_units = 132;
  // Share of a GEMM's epilogue traffic (its output tiles stored, and loaded too when the GEMM
  // accumulates into its output, as the fp32 main-gradient GEMMs do) whose streaming time
  // adds to the GEMM's tensor-core time instead of hiding under it. 1 = serial, 0 = hidden
  // (then only the max(compute, memory) roofline of the whole kernel applies).
  //  - A100 (sm80): 1. cuBLAS's Ampere kernels are CUTLASS-2-style multistage kernels, one
  //    output tile per CTA, one CTA per SM at the large tiles: the CTA stores its tile after
  //    its k-loop and the SM's tensor cores idle meanwhile (CUTLASS media/docs/
  //    efficient_gemm.md, "Epilogue"). On the Azure cuBLASLt table (gemm.yaml) this moves the
  //    mean error of the 8 A100 FP16 rows from 8.2% to 6.6%, the skinny 802816 x 192 x 768
  //    row (output-store heavy) from +15.0% to +0.8%.
  //  - H100 / H200 (sm90): 0. Hopper kernels are persistent and warp-specialized: a producer
  //    warp group feeds TMA loads while two consumer warp groups alternate, one running its
  //    tile's epilogue while the other runs the next tile's MMAs (CUTLASS efficient_gemm.md,
  //    "Warp Specialization", "Persistent Ping-Pong"; PyTorch blog "Deep Dive on CUTLASS
  //    Ping-Pong GEMM Kernel", 2024). On the same table a serial epilogue would move the
  //    H100 FP8 rows' mean error from 3.8% to 9.9% and the H200's from 4.5% to 7.9%.
  //  - Others: 0 (no measurement; the roofline alone, as before this parameter existed).
  std::vector<MeasuredFraction> gemm_epilogue_exposed = {
      {"a100-sxm-80gb", 1.0},
      {"a100-sxm-40gb", 1.0},
      {"a100-pcie-80gb", 1.0},
  };
  double gemm_epilogue_exposed_default = 0.0;

  // ---- Memory-bound kernels -------------------------------------------------------------
  // Achievable fraction of the catalog's peak HBM bandwidth, from the STREAM-like bandwidth
  // test on the same pages as the cuBLASLt GEMM table (Azure/AI-benchmarking-guide
  // Azure_Results/ND_*_results.md, Sep 2024), mid-point of the published range:
  // A100 80GB 1.61-1.75 TB/s of 2.039 -> 0.824 (the A100 40GB and PCIe parts share the
  // memory system: same fraction); H100 SXM 2.90-3.18 of 3.35 -> 0.907; H200 4.00-4.48 of
  // 4.8 -> 0.883. Blackwell:
  //  - B200: no STREAM figure is published; NVIDIA/cccl PR #7391's nvbench DeviceTransform
  //    runs on B200 at 2^28 elements move 6.553 (relu, fp16) to 6.721 TB/s (add, fp16): of
  //    the catalog's 7.7 TB/s, 0.851-0.873 -> 0.862. (The same runs at 2^24 elements reach
  //    only 0.47-0.57: small kernels do not fill the memory system; not modelled.)
  //  - GB200 keeps the default. Azure's BabelStream figure (HPC blog on ND GB200 v6: "7.35
  //    TB/s HBM bandwidth utilization (92% efficiency)", one figure, no range) is not
  //    adopted: the same machine's memory-bound cuBLASLt row (802816 x 192 x 768 FP8, ~0.93
  //    GB in 162 us) moves 5.7 TB/s (0.71), which the default already predicts 18.5% fast
  //    (25% with 0.919).
  std::vector<MeasuredFraction> memory_efficiency = {
      {"a100-sxm-80gb", 0.824}, {"a100-sxm-40gb", 0.824}, {"a100-pcie-80gb", 0.824},
      {"h100-sxm", 0.907},      {"h200", 0.883},          {"b200", 0.862},
  };
  // Mean of the three measured fractions (0.824, 0.907, 0.883).
  double memory_efficiency_default = 0.87;
  // Element-wise kernels run on the CUDA cores (the catalog's fp32 rate). The element-wise
  // ops of a training step sit well below the machine balance (LayerNorm: ~8 FLOP per
  // element for 4 bytes read and written = 2 FLOP/B, against A100's 19.5 TFLOP/s / 2.04 TB/s
  // = ~10 FLOP/B), so the FLOP term rarely binds and is kept at the full rate rather than
  // given an invented derating.
  double elementwise_compute_efficiency = 1.0;

  // ---- Fused attention (FlashAttention) ------------------------------------------------
  // Forward and backward rates, TFLOP/s of executed FLOPs (MeasuredAttentionRate).
  // A100 / H100 / H200: FlashAttention-2 on the Azure pages (Azure/AI-benchmarking-guide
  // Azure_Results/ND_*_results.md: A100 179.5 @ head dim 64; H100 327.9 and H200 329.3 @
  // head dim 128, batch 2, seq 8192), 0.575 / 0.331 / 0.333 of the 16-bit peak. The page
  // gives one figure, no direction: it serves both passes. FA2 does not use Hopper's
  // wgmma/TMA, and Transformer Engine runs cuDNN's fused attention on sm90 (it prefers
  // FusedAttention over FlashAttention on Hopper and later), which is faster (FA3 paper,
  // Shah et al. 2024, arXiv:2407.08608: cuDNN ~530-600 TFLOP/s forward at head dim 128).
  // Replacing the Hopper rows with cuDNN rates is measured in docs/training-validation.md
  // (change 26): every NeMo row of the suite then runs 4-23% fast, the Hopper rows stay at
  // FA2's until the time those rows miss elsewhere is found (see there).
  // Blackwell: FA2 runs on the legacy mma.sync path there (Azure GB200: 373.9, 0.15 of
  // peak), which no Blackwell training stack uses; Transformer Engine runs cuDNN's sm100
  // kernels. Measured by NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training (cuDNN
  // through its Python frontend, as Transformer Engine calls it), BF16, causal, head dim
  // 128, 128 query / 8 key-value heads (Llama 3.1 405B's), batch 1, seq 8192:
  //  - B200: forward 1,384.2, backward 994.9 (artifacts/sdpa_fp8_benchmark_results_NVIDIA_
  //    B200.csv, its bf16 rows; cuDNN 9.13.1, frontend 1.14.1);
  //  - GB200: forward 1,584, backward 1,211 (artifacts/sdpa_bf16_benchmark_results_NVIDIA_
  //    GB200.csv, cudnn_fe rows; cuDNN 9.17.0, PyTorch nv25.11).
  // The backward runs at 0.72-0.76 of the forward's rate: one rate for both (1,241, from
  // FlashAttention-4's "up to 1.3x" over cuDNN 9.13, before this split) had B200's backward
  // 25% fast.
  // Each measured on its problem (measured_at): the Azure runs are flash-attention's
  // benchmarks/benchmark_flash_attention.py (Azure Benchmarks/NVIDIA/FlashAttention.py takes
  // its causal "fwd + bwd" line at batch 2, seq 8192; dim 2,048, so 16 heads at head dim 128
  // and 32 at 64); cudnn-frontend's are batch 1 x 128 heads at seq 8192.
  std::vector<MeasuredAttentionRate> attention_rates = {
      {"a100-sxm-80gb", topology::Precision::kBf16, 179.5, 179.5, {64.0, 8192.0, 8192.0}},
      {"a100-sxm-40gb", topology::Precision::kBf16, 179.5, 179.5, {64.0, 8192.0, 8192.0}},
      {"h100-sxm", topology::Precision::kBf16, 327.9, 327.9, {32.0, 8192.0, 8192.0}},
      {"h200", topology::Precision::kBf16, 329.3, 329.3, {32.0, 8192.0, 8192.0}},
      {"b200", topology::Precision::kBf16, 1384.2, 994.9, {128.0, 8192.0, 8192.0}},
      {"gb200", topology::Precision::kBf16, 1584.0, 1211.0, {128.0, 8192.0, 8192.0}},
  };
  // Elsewhere: this fraction of the GPU's own matmul ceiling, the mean of the measured ratios
  // (A100 0.575 / 0.869 = 0.66, H100 0.331 / 0.803 = 0.41, H200 0.333 / 0.803 = 0.41), on
  // the problem those were measured on (the H100 one).
  double attention_to_matmul_default = 0.5;
  AttentionShape attention_default_measured_at = {32.0, 8192.0, 8192.0};
  // Fixed cost of one attention CTA beside its loop, in loop iterations, per pass
  // (sim/attention_tiles.h), fitted to cuDNN's causal BF16 rates over sequence length
  // (least squares on log rate, one full rate per pass; mean absolute error of the fit):
  //  - Hopper forward 2: H200, cuDNN 9.27, batch 1, 8-64 heads, seq 2,048-16,384
  //    (cudnn-frontend benchmark/attention_inference/results/prefill_sweep/h200, 1.4%).
  //    No Hopper backward sweep is published: the backward is taken at 1.5x the forward's,
  //    the ratio both Blackwell fits give (B200 8 / 5, GB200 6 / 4).
  //  - B200 5 / 8 (2.4% / 2.6%) and GB200 4 / 6 (1.9% / 5.2%): batch 1, 128 heads, seq
  //    1,024-32,768 (cudnn-frontend benchmark/sdpa_benchmark_training/artifacts: the
  //    B200 file's bf16 rows, the GB200 file's cudnn_fe rows; 512 and >= 65,536 left out,
  //    where other limits show: launch time, and a slowdown at 64k+ no tile count explains).
  // The fixed cost grows with the tensor cores' speed, as a fixed time would: the loop runs
  // faster, the loads and epilogue do not. Elsewhere the Hopper figures.
  std::vector<MeasuredAttentionTileOverhead> attention_tile_overheads = {
      {"h100-sxm", {2.0, 3.0}},
      {"h200", {2.0, 3.0}},
      {"b200", {5.0, 8.0}},
      {"gb200", {4.0, 6.0}},
  };
  AttentionTileOverhead attention_tile_overhead_default = {2.0, 3.0};

  // ---- Collectives beside compute ---------------------------------------------------------
  // SMs an NCCL collective holds while it runs beside compute kernels (a data-parallel
  // reduction overlapping the backward pass, a parameter all-gather overlapping the
  // forward). NCCL launches one CTA per channel, each CTA holds an SM to itself ("NCCL CTAs
  // won't share an SM with compute kernels"), and NCCL uses as many channels as reach the
  // platform's bandwidth: "on DGX with 8 NICs and a top speed of 190 GB/s, then it would
  // use 16 SMs" (S. Jeaugey, NCCL maintainer, NVIDIA/nccl issue #689, 2022: DGX A100).
  // On H100 an ncclAllGather beside a GEMM was profiled holding 24 SMs (Nsight Systems,
  // NVIDIA Developer Forums thread 337991, "Compute-Communication Overlap Causes Severe
  // GEMM Performance Degradation", 2025), in line with H100 NICs twice as fast and SMs ~1.4x
  // the clock. The compute beside it runs on the rest: (SMs - these) / SMs of its speed
  // (the executor's contention, TaskGraph::addContention). Not counted: the HBM traffic of
  // the reduction (tens of GB/s against TB/s) and the extra wave a GEMM sized to the whole
  // GPU may need.
  std::vector<MeasuredCount> collective_sms = {
      {"a100-sxm-80gb", 16.0}, {"a100-sxm-40gb", 16.0}, {"a100-pcie-80gb", 16.0}, {"h100-sxm", 24.0}, {"h200", 24.0},
  };
  // Other GPUs (NVIDIA, and AMD, whose RCCL also runs one workgroup per channel on the
  // compute units): the DGX A100 share, 16 of 108 SMs.
  double collective_compute_share_default = 16.0 / 108.0;
  // Vendors whose collectives move data without the compute units: Intel Gaudi (on-die RoCE
  // engines with their own DMA) and Google TPUs (ICI DMA engines). Share 0.
  std::vector<std::string> collective_offload_vendors = {"intel", "google"};

  // ---- Launch ---------------------------------------------------------------------------
  // Time a kernel costs beyond its own work: the host-side launch (CUDA driver + runtime,
  // "about 4-6 us" per launch, "pegainfer (3): From Launch Overhead to CUDA Graph",
  // https://susun-blog.com/blog/pegainfer-3-cuda-graph, code xiaguan/cuda-kernel-launch-lab;
  // NVIDIA Technical Blog "Getting Started with CUDA Graphs") and the gap between dependent
  // kernels. The Azure cuBLASLt table shows the same floor: 1024^3 FP8 on H100 takes 7.8 us,
  // where 2.1 GFLOP at the MAMF rate is 1.5 us. Microseconds.
  double launch_overhead_us = 4.0;

  // ---- Calibration ----------------------------------------------------------------------
  // Measured GEMM efficiency per shape class, from `trainsim calibrate --harness` on
  // trainsim-calib-gemm results (validate/gemm_fit.h). Empty by default: no published
  // per-class figure exists. A shape whose class has a row for the GPU and precision
  // (fp16/bf16 one class) runs at that efficiency instead of the tile model's.
  std::vector<GemmShapeEfficiency> gemm_shape_efficiency;
  // The rate a GPU's kernels reach inside a training step of a production software stack, as
  // a fraction of the rates above, which come from microbenchmarks that repeat one kernel:
  // every compute kernel's time (GEMM, attention, memory-bound, optimizer) is divided by it.
  // It takes what the kernel-level model cannot name in a stack (framework gaps between
  // kernels, clocks under a whole step's power draw, kernel versions other than the
  // benchmarked ones); `trainsim calibrate --training-step` refits it to the user's own
  // measured steps (validate/training_step_fit.h), which replace these rows.
  // Defaults: fitted per GPU type to the published runs of the training validation suite by
  // `trainsim validate training --fit-rate-fraction` (validate/training_rate_fit.h: the
  // suite's 92 default rows run at fractions 0.60-1.05 from the kernel rates, each GPU's
  // fraction balances the log errors of its sources, each source weighing the same;
  // docs/training-validation.md, changes 34 and 35). Suite MAPE 12.6% at the kernel rates,
  // 4.5% with these, 5.8% with each source predicted at the fraction fitted on its GPU's
  // other sources (leave one source out):
  //  - A100 SXM 80GB 0.969: SC21 (Megatron-LM 2021) and Korthikanti et al. (2022), 21 rows;
  //  - H100 SXM 0.882: Megatron-Core r0.8, Megatron-Bridge 25.09-26.02, DGX Cloud (NeMo
  //    24.05/24.09), MLPerf v3.1/v4.0, NeMo 24.03 and 24.07, 51 rows; held-out fractions
  //    0.872-0.887;
  //  - B200 0.836: Megatron-Bridge, MLPerf v4.1, NeMo 25.04 long-sequence, 13 rows
  //    (held out 0.806-0.876);
  //  - GB200 0.825: Megatron-Bridge, MLPerf v5.0/v5.1, 7 rows (held out 0.809-0.841).
  // Parts with no published run take their die's sibling's fraction (same silicon, same
  // stacks): A100 SXM 40GB and PCIe the A100 SXM 80GB's, H200 and GH200 the H100's. Other
  // GPUs: 1 (the kernel rates), for want of a measured step.
  std::vector<MeasuredFraction> training_rate_fraction = {
      {"a100-sxm-80gb", 0.969}, {"a100-sxm-40gb", 0.969}, {"a100-pcie-80gb", 0.969}, {"h100-sxm", 0.882},
      {"h200", 0.882},          {"gh200", 0.882},         {"b200", 0.836},           {"gb200", 0.825},
  };

  // These parameters without any training-rate fraction: the kernels at their microbenchmark
  // rates, for comparing the model with microbenchmarks (`validate gemm`, calibrate's GEMM
  // checks), which repeat one kernel as the rates above were measured.
  [[nodiscard]] ComputeParameters atKernelRates() const {
    ComputeParameters copy = *this;
    copy.training_rate_fraction.clear();
    return copy;
  }

  // Lookups (defined in compute_model.cpp).
  // Fraction of `gpu`'s peak at `precision` reached by the best-shaped GEMM (<= 1).
  [[nodiscard]] double matmulCeiling(const topology::GpuSpec& gpu, topology::Precision precision) const;
  // Fraction of `gpu`'s peak memory bandwidth reached by a streaming kernel.
  [[nodiscard]] double memoryEfficiency(std::string_view gpu_key) const;
  // The fraction of its kernels' rates `gpu_key` reaches in a training step (training_rate_fraction, else 1).
  [[nodiscard]] double trainingRateFraction(std::string_view gpu_key) const;
  // Fixed time per GEMM tile on `gpu_key`, seconds (tile_fixed_overhead, else tile_fixed_overhead_us).
  [[nodiscard]] double tileFixedOverheadSeconds(std::string_view gpu_key) const;
  // Share of a GEMM's epilogue traffic that adds to its time on `gpu_key` (gemm_epilogue_exposed).
  [[nodiscard]] double gemmEpilogueExposed(std::string_view gpu_key) const;
  // Share of `gpu`'s compute units an overlapped collective holds (collective_sms, else
  // the vendor rules above); `units`: its compute units.
  [[nodiscard]] double collectiveComputeShare(const topology::GpuSpec& gpu, int units) const;
  // Fractions of `gpu`'s peak at `precision` (a 16-bit one) reached by fused attention, on
  // the problem they were measured on (attentionMeasuredAt).
  [[nodiscard]] AttentionEfficiency attentionEfficiency(const topology::GpuSpec& gpu,
                                                        topology::Precision precision) const;
  [[nodiscard]] AttentionShape attentionMeasuredAt(const topology::GpuSpec& gpu) const;
  [[nodiscard]] AttentionTileOverhead attentionTileOverhead(std::string_view gpu_key) const;
};

}  // namespace trainsim::sim
