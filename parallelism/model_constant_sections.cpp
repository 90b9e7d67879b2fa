#include "parallelism/model_constant_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace trainsim::parallelism {
namespace {

std::vector<WorkloadConstantName> buildWorkloadNames() {
  using P = FlopsOptions;
  using R = perf::ParameterRange;
  std::vector<WorkloadConstantName> names;
  names.push_back(perf::scalarParameter("causal_work_fraction", R::kEfficiency, &P::causal_work_fraction));
  names.push_back(perf::scalarParameter("flash_backward_matmuls_over_forward", R::kPositive,
                                        &P::flash_backward_matmuls_over_forward));
  names.push_back(
      perf::scalarParameter("flash_dropout_forward_throughput", R::kEfficiency, &P::flash_dropout_forward_throughput));
  names.push_back(perf::scalarParameter("flash_dropout_backward_throughput", R::kEfficiency,
                                        &P::flash_dropout_backward_throughput));
  names.push_back(
      perf::scalarParameter("layer_norm_flops_per_element", R::kNonNegative, &P::layer_norm_flops_per_element));
  names.push_back(perf::scalarParameter("rms_norm_flops_per_element", R::kNonNegative, &P::rms_norm_flops_per_element));
  names.push_back(perf::scalarParameter("gelu_flops_per_element", R::kNonNegative, &P::gelu_flops_per_element));
  names.push_back(perf::scalarParameter("swiglu_flops_per_element", R::kNonNegative, &P::swiglu_flops_per_element));
  names.push_back(perf::scalarParameter("rope_flops_per_element", R::kNonNegative, &P::rope_flops_per_element));
  names.push_back(perf::scalarParameter("softmax_flops_per_element", R::kNonNegative, &P::softmax_flops_per_element));
  names.push_back(
      perf::scalarParameter("cross_entropy_flops_per_element", R::kNonNegative, &P::cross_entropy_flops_per_element));
  names.push_back(perf::scalarParameter("residual_flops_per_element", R::kNonNegative, &P::residual_flops_per_element));
  names.push_back(perf::scalarParameter("dropout_flops_per_element", R::kNonNegative, &P::dropout_flops_per_element));
  names.push_back(
      perf::scalarParameter("moe_combine_flops_per_element", R::kNonNegative, &P::moe_combine_flops_per_element));
  names.push_back(perf::scalarParameter("moe_routing_extra_kernels_forward", R::kNonNegative,
                                        &P::moe_routing_extra_kernels_forward));
  names.push_back(perf::scalarParameter("moe_routing_extra_kernels_backward", R::kNonNegative,
                                        &P::moe_routing_extra_kernels_backward));
  names.push_back(perf::scalarParameter("moe_dispatch_host_sync_share", R::kShare, &P::moe_dispatch_host_sync_share));
  names.push_back(perf::scalarParameter("elementwise_backward_flops_factor", R::kNonNegative,
                                        &P::elementwise_backward_flops_factor));
  names.push_back(perf::scalarParameter("cross_entropy_forward_fp32_accesses", R::kNonNegative,
                                        &P::cross_entropy_forward_fp32_accesses));
  names.push_back(perf::scalarParameter("cross_entropy_backward_fp32_accesses", R::kNonNegative,
                                        &P::cross_entropy_backward_fp32_accesses));
  names.push_back(perf::scalarParameter("fused_cross_entropy_forward_accesses", R::kNonNegative,
                                        &P::fused_cross_entropy_forward_accesses));
  names.push_back(perf::scalarParameter("fused_cross_entropy_backward_accesses", R::kNonNegative,
                                        &P::fused_cross_entropy_backward_accesses));
  names.push_back(perf::scalarParameter("eager_rms_norm_forward_16bit_accesses", R::kNonNegative,
                                        &P::eager_rms_norm_forward_16bit_accesses));
  names.push_back(perf::scalarParameter("eager_rms_norm_forward_fp32_accesses", R::kNonNegative,
                                        &P::eager_rms_norm_forward_fp32_accesses));
  names.push_back(perf::scalarParameter("eager_rms_norm_backward_16bit_accesses", R::kNonNegative,
                                        &P::eager_rms_norm_backward_16bit_accesses));
  names.push_back(perf::scalarParameter("eager_rms_norm_backward_fp32_accesses", R::kNonNegative,
                                        &P::eager_rms_norm_backward_fp32_accesses));
  names.push_back(
      perf::scalarParameter("eager_rms_norm_kernels_forward", R::kNonNegative, &P::eager_rms_norm_kernels_forward));
  names.push_back(
      perf::scalarParameter("eager_rms_norm_kernels_backward", R::kNonNegative, &P::eager_rms_norm_kernels_backward));
  names.push_back(perf::scalarParameter("eager_rope_16bit_accesses", R::kNonNegative, &P::eager_rope_16bit_accesses));
  names.push_back(perf::scalarParameter("eager_rope_fp32_accesses", R::kNonNegative, &P::eager_rope_fp32_accesses));
  names.push_back(perf::scalarParameter("eager_rope_kernels", R::kNonNegative, &P::eager_rope_kernels));
  names.push_back(
      perf::scalarParameter("eager_swiglu_forward_accesses", R::kNonNegative, &P::eager_swiglu_forward_accesses));
  names.push_back(
      perf::scalarParameter("eager_swiglu_backward_accesses", R::kNonNegative, &P::eager_swiglu_backward_accesses));
  names.push_back(
      perf::scalarParameter("eager_swiglu_kernels_forward", R::kNonNegative, &P::eager_swiglu_kernels_forward));
  names.push_back(
      perf::scalarParameter("eager_swiglu_kernels_backward", R::kNonNegative, &P::eager_swiglu_kernels_backward));
  names.push_back(perf::scalarParameter("moe_grouped_gemm_library_calls_per_expert", R::kNonNegative,
                                        &P::moe_grouped_gemm_library_calls_per_expert));
  names.push_back(perf::scalarParameter("moe_expert_bias_forward_16bit_accesses", R::kNonNegative,
                                        &P::moe_expert_bias_forward_16bit_accesses));
  names.push_back(perf::scalarParameter("moe_expert_bias_forward_fp32_accesses", R::kNonNegative,
                                        &P::moe_expert_bias_forward_fp32_accesses));
  names.push_back(perf::scalarParameter("moe_expert_bias_backward_16bit_accesses", R::kNonNegative,
                                        &P::moe_expert_bias_backward_16bit_accesses));
  names.push_back(perf::scalarParameter("moe_expert_bias_backward_fp32_accesses", R::kNonNegative,
                                        &P::moe_expert_bias_backward_fp32_accesses));
  names.push_back(perf::scalarParameter("moe_expert_bias_kernels_per_expert_forward", R::kNonNegative,
                                        &P::moe_expert_bias_kernels_per_expert_forward));
  names.push_back(perf::scalarParameter("moe_expert_bias_kernels_per_expert_backward", R::kNonNegative,
                                        &P::moe_expert_bias_kernels_per_expert_backward));
  names.push_back(
      perf::scalarParameter("moe_expert_bias_kernels_forward", R::kNonNegative, &P::moe_expert_bias_kernels_forward));
  names.push_back(
      perf::scalarParameter("moe_expert_bias_kernels_backward", R::kNonNegative, &P::moe_expert_bias_kernels_backward));
  names.push_back(perf::scalarParameter("moe_expert_bias_16bit_probs_forward_accesses", R::kNonNegative,
                                        &P::moe_expert_bias_16bit_probs_forward_accesses));
  names.push_back(perf::scalarParameter("moe_expert_bias_16bit_probs_backward_accesses", R::kNonNegative,
                                        &P::moe_expert_bias_16bit_probs_backward_accesses));
  names.push_back(perf::scalarParameter("moe_expert_bias_16bit_probs_kernels_per_expert_forward", R::kNonNegative,
                                        &P::moe_expert_bias_16bit_probs_kernels_per_expert_forward));
  names.push_back(perf::scalarParameter("moe_expert_bias_16bit_probs_kernels_per_expert_backward", R::kNonNegative,
                                        &P::moe_expert_bias_16bit_probs_kernels_per_expert_backward));
  names.push_back(perf::scalarParameter("moe_expert_bias_16bit_probs_kernels_forward", R::kNonNegative,
                                        &P::moe_expert_bias_16bit_probs_kernels_forward));
  names.push_back(perf::scalarParameter("moe_expert_bias_16bit_probs_kernels_backward", R::kNonNegative,
                                        &P::moe_expert_bias_16bit_probs_kernels_backward));
  names.push_back(
      perf::scalarParameter("moe_glu_clamp_forward_accesses", R::kNonNegative, &P::moe_glu_clamp_forward_accesses));
  names.push_back(
      perf::scalarParameter("moe_glu_clamp_backward_accesses", R::kNonNegative, &P::moe_glu_clamp_backward_accesses));
  names.push_back(perf::scalarParameter("moe_glu_clamp_backward_mask_bytes", R::kNonNegative,
                                        &P::moe_glu_clamp_backward_mask_bytes));
  names.push_back(
      perf::scalarParameter("moe_glu_clamp_kernels_forward", R::kNonNegative, &P::moe_glu_clamp_kernels_forward));
  names.push_back(
      perf::scalarParameter("moe_glu_clamp_kernels_backward", R::kNonNegative, &P::moe_glu_clamp_kernels_backward));
  names.push_back(perf::scalarParameter("moe_glu_clamp_forward_strided_accesses", R::kNonNegative,
                                        &P::moe_glu_clamp_forward_strided_accesses));
  names.push_back(perf::scalarParameter("moe_glu_clamp_backward_strided_accesses", R::kNonNegative,
                                        &P::moe_glu_clamp_backward_strided_accesses));
  names.push_back(perf::scalarParameter("eager_strided_access_cost", R::kPositive, &P::eager_strided_access_cost));
  names.push_back(
      perf::scalarParameter("unfused_rope_forward_accesses", R::kNonNegative, &P::unfused_rope_forward_accesses));
  names.push_back(perf::scalarParameter("unfused_rope_forward_strided_accesses", R::kNonNegative,
                                        &P::unfused_rope_forward_strided_accesses));
  names.push_back(
      perf::scalarParameter("unfused_rope_backward_accesses", R::kNonNegative, &P::unfused_rope_backward_accesses));
  names.push_back(perf::scalarParameter("unfused_rope_backward_strided_accesses", R::kNonNegative,
                                        &P::unfused_rope_backward_strided_accesses));
  names.push_back(
      perf::scalarParameter("unfused_rope_kernels_forward", R::kNonNegative, &P::unfused_rope_kernels_forward));
  names.push_back(
      perf::scalarParameter("unfused_rope_kernels_backward", R::kNonNegative, &P::unfused_rope_kernels_backward));
  names.push_back(perf::scalarParameter("moe_weighted_activation_backward_extra_accesses", R::kNonNegative,
                                        &P::moe_weighted_activation_backward_extra_accesses));
  names.push_back(perf::scalarParameter("moe_weighted_activation_backward_extra_kernels", R::kNonNegative,
                                        &P::moe_weighted_activation_backward_extra_kernels));
  names.push_back(
      {"tp_overlap_compute_streams", R::kPositiveInteger, false,
       [](const P& p, std::string_view) { return static_cast<double>(p.tp_overlap_compute_streams); },
       [](P& p, std::string_view, double value) { p.tp_overlap_compute_streams = static_cast<int64_t>(value); }});
  names.push_back(
      perf::scalarParameter("fp8_quantize_bytes_per_element", R::kNonNegative, &P::fp8_quantize_bytes_per_element));
  names.push_back(perf::scalarParameter("fp8_current_scaling_amax_bytes_per_element", R::kNonNegative,
                                        &P::fp8_current_scaling_amax_bytes_per_element));
  names.push_back(perf::scalarParameter("fp8_current_scaling_kernels_per_quantize", R::kPositive,
                                        &P::fp8_current_scaling_kernels_per_quantize));
  names.push_back(perf::scalarParameter("fp8_quantize_per_expert", R::kShare, &P::fp8_quantize_per_expert));
  names.push_back(perf::scalarParameter("dropout_mask_bytes", R::kPositive, &P::dropout_mask_bytes));
  names.push_back(perf::scalarParameter("token_id_bytes", R::kPositive, &P::token_id_bytes));
  names.push_back(perf::scalarParameter("loss_element_bytes", R::kPositive, &P::loss_element_bytes));
  return names;
}

std::vector<MemoryConstantName> buildMemoryNames() {
  using P = MemoryOptions;
  using R = perf::ParameterRange;
  std::vector<MemoryConstantName> names;
  names.push_back(perf::scalarParameter("fp8_weight_copy_bytes", R::kNonNegative, &P::fp8_weight_copy_bytes));
  names.push_back(
      perf::scalarParameter("allocator_overhead_fraction", R::kNonNegative, &P::allocator_overhead_fraction));
  names.push_back(perf::scalarParameter("runtime_reserved_bytes", R::kNonNegative, &P::runtime_reserved_bytes));
  names.push_back(
      perf::scalarParameter("nccl_bytes_per_communicator", R::kNonNegative, &P::nccl_bytes_per_communicator));
  names.push_back(perf::scalarParameter("grad_buckets_in_flight", R::kNonNegative, &P::grad_buckets_in_flight));
  names.push_back(perf::scalarParameter("zero3_gathered_layers", R::kNonNegative, &P::zero3_gathered_layers));
  names.push_back(
      perf::scalarParameter("unfused_loss_fp32_copies_at_peak", R::kNonNegative, &P::unfused_loss_fp32_copies_at_peak));
  names.push_back(perf::scalarParameter("unfused_loss_backward_fp32_copies_at_peak", R::kNonNegative,
                                        &P::unfused_loss_backward_fp32_copies_at_peak));
  names.push_back(perf::scalarParameter("unfused_loss_tp_fp32_copies_at_peak", R::kNonNegative,
                                        &P::unfused_loss_tp_fp32_copies_at_peak));
  names.push_back(perf::scalarParameter("unfused_loss_tp_backward_fp32_copies_at_peak", R::kNonNegative,
                                        &P::unfused_loss_tp_backward_fp32_copies_at_peak));
  return names;
}

template <class Name, class Options>
void applyValues(std::span<const perf::ParameterValue> values, std::span<const Name> names, Options& options) {
  for (const perf::ParameterValue& value : values) {
    const auto found =
        std::find_if(names.begin(), names.end(), [&](const Name& name) { return name.name == value.name; });
    if (found == names.end()) throw std::logic_error("not a model constant: " + value.name);
    found->set(options, "", value.value);
  }
}

template <class Name, class Options>
std::vector<perf::ParameterValue> valuesOf(const Options& options, std::span<const Name> names) {
  std::vector<perf::ParameterValue> values;
  for (const Name& name : names) values.push_back({name.name, name.get(options, ""), ""});
  return values;
}

}  // namespace

std::span<const WorkloadConstantName> workloadConstantNames() {
  static const std::vector<WorkloadConstantName> names = buildWorkloadNames();
  return names;
}

std::span<const MemoryConstantName> memoryConstantNames() {
  static const std::vector<MemoryConstantName> names = buildMemoryNames();
  return names;
}

std::vector<perf::ParameterValue> readWorkloadSection(const ConfigNode& section) {
  return perf::readNamedValues(section, workloadConstantNames());
}

std::vector<perf::ParameterValue> readMemorySection(const ConfigNode& section) {
  return perf::readNamedValues(section, memoryConstantNames());
}

void applyWorkloadValues(std::span<const perf::ParameterValue> values, FlopsOptions& options) {
  applyValues(values, workloadConstantNames(), options);
}

void applyMemoryValues(std::span<const perf::ParameterValue> values, MemoryOptions& options) {
  applyValues(values, memoryConstantNames(), options);
}

std::vector<perf::ParameterValue> workloadValues(const FlopsOptions& options) {
  return valuesOf(options, workloadConstantNames());
}

std::vector<perf::ParameterValue> memoryValues(const MemoryOptions& options) {
  return valuesOf(options, memoryConstantNames());
}

std::string constantSectionYaml(std::span<const perf::ParameterValue> values) {
  std::string out;
  for (const perf::ParameterValue& value : values)
    out += fmt::format("  {}: {}\n", value.name, perf::yamlNumber(value.value));
  return out;
}

}  // namespace trainsim::parallelism
