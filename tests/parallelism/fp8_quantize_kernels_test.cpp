// The kernels of Transformer Engine's FP8 quantization (configs/defaults/workload.yaml,
// fp8_current_scaling_kernels_per_quantize): current scaling runs amax, scale and cast per
// tensor, per local expert in a grouped GEMM, launched from C++ (Op::native_kernels_*);
// delayed scaling one kernel. Native kernels cost the host a bare launch each and the GPU
// their gaps; extra kernels cost the GPU their gaps too.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "parallelism/chunk_workload.h"
#include "parallelism/compute_timer.h"
#include "parallelism/experiment.h"
#include "parallelism/pass_work.h"
#include "parallelism/transformer_workload.h"
#include "tests/parallelism/test_support.h"
#include "tests/shipped_defaults.h"
#include "tests/shipped_simulation_options.h"
#include "topology/gpu_catalog.h"

namespace trainsim::parallelism {
namespace {

using testing::opNamed;

// Qwen3-30B-A3B on one node at ep 4: 32 local experts.
Experiment qwen3(const std::vector<std::string>& sets) {
  const std::string yaml = R"(
name: fp8-quantize-kernels
model: qwen3-30b-a3b
cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}
training: {seq_len: 4096, global_batch_size: 8, micro_batch_size: 1, precision: fp8, fp8_recipe: current}
parallelism: {tp: 2, pp: 1, ep: 4, zero: 1, recompute: none}
)";
  return testing::shippedExperiment(yaml, sets);
}

// The first MoE layer's ops as a simulation builds them: the shipped constants, then the
// experiment's stack.
Workload firstLayer(const Experiment& experiment) {
  SimulationOptions simulation = shippedSimulationOptions();
  applySoftwareStack(experiment, simulation);
  const FlopsOptions options = kernelsFor(experiment, simulation.iteration.flops);
  for (const ChunkPart& part : chunkWorkloads(experiment, 0, 0, options)) {
    if (part.workload.find("moe_router") != nullptr) return part.workload;
  }
  throw std::runtime_error("no MoE layer");
}

constexpr double kLocalExperts = 32.0;

TEST(Fp8QuantizeKernels, CurrentScalingRunsThreeKernelsPerTensorAndPerLocalExpert) {
  const Workload layer = firstLayer(qwen3({}));
  const Op& dense = opNamed(layer, "qkv_projection_fp8_quantize");
  EXPECT_DOUBLE_EQ(dense.native_kernels_forward, 2.0);
  EXPECT_DOUBLE_EQ(dense.native_kernels_backward, 2.0);
  EXPECT_DOUBLE_EQ(kernelsOf(dense, PassKind::kForward), 1.0);  // the one the dispatch counts
  const Op& experts = opNamed(layer, "moe_expert_gate_up_fp8_quantize");
  EXPECT_DOUBLE_EQ(experts.native_kernels_forward, 3.0 * kLocalExperts - 1.0);
  EXPECT_DOUBLE_EQ(experts.native_kernels_backward, 3.0 * kLocalExperts - 1.0);
  // Block scaling (MXFP8, blockwise): one kernel per quantization, per local expert; no amax
  // read (4 bytes an element: read 2, write both orientations).
  // On H100 (a transposed copy either way) current scaling moves 6 bytes an element, on B200
  // (either layout) 5.
  const std::vector<std::pair<std::vector<std::string>, double>> block_recipes = {
      {{"training.fp8_recipe=blockwise"}, 6.0}, {{"training.fp8_recipe=mxfp8", "cluster.gpu=b200"}, 5.0}};
  for (const auto& [sets, current_bytes] : block_recipes) {
    const Workload block = firstLayer(qwen3(sets));
    std::vector<std::string> current_sets = sets;
    current_sets.front() = "training.fp8_recipe=current";
    const Workload current = firstLayer(qwen3(current_sets));
    EXPECT_DOUBLE_EQ(opNamed(block, "qkv_projection_fp8_quantize").native_kernels_forward, 0.0) << sets.front();
    EXPECT_DOUBLE_EQ(opNamed(block, "moe_expert_gate_up_fp8_quantize").native_kernels_forward, kLocalExperts - 1.0)
        << sets.front();
    EXPECT_DOUBLE_EQ(opNamed(block, "qkv_projection_fp8_quantize").forward.bytes,
                     opNamed(current, "qkv_projection_fp8_quantize").forward.bytes * 4.0 / current_bytes)
        << sets.front();
  }
  // MXFP8 needs Blackwell.
  EXPECT_THROW(qwen3({"training.fp8_recipe=mxfp8"}), std::runtime_error);
  // Delayed scaling: one kernel, the experts' slices in one multi-tensor kernel.
  const Workload delayed = firstLayer(qwen3({"training.fp8_recipe=delayed"}));
  EXPECT_DOUBLE_EQ(opNamed(delayed, "qkv_projection_fp8_quantize").native_kernels_forward, 0.0);
  EXPECT_DOUBLE_EQ(opNamed(delayed, "moe_expert_gate_up_fp8_quantize").native_kernels_backward, 0.0);
  // torchao under torch.compile (the torchtitan preset): one fused kernel, the grouped
  // operand quantized as one tensor.
  const Workload torchao = firstLayer(qwen3({"training.stack=torchtitan"}));
  EXPECT_DOUBLE_EQ(opNamed(torchao, "qkv_projection_fp8_quantize").native_kernels_forward, 0.0);
  EXPECT_DOUBLE_EQ(opNamed(torchao, "moe_expert_gate_fp8_quantize").native_kernels_forward, 0.0);  // gate, up apart
}

TEST(Fp8QuantizeKernels, NativeKernelsCostTheHostABareLaunchAndTheGpuTheirGaps) {
  Op op;
  op.kind = OpKind::kElementwise;
  op.forward.bytes = 1e6;
  op.native_kernels_forward = 5.0;
  op.library_calls_forward = 2.0;
  const HostCosts host{.per_kernel_s = 30e-6, .per_library_call_s = 10e-6, .per_native_kernel_s = 3e-6};
  EXPECT_DOUBLE_EQ(hostExtraSeconds(op, PassKind::kForward, host), 2.0 * 10e-6 + 5.0 * 3e-6);
  EXPECT_DOUBLE_EQ(hostExtraSeconds(op, PassKind::kBackward, host), 0.0);
  // On the GPU each kernel beyond the op's one takes the gap between kernels.
  static const auto catalog = topology::GpuCatalog::load(std::string(TRAINSIM_CONFIG_DIR_FOR_TESTS) + "/gpus.yaml");
  const perf::ComputeModel model(*catalog->find("h100-sxm"), topology::Precision::kBf16, shippedCompute());
  const ComputeTimer timer(model);
  Op plain = op;
  plain.native_kernels_forward = 0.0;
  EXPECT_NEAR(timer.seconds(op, PassKind::kForward) - timer.seconds(plain, PassKind::kForward),
              model.kernelGapsTime(5.0), 1e-15);
  Op eager = plain;
  eager.extra_kernels_forward = 5.0;
  EXPECT_NEAR(timer.seconds(eager, PassKind::kForward), timer.seconds(op, PassKind::kForward), 1e-15);
  EXPECT_GT(model.kernelGapsTime(1.0), 0.0);
}

// The native kernels cost the host its launches under eager dispatch (this small step is
// host-bound) and nothing under CUDA graphs, where the GPU sets the pace and each kernel costs
// its gap.
TEST(Fp8QuantizeKernels, CurrentScalingsKernelsMakeTheStepLongerUnderEagerDispatch) {
  const double three = shippedIterationSeconds(qwen3({"training.stack=nemo"}));
  const double free_host = shippedIterationSeconds(
      qwen3({"training.stack=nemo", "training.stack_overrides.compute.dispatch_native_kernel_us=0"}));
  EXPECT_GT(three, free_host);
  const double graphs = shippedIterationSeconds(qwen3({"training.stack=nemo", "training.dispatch=cuda_graphs"}));
  const double graphs_free_host =
      shippedIterationSeconds(qwen3({"training.stack=nemo", "training.dispatch=cuda_graphs",
                                     "training.stack_overrides.compute.dispatch_native_kernel_us=0"}));
  EXPECT_DOUBLE_EQ(graphs, graphs_free_host);
  const double graphs_one =
      shippedIterationSeconds(qwen3({"training.stack=nemo", "training.dispatch=cuda_graphs",
                                     "training.stack_overrides.workload.fp8_current_scaling_kernels_per_quantize=1"}));
  EXPECT_GT(graphs, graphs_one);
  EXPECT_THROW(
      qwen3({"training.stack=nemo", "training.stack_overrides.workload.fp8_current_scaling_kernels_per_quantize=0"}),
      std::runtime_error);
}

}  // namespace
}  // namespace trainsim::parallelism
