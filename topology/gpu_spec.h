// One accelerator model: dense peak rates per precision, memory, interconnect defaults.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace trainsim::topology {

enum class Precision : uint8_t { kFp64, kFp32, kTf32, kFp16, kBf16, kFp8 };
inline constexpr std::array<Precision, 6> kAllPrecisions = {Precision::kFp64, Precision::kFp32, Precision::kTf32,
                                                            Precision::kFp16, Precision::kBf16, Precision::kFp8};
[[nodiscard]] std::string_view precisionName(Precision precision);
[[nodiscard]] std::optional<Precision> parsePrecision(std::string_view name);

enum class IntraNodeFabric : uint8_t { kNvSwitch, kNvLinkMesh, kPcie, kTorus };
[[nodiscard]] std::string_view fabricName(IntraNodeFabric fabric);

struct GpuSpec {
  std::string key;           // catalog key, e.g. "h100-sxm" ("inline" for an inline mapping)
  std::string name;          // "NVIDIA H100 SXM5 80GB"
  std::string vendor;        // nvidia | amd | intel | google
  std::string kind = "gpu";  // gpu | tpu
  std::string form_factor;   // sxm | pcie | oam | mezzanine | tpu
  // Dense peak TFLOP/s per precision (index = Precision); empty = unsupported.
  std::array<std::optional<double>, kAllPrecisions.size()> peak_tflops{};
  double memory_GiB = 0.0;
  double memory_bandwidth_GBps = 0.0;
  int compute_units = 0;                   // SMs / CUs; 0 = not published
  double intra_node_bandwidth_GBps = 0.0;  // per GPU per direction; 0 = none (PCIe only)
  IntraNodeFabric default_fabric = IntraNodeFabric::kPcie;
  bool nvls = false;  // NVLink SHARP capable
  // FP8 tensor-core GEMMs take either operand layout (NVIDIA compute capability 10.x,
  // Blackwell), so FP8 training keeps no transposed FP8 copies of weights and activations
  // (Transformer Engine's is_non_tn_fp8_gemm_supported()); Hopper's FP8 GEMMs are TN only.
  bool fp8_gemm_any_layout = false;
  // NVIDIA's CUDA compute capability (9.0 for Hopper); none for other vendors' parts. NCCL's
  // tuner picks its per-generation tables by it (perf::ncclGpuClass).
  std::optional<double> compute_capability;
  double pcie_bandwidth_GBps = 0.0;  // host interface per direction
  double tdp_W = 0.0;                // 0 = not given
  // The board power the rates above (and the measured rates that name this GPU) hold at, where
  // it is not tdp_W: a part run under a lower limit than the one its rates were published or
  // measured at (Meta's 500 W H100 96GB with the 700 W H100 SXM's rates). 0 = tdp_W.
  double rates_power_W = 0.0;
  // The power limit the cluster runs it at (the cluster's gpu_power_limit_W). 0 = tdp_W.
  double power_limit_W = 0.0;
  std::string source;

  [[nodiscard]] std::optional<double> peakTflops(Precision precision) const {
    return peak_tflops[static_cast<std::size_t>(precision)];
  }
  [[nodiscard]] bool isTpu() const { return kind == "tpu"; }
  // The power limit over the power the rates hold at (1 where either is unknown).
  [[nodiscard]] double powerLimitRatio() const {
    const double rated = rates_power_W > 0.0 ? rates_power_W : tdp_W;
    const double limit = power_limit_W > 0.0 ? power_limit_W : tdp_W;
    return rated > 0.0 && limit > 0.0 ? limit / rated : 1.0;
  }
};

}  // namespace trainsim::topology
