#include "perf/parameter_names.h"

#include <array>
#include <functional>
#include <utility>
#include <vector>

namespace trainsim::perf {
namespace {

// An entry of a fixed table; `element_of(parameters)` reaches it (a generic lambda, for
// const and mutable parameters alike).
template <class P, class Element>
ParameterName<P> element(std::string name, ParameterRange range, Element element_of) {
  return {std::move(name), range, false, [element_of](const P& p, std::string_view) { return element_of(p); },
          [element_of](P& p, std::string_view, double value) { element_of(p) = value; }};
}

// A per-GPU table of fractions: `in_force` reads the value a GPU has (its row or the
// table's default); setting one changes the GPU's row or adds it.
ParameterName<CommunicationParameters> perGpuFractions(
    std::string name, std::vector<MeasuredFraction> CommunicationParameters::*rows,
    std::function<double(const CommunicationParameters&, std::string_view)> in_force) {
  return {std::move(name), ParameterRange::kEfficiency, true, std::move(in_force),
          [rows](CommunicationParameters& p, std::string_view gpu, double value) {
            for (MeasuredFraction& row : p.*rows) {
              if (row.gpu_key == gpu) {
                row.fraction = value;
                return;
              }
            }
            (p.*rows).push_back({std::string(gpu), value});
          }};
}

constexpr std::array<std::string_view, 3> kHopClassNames = {"nvlink", "pcie", "network"};

std::vector<CommunicationParameterName> buildCommunicationNames() {
  using P = CommunicationParameters;
  using R = ParameterRange;
  std::vector<CommunicationParameterName> names;
  names.push_back(perGpuFractions("nvlink_efficiency", &P::nvlink_efficiency, [](const P& p, std::string_view gpu) {
    return p.linkEfficiency(topology::LinkType::kNvLink, gpu);
  }));
  names.push_back(scalarParameter("nvlink_efficiency_default", R::kEfficiency, &P::nvlink_efficiency_default));
  names.push_back(scalarParameter("infiniband_efficiency", R::kEfficiency, &P::infiniband_efficiency));
  names.push_back(scalarParameter("ethernet_efficiency", R::kEfficiency, &P::ethernet_efficiency));
  names.push_back(scalarParameter("pcie_efficiency", R::kEfficiency, &P::pcie_efficiency));
  names.push_back(scalarParameter("other_efficiency", R::kEfficiency, &P::other_efficiency));
  names.push_back(scalarParameter("nvls_efficiency", R::kEfficiency, &P::nvls_efficiency));
  names.push_back(perGpuFractions("nvls_efficiency_per_gpu", &P::nvls_efficiency_per_gpu,
                                  [](const P& p, std::string_view gpu) { return p.nvlsEfficiency(gpu); }));
  for (Protocol protocol : kAllProtocols) {
    const auto i = static_cast<std::size_t>(protocol);
    names.push_back(element<P>(
        "protocol_bandwidth_factor." + std::string(protocolName(protocol)),
        R::kEfficiency, [i](auto& p) -> auto& { return p.protocol_bandwidth_factor[i]; }));
  }
  for (Protocol protocol : kAllProtocols) {
    const auto i = static_cast<std::size_t>(protocol);
    names.push_back(element<P>(
        "tree_protocol_bandwidth_factor." + std::string(protocolName(protocol)),
        R::kEfficiency, [i](auto& p) -> auto& { return p.tree_protocol_bandwidth_factor[i]; }));
  }
  names.push_back(scalarParameter("ring_ll_bandwidth_factor_before_2_21_5", R::kEfficiency,
                                  &P::ring_ll_bandwidth_factor_before_2_21_5));
  for (NcclGpuClass gpu_class : kAllNcclGpuClasses) {
    const auto c = static_cast<std::size_t>(gpu_class);
    names.push_back(element<P>(
        "ll_max_bus_GBps_one_node." + std::string(ncclGpuClassName(gpu_class)),
        R::kPositive, [c](auto& p) -> auto& { return p.ll_max_bus_GBps_one_node[c]; }));
  }
  names.push_back(scalarParameter("ll_max_bus_GBps_two_nodes", R::kPositive, &P::ll_max_bus_GBps_two_nodes));
  names.push_back(scalarParameter("ll_max_bus_GBps_more_nodes", R::kPositive, &P::ll_max_bus_GBps_more_nodes));
  names.push_back(
      scalarParameter("ll_max_bus_GBps_amd_host_two_nodes", R::kPositive, &P::ll_max_bus_GBps_amd_host_two_nodes));
  names.push_back(
      scalarParameter("ll_max_bus_GBps_amd_host_more_nodes", R::kPositive, &P::ll_max_bus_GBps_amd_host_more_nodes));
  for (NcclGpuClass gpu_class : kAllNcclGpuClasses) {
    const auto c = static_cast<std::size_t>(gpu_class);
    names.push_back(element<P>(
        "ring_ll128_max_bus_GBps_per_channel." + std::string(ncclGpuClassName(gpu_class)),
        R::kPositive, [c](auto& p) -> auto& { return p.ring_ll128_max_bus_GBps_per_channel[c]; }));
    for (const auto& column : {std::pair<std::size_t, const char*>{0, "two_nodes"}, {1, "more_nodes"}}) {
      const std::size_t index = column.first;
      names.push_back(element<P>(
          "tree_ll128_max_bus_GBps_per_channel." + std::string(ncclGpuClassName(gpu_class)) + "." + column.second,
          R::kPositive, [ c, index ](auto& p) -> auto& { return p.tree_ll128_max_bus_GBps_per_channel[c][index]; }));
    }
  }
  for (auto algorithm : kAllAlgorithms) {
    for (Protocol protocol : kAllProtocols) {
      const auto a = static_cast<std::size_t>(algorithm);
      const auto i = static_cast<std::size_t>(protocol);
      names.push_back(element<P>(
          "base_latency_us." + std::string(algorithmName(algorithm)) + "." + std::string(protocolName(protocol)),
          R::kNonNegative, [ a, i ](auto& p) -> auto& { return p.base_latency_us[a][i]; }));
    }
  }
  for (const bool tree : {false, true}) {
    for (std::size_t hop = 0; hop < kHopClassNames.size(); ++hop) {
      for (Protocol protocol : kAllProtocols) {
        const auto i = static_cast<std::size_t>(protocol);
        names.push_back(element<P>(
            std::string(tree ? "tree" : "ring") + "_step_latency_us." + std::string(kHopClassNames[hop]) + "." +
                std::string(protocolName(protocol)),
            R::kNonNegative, [ tree, hop, i ](auto& p) -> auto& {
              return (tree ? p.tree_step_latency_us : p.ring_step_latency_us)[hop][i];
            }));
      }
    }
  }
  names.push_back(scalarParameter("nvls_step_latency_us", R::kNonNegative, &P::nvls_step_latency_us));
  names.push_back(
      scalarParameter("nvls_step_latency_us_before_2_21_5", R::kNonNegative, &P::nvls_step_latency_us_before_2_21_5));
  names.push_back(
      scalarParameter("nvls_tree_network_step_latency_us", R::kNonNegative, &P::nvls_tree_network_step_latency_us));
  for (NcclGpuClass gpu_class : kAllNcclGpuClasses) {
    for (const auto& column : {std::pair<std::size_t, const char*>{0, "one_node"}, {1, "more_nodes"}}) {
      const auto c = static_cast<std::size_t>(gpu_class);
      const std::size_t index = column.first;
      names.push_back(element<P>(
          "nvls_channels." + std::string(ncclGpuClassName(gpu_class)) + "." + column.second, R::kPositiveInteger,
          [ c, index ](auto& p) -> auto& { return p.nvls_channels[c][index]; }));
    }
  }
  names.push_back(scalarParameter("nvls_max_chunk_bytes", R::kPositive, &P::nvls_max_chunk_bytes));
  names.push_back(scalarParameter("nvls_max_heads", R::kPositiveInteger, &P::nvls_max_heads));
  names.push_back(
      scalarParameter("nvls_max_heads_before_2_21_5", R::kPositiveInteger, &P::nvls_max_heads_before_2_21_5));
  names.push_back(
      scalarParameter("nvls_tree_max_chunk_bytes_four_nodes", R::kPositive, &P::nvls_tree_max_chunk_bytes_four_nodes));
  names.push_back(scalarParameter("nvls_chunk_overhead_us", R::kNonNegative, &P::nvls_chunk_overhead_us));
  names.push_back(
      scalarParameter("ll_multi_node_intra_step_factor", R::kPositive, &P::ll_multi_node_intra_step_factor));
  names.push_back(scalarParameter("ring_net_overhead_us", R::kNonNegative, &P::ring_net_overhead_us));
  names.push_back(
      scalarParameter("ring_net_overhead_simple_factor", R::kPositive, &P::ring_net_overhead_simple_factor));
  names.push_back(scalarParameter("ring_net_overhead_amd_host_us", R::kNonNegative, &P::ring_net_overhead_amd_host_us));
  for (Protocol protocol : kAllProtocols) {
    const auto i = static_cast<std::size_t>(protocol);
    names.push_back(element<P>(
        "chunk_bytes." + std::string(protocolName(protocol)),
        R::kPositive, [i](auto& p) -> auto& { return p.chunk_bytes[i]; }));
  }
  for (Protocol protocol : kAllProtocols) {
    for (std::size_t size_class = 0; size_class < kTreeSizeClasses; ++size_class) {
      const auto i = static_cast<std::size_t>(protocol);
      names.push_back(element<P>(
          "tree_size_correction." + std::string(protocolName(protocol)) + "." + treeSizeClassName(size_class),
          R::kEfficiency, [ i, size_class ](auto& p) -> auto& { return p.tree_size_correction[i][size_class]; }));
    }
  }
  names.push_back(scalarParameter("pipeline_channels", R::kPositive, &P::pipeline_channels));
  names.push_back(scalarParameter("channel_bandwidth_GBps", R::kPositive, &P::channel_bandwidth_GBps));
  names.push_back(scalarParameter("tree_bandwidth_factor", R::kEfficiency, &P::tree_bandwidth_factor));
  for (NcclGpuClass gpu_class : kAllNcclGpuClasses) {
    for (const auto& column : {std::pair<std::size_t, const char*>{0, "two_nodes"}, {1, "more_nodes"}}) {
      const auto c = static_cast<std::size_t>(gpu_class);
      const std::size_t index = column.first;
      names.push_back(element<P>(
          "tree_max_bus_GBps_per_channel." + std::string(ncclGpuClassName(gpu_class)) + "." + column.second,
          R::kPositive, [ c, index ](auto& p) -> auto& { return p.tree_max_bus_GBps_per_channel[c][index]; }));
    }
  }
  names.push_back(scalarParameter("tree_max_bus_GBps_two_nodes", R::kNonNegative, &P::tree_max_bus_GBps_two_nodes));
  names.push_back(scalarParameter("tree_max_bus_GBps_more_nodes", R::kNonNegative, &P::tree_max_bus_GBps_more_nodes));
  names.push_back(
      scalarParameter("tree_algorithm_bandwidth_ratio", R::kEfficiency, &P::tree_algorithm_bandwidth_ratio));
  names.push_back(scalarParameter("nccl_max_channels", R::kPositiveInteger, &P::nccl_max_channels));
  names.push_back(scalarParameter("channel_duplication_min_GBps", R::kPositive, &P::channel_duplication_min_GBps));
  names.push_back(scalarParameter("channel_duplication_full_GBps", R::kPositive, &P::channel_duplication_full_GBps));
  names.push_back(
      scalarParameter("channel_duplication_max_channels", R::kPositiveInteger, &P::channel_duplication_max_channels));
  names.push_back(scalarParameter("launch_overhead_us", R::kNonNegative, &P::launch_overhead_us));
  names.push_back(scalarParameter("nccl_version", R::kPositiveInteger, &P::nccl_version));
  names.push_back(scalarParameter("pat_bandwidth_factor", R::kEfficiency, &P::pat_bandwidth_factor));
  names.push_back(scalarParameter("pat_log_step_latency_divisor", R::kPositive, &P::pat_log_step_latency_divisor));
  names.push_back(scalarParameter("pat_per_rank_latency_us", R::kNonNegative, &P::pat_per_rank_latency_us));
  return names;
}

std::vector<ComputeParameterName> buildComputeNames() {
  using P = ComputeParameters;
  using R = ParameterRange;
  std::vector<ComputeParameterName> names;
  names.push_back(scalarParameter("matmul_ceiling_default", R::kEfficiency, &P::matmul_ceiling_default));
  names.push_back(scalarParameter("full_rate_operand_reuse", R::kPositive, &P::full_rate_operand_reuse));
  names.push_back(scalarParameter("tile_fixed_overhead_us", R::kNonNegative, &P::tile_fixed_overhead_us));
  names.push_back({"fallback_compute_units", R::kPositiveInteger, false,
                   [](const P& p, std::string_view) { return static_cast<double>(p.fallback_compute_units); },
                   [](P& p, std::string_view, double value) { p.fallback_compute_units = static_cast<int>(value); }});
  names.push_back(scalarParameter("gemm_epilogue_exposed_default", R::kShare, &P::gemm_epilogue_exposed_default));
  names.push_back(scalarParameter("memory_efficiency_default", R::kEfficiency, &P::memory_efficiency_default));
  names.push_back(
      scalarParameter("elementwise_compute_efficiency", R::kEfficiency, &P::elementwise_compute_efficiency));
  names.push_back(scalarParameter("attention_to_matmul_default", R::kEfficiency, &P::attention_to_matmul_default));
  names.push_back(element<P>(
      "attention_default_measured_at.sequences", R::kPositive,
      [](auto& p) -> auto& { return p.attention_default_measured_at.sequences; }));
  names.push_back(element<P>(
      "attention_default_measured_at.queries", R::kPositive,
      [](auto& p) -> auto& { return p.attention_default_measured_at.queries; }));
  names.push_back(element<P>(
      "attention_default_measured_at.keys", R::kPositive,
      [](auto& p) -> auto& { return p.attention_default_measured_at.keys; }));
  names.push_back(element<P>(
      "attention_tile_overhead_default.forward", R::kNonNegative,
      [](auto& p) -> auto& { return p.attention_tile_overhead_default.forward; }));
  names.push_back(element<P>(
      "attention_tile_overhead_default.backward", R::kNonNegative,
      [](auto& p) -> auto& { return p.attention_tile_overhead_default.backward; }));
  names.push_back(scalarParameter("collective_compute_share_default", R::kShare, &P::collective_compute_share_default));
  names.push_back(scalarParameter("launch_overhead_us", R::kNonNegative, &P::launch_overhead_us));
  names.push_back(scalarParameter("dispatch_eager_us", R::kNonNegative, &P::dispatch_eager_us));
  names.push_back(scalarParameter("dispatch_eager_in_step_factor", R::kPositive, &P::dispatch_eager_in_step_factor));
  names.push_back(scalarParameter("dispatch_compiled_us", R::kNonNegative, &P::dispatch_compiled_us));
  names.push_back(scalarParameter("dispatch_cuda_graphs_us", R::kNonNegative, &P::dispatch_cuda_graphs_us));
  names.push_back(scalarParameter("dispatch_kernel_gap_us", R::kNonNegative, &P::dispatch_kernel_gap_us));
  names.push_back(scalarParameter("dispatch_library_call_us", R::kNonNegative, &P::dispatch_library_call_us));
  names.push_back(scalarParameter("dispatch_native_kernel_us", R::kNonNegative, &P::dispatch_native_kernel_us));
  names.push_back(scalarParameter("training_rate_fraction_default", R::kPositive, &P::training_rate_fraction_default));
  names.push_back(scalarParameter("training_rate_stack_factor", R::kPositive, &P::training_rate_stack_factor));
  names.push_back(scalarParameter("power_clock_exponent", R::kNonNegative, &P::power_clock_exponent));
  return names;
}

template <class Name>
const Name* findName(std::span<const Name> names, std::string_view name) {
  for (const auto& entry : names) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

}  // namespace

std::span<const CommunicationParameterName> communicationParameterNames() {
  static const std::vector<CommunicationParameterName> names = buildCommunicationNames();
  return names;
}

std::span<const ComputeParameterName> computeParameterNames() {
  static const std::vector<ComputeParameterName> names = buildComputeNames();
  return names;
}

const CommunicationParameterName* findCommunicationParameter(std::string_view name) {
  return findName(communicationParameterNames(), name);
}

const ComputeParameterName* findComputeParameter(std::string_view name) {
  return findName(computeParameterNames(), name);
}

bool inRange(ParameterRange range, double value) {
  switch (range) {
    case ParameterRange::kEfficiency: return value > 0.0 && value <= 1.0;
    case ParameterRange::kShare: return value >= 0.0 && value <= 1.0;
    case ParameterRange::kNonNegative: return value >= 0.0;
    case ParameterRange::kPositive: return value > 0.0;
    case ParameterRange::kPositiveInteger: return value >= 1.0 && value <= 1e9 && value == static_cast<int>(value);
  }
  return false;
}

std::string_view rangeDescription(ParameterRange range) {
  switch (range) {
    case ParameterRange::kEfficiency: return "a fraction in (0, 1]";
    case ParameterRange::kShare: return "a fraction in [0, 1]";
    case ParameterRange::kNonNegative: return "a number >= 0";
    case ParameterRange::kPositive: return "a positive number";
    case ParameterRange::kPositiveInteger: return "a positive integer";
  }
  return "";
}

std::string_view linkEfficiencyParameter(topology::LinkType type) {
  using topology::LinkType;
  switch (type) {
    case LinkType::kNvLink: return "nvlink_efficiency";
    case LinkType::kInfiniBand: return "infiniband_efficiency";
    case LinkType::kRoce:
    case LinkType::kEthernet: return "ethernet_efficiency";
    case LinkType::kPcie: return "pcie_efficiency";
    case LinkType::kIci:
    case LinkType::kSocketInterconnect: return "other_efficiency";
  }
  return "other_efficiency";
}

}  // namespace trainsim::perf
