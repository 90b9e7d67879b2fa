#include "topology/gpu_spec.h"

namespace trainsim::topology {

std::string_view precisionName(Precision precision) {
  switch (precision) {
    case Precision::kFp64: return "fp64";
    case Precision::kFp32: return "fp32";
    case Precision::kTf32: return "tf32";
    case Precision::kFp16: return "fp16";
    case Precision::kBf16: return "bf16";
    case Precision::kFp8: return "fp8";
  }
  return "unknown";
}

std::optional<Precision> parsePrecision(std::string_view name) {
  for (Precision precision : kAllPrecisions) {
    if (precisionName(precision) == name) return precision;
  }
  return std::nullopt;
}

std::string_view fabricName(IntraNodeFabric fabric) {
  switch (fabric) {
    case IntraNodeFabric::kNvSwitch: return "nvswitch";
    case IntraNodeFabric::kNvLinkMesh: return "nvlink_mesh";
    case IntraNodeFabric::kPcie: return "pcie";
    case IntraNodeFabric::kTorus: return "torus";
  }
  return "unknown";
}

}  // namespace trainsim::topology
