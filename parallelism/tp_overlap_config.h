// How Transformer Engine's userbuffers run each tensor-parallel collective beside its GEMM
// under tp_comm_overlap: the per-GEMM settings of Megatron-Core's --tp-comm-overlap-cfg /
// NeMo's ub_tp_comm_overlap_cfg (the experiment's `parallelism.tp_comm_overlap_config`).
//
// A dense transformer layer has ten such GEMMs (transformer_engine/pytorch/module/base.py,
// initialize_ub): the column-parallel QKV and fc1 GEMMs (forward beside the all-gather of
// their input; input gradient beside its re-gather; weight gradient beside the reduce-scatter
// of the input gradient) and the row-parallel attention-output (proj) and fc2 GEMMs (forward
// beside the reduce-scatter of their output; input gradient beside the all-gather of the
// output gradient).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "base/config_node.h"

namespace trainsim::parallelism {

enum class TpOverlapMethod : uint8_t {
  kRingExchange,  // peer-to-peer copies, the GEMM in tp chunks as the slices arrive (or leave)
  kPipeline,      // the GEMM in chunks, each chunk's output reduce-scattered while the next runs
  kBulk,          // a whole collective beside a whole GEMM
};
[[nodiscard]] std::string_view tpOverlapMethodName(TpOverlapMethod method);

enum class TpOverlapGemm : uint8_t {
  kQkvFprop,
  kQkvDgrad,
  kQkvWgrad,
  kProjFprop,
  kProjDgrad,
  kFc1Fprop,
  kFc1Dgrad,
  kFc1Wgrad,
  kFc2Fprop,
  kFc2Dgrad,
};
inline constexpr std::size_t kTpOverlapGemmCount = 10;
// Transformer Engine's name of the GEMM ("qkv_fprop", ...).
[[nodiscard]] std::string_view tpOverlapGemmName(TpOverlapGemm gemm);

struct TpOverlapGemmSettings {
  TpOverlapMethod method = TpOverlapMethod::kBulk;
  // SMs the collective's kernels hold while the GEMM runs (TE's num_sm; the ring exchange's
  // copies run on the copy engines and hold 1).
  int64_t num_sm = 16;
  // Chunks the GEMM runs in beside a pipelined collective (TE's num_splits); a ring exchange
  // always runs tp chunks and a bulk overlap one.
  int64_t num_splits = 4;
  // Whether the GEMM is planned for the SMs the collective leaves (TE's set_sm_margin: the
  // cuBLASLt SM-count target = SMs - num_sm) or for the whole GPU, its waves then slowed by
  // the SMs the collective holds.
  bool set_sm_margin = true;
  bool operator==(const TpOverlapGemmSettings&) const = default;
};

struct TpCommOverlapConfig {
  // Transformer Engine 2.x's defaults (base.py, get_default_config): ring exchange on 1 SM
  // without margin for qkv/fc1 forward and proj/fc2 input gradient; pipeline (4 splits) for
  // proj/fc2 forward and bulk for qkv/fc1 input and weight gradients, on 16 SMs with margin.
  // (Before 2.0 set_sm_margin defaulted to false for every GEMM.)
  std::array<TpOverlapGemmSettings, kTpOverlapGemmCount> gemms = transformerEngineDefaults();

  [[nodiscard]] const TpOverlapGemmSettings& operator[](TpOverlapGemm gemm) const {
    return gemms[static_cast<std::size_t>(gemm)];
  }
  [[nodiscard]] TpOverlapGemmSettings& operator[](TpOverlapGemm gemm) { return gemms[static_cast<std::size_t>(gemm)]; }
  bool operator==(const TpCommOverlapConfig&) const = default;

  [[nodiscard]] static std::array<TpOverlapGemmSettings, kTpOverlapGemmCount> transformerEngineDefaults();
};

// Reads `parallelism.tp_comm_overlap_config`: a mapping from GEMM name to its settings, in
// Transformer Engine's ub_cfg format so that a recipe's config can be pasted as it is:
//   proj_fprop: {method: pipeline, num_sm: 24, cga_size: 2, num_splits: 4, set_sm_margin: 1}
// GEMMs left out keep the defaults. method, num_sm, num_splits and set_sm_margin are
// modelled; cga_size, aggregate, atomic_gemm, fp8_buf and use_ce are checked and accepted
// but change nothing in the model (docs/configuration.md). A method a GEMM cannot run
// (bulk beside a forward GEMM, pipeline beside an all-gather) is an error.
[[nodiscard]] TpCommOverlapConfig readTpCommOverlapConfig(const ConfigNode& section);

}  // namespace trainsim::parallelism
