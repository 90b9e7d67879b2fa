#include "topology/gpu_catalog.h"

#include "topology/cluster_loader.h"

namespace trainsim::topology {
IntraNodeFabric GpuCatalog::parseFabric(const ConfigNode& node) {
  const std::string text = node.asEnum({"nvswitch", "nvlink_mesh", "pcie", "torus"});
  if (text == "nvswitch") return IntraNodeFabric::kNvSwitch;
  if (text == "nvlink_mesh") return IntraNodeFabric::kNvLinkMesh;
  if (text == "torus") return IntraNodeFabric::kTorus;
  return IntraNodeFabric::kPcie;
}

GpuSpec GpuCatalog::parseEntry(const ConfigNode& node, const std::string& key) {
  node.allowKeys({"name", "vendor", "kind", "form_factor", "peak_tflops", "memory_GiB", "memory_bandwidth_GBps",
                  "compute_units", "intra_node_bandwidth_GBps", "default_fabric", "nvls", "fp8_gemm_any_layout",
                  "compute_capability", "pcie_bandwidth_GBps", "tdp_W", "rates_power_W", "source"});
  GpuSpec gpu;
  gpu.key = key;
  gpu.name = node.string("name", key);
  gpu.vendor = node.enumeration("vendor", {"nvidia", "amd", "intel", "google"}, "nvidia");
  gpu.kind = node.enumeration("kind", {"gpu", "tpu"}, "gpu");
  gpu.form_factor = node.enumeration("form_factor", {"sxm", "pcie", "oam", "mezzanine", "tpu"}, "sxm");

  const ConfigNode peaks = node.child("peak_tflops");
  peaks.allowKeys({"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"});
  bool any_peak = false;
  for (Precision precision : kAllPrecisions) {
    if (auto value = peaks.optionalChild(precisionName(precision))) {
      gpu.peak_tflops[static_cast<std::size_t>(precision)] =
          value->asNumberIn(limits::kMinPeakTflops, limits::kMaxPeakTflops);
      any_peak = true;
    }
  }
  if (!any_peak) peaks.fail("expected at least one precision (fp64, fp32, tf32, fp16, bf16 or fp8)");

  gpu.memory_GiB = node.child("memory_GiB").asNumberIn(limits::kMinMemoryGiB, limits::kMaxMemoryGiB);
  gpu.memory_bandwidth_GBps =
      node.child("memory_bandwidth_GBps").asNumberIn(limits::kMinBandwidthGBps, limits::kMaxBandwidthGBps);
  if (auto units = node.optionalChild("compute_units")) {
    gpu.compute_units = static_cast<int>(units->asIntegerIn(1, limits::kMaxComputeUnits));
  }
  if (auto bandwidth = node.optionalChild("intra_node_bandwidth_GBps")) {
    // 0 says the GPU has no scale-up link; anything else is a bandwidth like the others.
    gpu.intra_node_bandwidth_GBps = bandwidth->asNumberIn(0.0, limits::kMaxBandwidthGBps);
    if (gpu.intra_node_bandwidth_GBps > 0.0 && gpu.intra_node_bandwidth_GBps < limits::kMinBandwidthGBps) {
      bandwidth->failExpected("0 (no NVLink or similar) or a number between " + formatBound(limits::kMinBandwidthGBps) +
                              " and " + formatBound(limits::kMaxBandwidthGBps));
    }
  }
  gpu.default_fabric = IntraNodeFabric::kPcie;
  if (auto fabric = node.optionalChild("default_fabric")) gpu.default_fabric = parseFabric(*fabric);
  gpu.nvls = node.boolean("nvls", false);
  gpu.fp8_gemm_any_layout = node.boolean("fp8_gemm_any_layout", false);
  if (gpu.fp8_gemm_any_layout && !gpu.peakTflops(Precision::kFp8)) {
    node.child("fp8_gemm_any_layout").fail("needs an fp8 rate in peak_tflops");
  }
  // CUDA compute capabilities run from 1.0 (Tesla) to 12.x (Blackwell GeForce) so far.
  if (auto capability = node.optionalChild("compute_capability")) {
    gpu.compute_capability = capability->asNumberIn(1.0, 12.9);
  }
  // PCIe Gen4 x16 (32 GB/s per direction) when a custom inline GPU does not say.
  gpu.pcie_bandwidth_GBps =
      node.numberIn("pcie_bandwidth_GBps", 32.0, limits::kMinBandwidthGBps, limits::kMaxBandwidthGBps);
  gpu.tdp_W = node.numberIn("tdp_W", 0.0, 0.0, limits::kMaxTdpW);
  if (auto rated = node.optionalChild("rates_power_W")) {
    gpu.rates_power_W = rated->asNumberIn(limits::kMinPowerW, limits::kMaxTdpW);
    if (gpu.tdp_W <= 0.0) rated->fail("rates_power_W needs tdp_W, the power limit the part runs at");
  }
  gpu.source = node.string("source", "");
  if (gpu.default_fabric != IntraNodeFabric::kPcie && gpu.intra_node_bandwidth_GBps <= 0.0) {
    // Blamed on what made the pair wrong: a --set of the fabric (the user's latest word), else
    // the bandwidth given as 0 (in the file or by --set), else the mapping that lacks it.
    const std::string fabric_name(fabricName(gpu.default_fabric));
    const auto fabric = node.optionalChild("default_fabric");
    const auto bandwidth = node.optionalChild("intra_node_bandwidth_GBps");
    if (fabric && fabric->where().starts_with("--set ")) {
      fabric->fail("default_fabric " + fabric_name + " needs intra_node_bandwidth_GBps (per GPU, per direction)");
    }
    if (bandwidth) {
      bandwidth->failExpected("a positive number (default_fabric " + fabric_name +
                              " needs the GPU's scale-up bandwidth, per GPU, per direction)");
    }
    node.fail("default_fabric " + fabric_name + " needs intra_node_bandwidth_GBps (per GPU, per direction)");
  }
  return gpu;
}

Expected<GpuCatalog> GpuCatalog::load(const std::string& file_path) {
  return catchInputErrors([&]() -> GpuCatalog {
    const ConfigNode root = loadConfigFile(file_path);
    root.allowKeys({"gpus"});
    GpuCatalog catalog;
    for (const auto& [key, entry] : root.child("gpus").entries()) {
      catalog.entries_.emplace(key, parseEntry(entry, key));
    }
    return catalog;
  });
}

const GpuSpec* GpuCatalog::find(const std::string& key) const {
  auto found = entries_.find(key);
  return found == entries_.end() ? nullptr : &found->second;
}

std::vector<std::string> GpuCatalog::keys() const {
  std::vector<std::string> names;
  names.reserve(entries_.size());
  for (const auto& entry : entries_) names.push_back(entry.first);
  return names;
}

}  // namespace trainsim::topology
