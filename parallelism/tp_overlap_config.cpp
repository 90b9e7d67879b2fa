#include "parallelism/tp_overlap_config.h"

#include <string>
#include <vector>

#include "base/error.h"

namespace trainsim::parallelism {
namespace {

constexpr std::array<std::string_view, kTpOverlapGemmCount> kGemmNames = {
    "qkv_fprop", "qkv_dgrad", "qkv_wgrad", "proj_fprop", "proj_dgrad",
    "fc1_fprop", "fc1_dgrad", "fc1_wgrad", "fc2_fprop",  "fc2_dgrad",
};

// The method Transformer Engine gives each GEMM by default, and the ones it can run:
// an all-gather before a GEMM only by ring exchange (CommOverlapP2P), a reduce-scatter after
// a forward GEMM pipelined or by ring exchange, the backward overlaps of the
// column-parallel GEMMs in bulk.
TpOverlapMethod defaultMethod(TpOverlapGemm gemm) {
  switch (gemm) {
    case TpOverlapGemm::kQkvFprop:
    case TpOverlapGemm::kFc1Fprop:
    case TpOverlapGemm::kProjDgrad:
    case TpOverlapGemm::kFc2Dgrad: return TpOverlapMethod::kRingExchange;
    case TpOverlapGemm::kProjFprop:
    case TpOverlapGemm::kFc2Fprop: return TpOverlapMethod::kPipeline;
    default: return TpOverlapMethod::kBulk;
  }
}

std::vector<std::string_view> allowedMethods(TpOverlapGemm gemm) {
  switch (defaultMethod(gemm)) {
    case TpOverlapMethod::kRingExchange: return {"ring_exchange"};
    case TpOverlapMethod::kPipeline: return {"pipeline", "ring_exchange"};
    case TpOverlapMethod::kBulk: return {"bulk"};
  }
  return {};
}

TpOverlapMethod methodNamed(std::string_view name) {
  if (name == "ring_exchange") return TpOverlapMethod::kRingExchange;
  if (name == "pipeline") return TpOverlapMethod::kPipeline;
  return TpOverlapMethod::kBulk;
}

// Transformer Engine's configs write flags as 0 / 1 as often as false / true.
bool readFlag(const ConfigNode& node) {
  if (node.isScalar()) {
    const std::string& text = node.yaml().Scalar();
    if (text == "0") return false;
    if (text == "1") return true;
  }
  try {
    return node.asBool();
  } catch (const InputError&) {
    node.failExpected("true, false, 0 or 1");
  }
}

TpOverlapGemmSettings readGemm(const ConfigNode& node, TpOverlapGemm gemm, TpOverlapGemmSettings settings) {
  node.requireMap();
  node.allowKeys(
      {"method", "num_sm", "num_splits", "set_sm_margin", "cga_size", "aggregate", "atomic_gemm", "fp8_buf", "use_ce"});
  if (auto method = node.optionalChild("method")) {
    const auto allowed = allowedMethods(gemm);
    if (!method->isScalar()) method->failExpected("a method name");
    const std::string& name = method->yaml().Scalar();
    bool known = false;
    for (auto choice : allowed) known = known || name == choice;
    if (!known) {
      std::string choices;
      for (auto choice : allowed) choices += (choices.empty() ? "" : " or ") + std::string(choice);
      method->failExpected(choices + " (what Transformer Engine can run beside " +
                           std::string(tpOverlapGemmName(gemm)) + ")");
    }
    // As in Transformer Engine, the GEMM's own defaults stay for the keys not given, even
    // when the method changes (NeMo's presets give num_sm and set_sm_margin with it).
    settings.method = methodNamed(name);
  }
  if (auto num_sm = node.optionalChild("num_sm")) settings.num_sm = num_sm->asIntegerIn(1, 1024);
  if (auto splits = node.optionalChild("num_splits")) settings.num_splits = splits->asIntegerIn(1, 64);
  if (auto margin = node.optionalChild("set_sm_margin")) settings.set_sm_margin = readFlag(*margin);
  // Accepted so that a recipe's config reads as it is; no effect in the model.
  if (auto cga = node.optionalChild("cga_size")) (void)cga->asIntegerIn(1, 16);
  for (const char* flag : {"aggregate", "atomic_gemm", "fp8_buf", "use_ce"}) {
    if (auto value = node.optionalChild(flag)) (void)readFlag(*value);
  }
  return settings;
}

}  // namespace

std::string_view tpOverlapMethodName(TpOverlapMethod method) {
  switch (method) {
    case TpOverlapMethod::kRingExchange: return "ring_exchange";
    case TpOverlapMethod::kPipeline: return "pipeline";
    case TpOverlapMethod::kBulk: return "bulk";
  }
  return "unknown";
}

std::string_view tpOverlapGemmName(TpOverlapGemm gemm) { return kGemmNames[static_cast<std::size_t>(gemm)]; }

std::array<TpOverlapGemmSettings, kTpOverlapGemmCount> TpCommOverlapConfig::transformerEngineDefaults() {
  std::array<TpOverlapGemmSettings, kTpOverlapGemmCount> gemms;
  for (std::size_t index = 0; index < kTpOverlapGemmCount; ++index) {
    const TpOverlapMethod method = defaultMethod(static_cast<TpOverlapGemm>(index));
    const bool ring = method == TpOverlapMethod::kRingExchange;
    gemms[index] = {method, ring ? 1 : 16, 4, !ring};
  }
  return gemms;
}

TpCommOverlapConfig readTpCommOverlapConfig(const ConfigNode& section) {
  section.requireMap();
  section.allowKeys(std::vector<std::string>(kGemmNames.begin(), kGemmNames.end()));
  TpCommOverlapConfig config;
  for (std::size_t index = 0; index < kTpOverlapGemmCount; ++index) {
    const auto gemm = static_cast<TpOverlapGemm>(index);
    if (auto node = section.optionalChild(kGemmNames[index])) config[gemm] = readGemm(*node, gemm, config[gemm]);
  }
  return config;
}

}  // namespace trainsim::parallelism
