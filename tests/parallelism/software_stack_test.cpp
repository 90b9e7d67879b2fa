#include "parallelism/software_stack.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "parallelism/experiment.h"
#include "parallelism/experiment_loader.h"
#include "parallelism/iteration_simulation.h"
#include "parallelism/memory_model.h"
#include "tests/shipped_simulation_options.h"

namespace trainsim::parallelism {
namespace {

const ConfigPaths& paths() {
  static const ConfigPaths config_paths{TRAINSIM_CONFIG_DIR_FOR_TESTS};
  return config_paths;
}

// A small Llama on one H100: its kernels are short, so the host's launches can bind.
std::string smallLlama(const std::string& training_extra) {
  return R"(
name: small-llama
model: {name: small, architecture: llama, layers: 4, hidden_size: 512, ffn_hidden_size: 1408,
        attention_heads: 8, kv_heads: 4, vocab_size: 32000}
cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 1}
training: {seq_len: 512, global_batch_size: 1, micro_batch_size: 1)" +
         training_extra + R"(}
parallelism: {gpus: 1}
)";
}

Expected<Experiment> load(const std::string& yaml) {
  return loadExperimentNode(parseConfigText(yaml, "test.yaml"), paths());
}

Experiment loaded(const std::string& yaml) {
  auto experiment = load(yaml);
  if (!experiment.ok()) throw std::runtime_error(experiment.error().toString());
  return std::move(experiment).value();
}

// The options an experiment runs with, as the commands prepare them: the shipped defaults,
// then its stack.
SimulationOptions optionsFor(const Experiment& experiment) {
  SimulationOptions options = shippedSimulationOptions();
  applySoftwareStack(experiment, options);
  return options;
}

IterationResult simulate(const Experiment& experiment) {
  auto result = simulateIteration(experiment, optionsFor(experiment));
  if (!result.ok()) throw std::runtime_error(result.error().toString());
  return std::move(result).value();
}

TEST(SoftwareStackTest, EveryShippedPresetLoadsWithATitleAndAVersion) {
  const auto names = stackPresetNames(paths());
  for (const char* required : {"megatron-core", "nemo", "mlperf-nvidia", "megatron-deepspeed", "deepspeed",
                               "torchtitan", "pytorch-fsdp", "maxtext"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), required), names.end()) << required;
  }
  for (const auto& name : names) {
    const Experiment experiment = loaded(smallLlama(", stack: " + name));
    ASSERT_TRUE(experiment.stack) << name;
    EXPECT_EQ(experiment.training.stack, name);
    EXPECT_FALSE(experiment.stack->title.empty()) << name;
    EXPECT_FALSE(experiment.stack->version.empty()) << name;
    // Every preset says how its host dispatches kernels.
    EXPECT_TRUE(experiment.training.dispatch.has_value()) << name;
  }
}

TEST(SoftwareStackTest, WithoutAStackTheHostIsNotModelledAndTheDefaultsHold) {
  const Experiment experiment = loaded(smallLlama(""));
  EXPECT_FALSE(experiment.stack);
  EXPECT_TRUE(experiment.training.stack.empty());
  EXPECT_FALSE(experiment.training.dispatch);
  EXPECT_TRUE(experiment.training.fused_gate_up);
  EXPECT_FALSE(experiment.training.fused_cross_entropy);
  EXPECT_EQ(simulate(experiment).breakdown.host_dispatch_exposed, 0.0);
}

TEST(SoftwareStackTest, AStackGivesTheTrainingKeysTheExperimentLeavesOut) {
  // torchtitan: two SwiGLU GEMMs, unfused cross-entropy, eager dispatch.
  const Experiment titan = loaded(smallLlama(", stack: torchtitan"));
  EXPECT_FALSE(titan.training.fused_gate_up);
  EXPECT_FALSE(titan.training.fused_cross_entropy);
  EXPECT_EQ(titan.training.dispatch, DispatchMode::kEager);
  // nemo: fused cross-entropy.
  EXPECT_TRUE(loaded(smallLlama(", stack: nemo")).training.fused_cross_entropy);
  // megatron-deepspeed: the unfused attention path.
  EXPECT_FALSE(loaded(smallLlama(", stack: megatron-deepspeed")).training.flash_attention);
  // What the experiment sets wins over the stack.
  const Experiment compiled =
      loaded(smallLlama(", stack: torchtitan, dispatch: compiled, fused_gate_up: true, fused_cross_entropy: true"));
  EXPECT_EQ(compiled.training.dispatch, DispatchMode::kCompiled);
  EXPECT_TRUE(compiled.training.fused_gate_up);
  EXPECT_TRUE(compiled.training.fused_cross_entropy);
}

// torchtitan compiles its loss with the model (from 2025-04): compiled, its loss runs fused
// (no fp32 copy of the logits kept, one pass each way); eager, or with compile_loss: false as
// the 2024 releases ran, it stays unfused. Without a compiled dispatch the key changes nothing.
TEST(SoftwareStackTest, ACompiledTorchtitanRunCompilesItsLoss) {
  const auto fusedLoss = [](const Experiment& experiment) {
    return kernelsFor(experiment, FlopsOptions{}).fused_cross_entropy;
  };
  const Experiment eager = loaded(smallLlama(", stack: torchtitan"));
  EXPECT_TRUE(eager.training.compile_loss);
  EXPECT_FALSE(fusedLoss(eager));
  const Experiment compiled = loaded(smallLlama(", stack: torchtitan, dispatch: compiled"));
  EXPECT_TRUE(fusedLoss(compiled));
  EXPECT_FALSE(fusedLoss(loaded(smallLlama(", stack: torchtitan, dispatch: compiled, compile_loss: false"))));
  EXPECT_LT(estimateMemory(compiled).peak().activations,
            estimateMemory(loaded(smallLlama(", stack: torchtitan, dispatch: compiled, compile_loss: false")))
                .peak()
                .activations);
  // Other stacks leave it off; without a stack it is off.
  EXPECT_FALSE(loaded(smallLlama(", stack: pytorch-fsdp, dispatch: compiled")).training.compile_loss);
  EXPECT_FALSE(fusedLoss(loaded(smallLlama(", dispatch: compiled"))));
  EXPECT_TRUE(fusedLoss(loaded(smallLlama(", dispatch: compiled, compile_loss: true"))));
  const auto bad = load(smallLlama(", compile_loss: sometimes"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().toString().find("compile_loss"), std::string::npos) << bad.error().toString();
  EXPECT_EQ(bad.error().code, ExitCode::kInvalidInput);
}

TEST(SoftwareStackTest, AnUnknownStackIsAnErrorListingThePresets) {
  const auto experiment = load(smallLlama(", stack: pytorch-lightning"));
  ASSERT_FALSE(experiment.ok());
  const std::string message = experiment.error().toString();
  EXPECT_NE(message.find("test.yaml:"), std::string::npos) << message;
  EXPECT_NE(message.find("training.stack"), std::string::npos) << message;
  EXPECT_NE(message.find("torchtitan"), std::string::npos) << message;
  EXPECT_EQ(experiment.error().code, ExitCode::kInvalidInput);
}

TEST(SoftwareStackTest, OverridesAreCheckedKeyByKey) {
  const auto no_stack = load(smallLlama(", stack_overrides: {compute: {dispatch_eagre_us: 3.0}}"));
  ASSERT_FALSE(no_stack.ok());
  EXPECT_NE(no_stack.error().toString().find("dispatch_eagre_us"), std::string::npos) << no_stack.error().toString();
  const auto unknown_key =
      load(smallLlama(", stack: torchtitan, stack_overrides: {compute: {dispatch_eagre_us: 3.0}}"));
  ASSERT_FALSE(unknown_key.ok());
  EXPECT_NE(unknown_key.error().toString().find("dispatch_eagre_us"), std::string::npos)
      << unknown_key.error().toString();
  const auto negative = load(smallLlama(", stack: torchtitan, stack_overrides: {compute: {dispatch_eager_us: -1}}"));
  ASSERT_FALSE(negative.ok());
}

TEST(SoftwareStackTest, OverridesReplaceTheStacksParametersAndACalibrationWinsOverBoth) {
  const Experiment experiment =
      loaded(smallLlama(", stack: torchtitan, stack_overrides: {compute: {dispatch_eager_us: 3.5}, communication: "
                        "{infiniband_efficiency: 0.5}}"));
  SimulationOptions options = optionsFor(experiment);
  EXPECT_EQ(options.stack, "torchtitan");
  EXPECT_EQ(options.compute.dispatch_eager_us, 3.5);
  EXPECT_EQ(options.communication.infiniband_efficiency, 0.5);
  // The maxtext preset replaces a compute default itself.
  EXPECT_EQ(optionsFor(loaded(smallLlama(", stack: maxtext"))).compute.dispatch_compiled_us, 0.0);
  // A stack is applied once.
  EXPECT_THROW(applySoftwareStack(experiment, options), std::logic_error);
}

// A stack's in-step fraction on a GPU type its table does not list: the GPU's own fraction
// times the stack's factor. The GPU types it lists keep their row; the factor is applied once.
TEST(SoftwareStackTest, AStacksFactorScalesTheFractionsOfTheGpusItDoesNotList) {
  const SimulationOptions shipped = shippedSimulationOptions();
  const Experiment experiment = loaded(smallLlama(
      ", stack: torchtitan, stack_overrides: {compute: {training_rate_stack_factor: 0.8, training_rate_fraction: "
      "[{gpu: a100-sxm-80gb, fraction: 0.9}]}}"));
  const SimulationOptions options = optionsFor(experiment);
  EXPECT_DOUBLE_EQ(options.compute.trainingRateFraction("a100-sxm-80gb"), 0.9);
  // The shipped torchtitan preset lists the 500 W H100 96GB: its row stays.
  const SimulationOptions preset = optionsFor(loaded(smallLlama(", stack: torchtitan")));
  EXPECT_DOUBLE_EQ(options.compute.trainingRateFraction("h100-sxm-96gb"),
                   preset.compute.trainingRateFraction("h100-sxm-96gb"));
  EXPECT_DOUBLE_EQ(options.compute.trainingRateFraction("h100-sxm"),
                   0.8 * shipped.compute.trainingRateFraction("h100-sxm"));
  EXPECT_DOUBLE_EQ(options.compute.trainingRateFraction("mi300x"),
                   0.8 * shipped.compute.trainingRateFraction("mi300x"));
  EXPECT_DOUBLE_EQ(options.compute.training_rate_stack_factor, 1.0);
  // A default the stack sets itself is its own: not scaled.
  const SimulationOptions own_default =
      optionsFor(loaded(smallLlama(", stack: torchtitan, stack_overrides: {compute: {training_rate_stack_factor: 0.8, "
                                   "training_rate_fraction_default: 0.7}}")));
  EXPECT_DOUBLE_EQ(own_default.compute.trainingRateFraction("mi300x"), 0.7);
  // The shipped preset's own factor puts the H100 SXM below its default (torchtitan reaches
  // less of the kernels' rates than the recipes the default is fitted on).
  EXPECT_LT(preset.compute.trainingRateFraction("h100-sxm"), shipped.compute.trainingRateFraction("h100-sxm"));
  // Without a stack nothing is scaled, and a factor given without one is refused where it stands.
  EXPECT_DOUBLE_EQ(optionsFor(loaded(smallLlama(""))).compute.trainingRateFraction("h100-sxm"),
                   shipped.compute.trainingRateFraction("h100-sxm"));
  const auto stackless = load(smallLlama(", stack_overrides: {compute: {training_rate_stack_factor: 0.8}}"));
  ASSERT_FALSE(stackless.ok());
  EXPECT_NE(stackless.error().toString().find(
                "test.yaml:6:125: training.stack_overrides.compute.training_rate_stack_factor:"),
            std::string::npos)
      << stackless.error().toString();
  EXPECT_NE(stackless.error().toString().find("names no training.stack"), std::string::npos)
      << stackless.error().toString();
}

// Without a stack the overrides replace the shipped defaults: the stack stays unset, and a
// run's own attention rates (say, of an older cuDNN) slow it.
TEST(SoftwareStackTest, OverridesWithoutAStackReplaceTheDefaults) {
  const Experiment plain = loaded(smallLlama(""));
  const Experiment overridden = loaded(smallLlama(
      ", stack_overrides: {compute: {attention_rates: [{gpu: h100-sxm, precision: bf16, forward_tflops: 100, "
      "backward_tflops: 80, measured_at: {sequences: 32, queries: 2048, keys: 2048}}]}}"));
  EXPECT_FALSE(overridden.stack.has_value());
  ASSERT_TRUE(overridden.parameter_overrides.has_value());
  const SimulationOptions options = optionsFor(overridden);
  EXPECT_EQ(options.stack, "");
  ASSERT_FALSE(options.compute.attention_rates.empty());
  EXPECT_EQ(options.compute.attention_rates.front().forward_tflops, 100.0);
  EXPECT_GT(simulate(overridden).iteration_time_s, simulate(plain).iteration_time_s);
  // Applied once, and only to the experiment they were prepared for.
  SimulationOptions twice = options;
  EXPECT_THROW(applySoftwareStack(overridden, twice), std::logic_error);
  EXPECT_THROW((void)simulateIteration(plain, options), std::logic_error);
  EXPECT_THROW((void)simulateIteration(overridden, shippedSimulationOptions()), std::logic_error);
}

// Rows of one GPU and precision given more than once are rates over sequence length: each
// needs its measured problem, at a sequence length of its own.
TEST(SoftwareStackTest, AttentionRatesOverSequenceLengthNeedTheirProblems) {
  const std::string first =
      "{gpu: h100-sxm, precision: bf16, forward_tflops: 100, backward_tflops: 80, "
      "measured_at: {sequences: 32, queries: 2048, keys: 2048}}";
  const auto rows = [](const std::string& list) {
    return ", stack_overrides: {compute: {attention_rates: [" + list + "]}}";
  };
  const auto shapeless =
      load(smallLlama(rows(first + ", {gpu: h100-sxm, precision: bf16, forward_tflops: 90, backward_tflops: 70}")));
  ASSERT_FALSE(shapeless.ok());
  EXPECT_NE(shapeless.error().toString().find("test.yaml:"), std::string::npos) << shapeless.error().toString();
  EXPECT_NE(shapeless.error().toString().find("measured_at on every row"), std::string::npos)
      << shapeless.error().toString();
  const auto same_length = load(smallLlama(rows(first + ", " + first)));
  ASSERT_FALSE(same_length.ok());
  EXPECT_NE(same_length.error().toString().find("measured_at.queries of its own"), std::string::npos)
      << same_length.error().toString();
  const Experiment two =
      loaded(smallLlama(rows(first + ", {gpu: h100-sxm, precision: bf16, forward_tflops: 200, backward_tflops: 160, "
                                     "measured_at: {sequences: 32, queries: 8192, keys: 8192}}")));
  const SimulationOptions options = optionsFor(two);
  // Both replace the shipped H100 row, in their order.
  int h100_rows = 0;
  for (const auto& rate : options.compute.attention_rates) h100_rows += rate.gpu_key == "h100-sxm" ? 1 : 0;
  EXPECT_EQ(h100_rows, 2);
  EXPECT_EQ(options.compute.attention_rates[0].forward_tflops, 100.0);
  EXPECT_EQ(options.compute.attention_rates[1].forward_tflops, 200.0);
}

// The workload and memory models' constants (configs/defaults/workload.yaml, memory.yaml)
// are overridden the same way, and change the prediction.
TEST(SoftwareStackTest, OverridesSetTheWorkloadAndMemoryConstants) {
  // With attention dropout, which the fused kernel's dropout throughput slows.
  const auto withDropout = [](std::string yaml) {
    const std::string vocabulary = "vocab_size: 32000}";
    return yaml.replace(yaml.find(vocabulary), vocabulary.size(), "vocab_size: 32000, attention_dropout: 0.1}");
  };
  // A free host (dispatch 0 µs), so that the GPU's time shows rather than the launches'.
  const std::string overrides =
      ", stack: torchtitan, stack_overrides: {workload: {flash_dropout_forward_throughput: 0.2, "
      "flash_dropout_backward_throughput: 0.2}, memory: {allocator_overhead_fraction: 0.15}, "
      "compute: {dispatch_eager_us: 0}}";
  const Experiment overridden = loaded(withDropout(smallLlama(overrides)));
  const SimulationOptions options = optionsFor(overridden);
  EXPECT_EQ(options.iteration.flops.flash_dropout_forward_throughput, 0.2);
  EXPECT_EQ(options.memory.allocator_overhead_fraction, 0.15);
  EXPECT_EQ(memoryOptions(options).allocator_overhead_fraction, 0.15);
  EXPECT_EQ(options.memory.runtime_reserved_bytes, shippedSimulationOptions().memory.runtime_reserved_bytes);

  const Experiment plain =
      loaded(withDropout(smallLlama(", stack: torchtitan, stack_overrides: {compute: {dispatch_eager_us: 0}}")));
  const IterationResult base = simulate(plain);
  const IterationResult changed = simulate(overridden);
  EXPECT_GT(changed.iteration_time_s, base.iteration_time_s);
  EXPECT_NEAR(changed.memory.peak().allocator_overhead, 3.0 * base.memory.peak().allocator_overhead,
              1e-9 * base.memory.peak().allocator_overhead);

  const auto unknown =
      load(smallLlama(", stack: torchtitan, stack_overrides: {memory: {alocator_overhead_fraction: 0.1}}"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().toString().find("did you mean 'allocator_overhead_fraction'?"), std::string::npos)
      << unknown.error().toString();
  EXPECT_NE(unknown.error().where.find("test.yaml:"), std::string::npos) << unknown.error().where;
}

TEST(SoftwareStackTest, OptionsPreparedForAnotherStackAreRefused) {
  const Experiment experiment = loaded(smallLlama(", stack: torchtitan"));
  EXPECT_THROW((void)simulateIteration(experiment, shippedSimulationOptions()), std::logic_error);
}

TEST(SoftwareStackTest, SeparateGateAndUpGemmsCostMoreThanOneFusedGemm) {
  const double fused = simulate(loaded(smallLlama(""))).iteration_time_s;
  const double separate = simulate(loaded(smallLlama(", fused_gate_up: false"))).iteration_time_s;
  EXPECT_GT(separate, fused);
}

// The host launches kernels in order at its per-kernel cost: with short kernels the step
// becomes launch-bound, and a costlier dispatch makes it longer by about the added launch time.
TEST(SoftwareStackTest, ShortKernelsBecomeLaunchBound) {
  const std::string slow_host = ", dispatch: eager, stack: torchtitan, stack_overrides: {compute: {dispatch_eager_us: ";
  const IterationResult fast = simulate(loaded(smallLlama(slow_host + "1.0}}")));
  const IterationResult slow = simulate(loaded(smallLlama(slow_host + "200.0}}")));
  EXPECT_GT(slow.breakdown.host_dispatch_exposed, 0.0);
  EXPECT_GT(slow.iteration_time_s, 2.0 * fast.iteration_time_s);
  // Launch-bound: the passes last their kernels' launches, so the step grows with the cost.
  const IterationResult slower = simulate(loaded(smallLlama(slow_host + "400.0}}")));
  EXPECT_NEAR(slower.iteration_time_s / slow.iteration_time_s, 2.0, 0.15);
}

// A dropless MoE layer's forward makes the host wait for the GPU before the dispatch
// (workload moe_dispatch_host_sync_share): with the host modelled the GPU then waits for the
// launches after the sync, which a sync-free dispatcher's host would have issued ahead.
TEST(SoftwareStackTest, ADroplessMoeForwardWaitsForItsHost) {
  // Long sequences make the attention before the sync outlast its launches; the experts after
  // it are quick to run and slow to launch.
  std::string moe = smallLlama(", dispatch: eager, stack: megatron-core");
  moe.replace(moe.find("seq_len: 512"), 12, "seq_len: 16384");
  const std::string vocabulary = "vocab_size: 32000}";
  moe.replace(moe.find(vocabulary), vocabulary.size(),
              "vocab_size: 32000, moe: {experts: 8, top_k: 2, ffn_hidden_size: 512}}");
  const IterationResult syncing = simulate(loaded(moe));
  const std::string sync_free = ", stack_overrides: {workload: {moe_dispatch_host_sync_share: 0}}";
  std::string sync_free_moe = moe;
  sync_free_moe.replace(sync_free_moe.find("stack: megatron-core"), 20, "stack: megatron-core" + sync_free);
  const IterationResult ahead = simulate(loaded(sync_free_moe));
  EXPECT_GT(syncing.breakdown.host_dispatch_exposed, ahead.breakdown.host_dispatch_exposed);
  EXPECT_GT(syncing.iteration_time_s, ahead.iteration_time_s);
  // The wait is host time in the breakdown, not compute: the parts still add up to the step,
  // also where the host binds throughout (a handful of tokens).
  const auto expectBreakdownAddsUp = [](const IterationResult& result) {
    const TimeBreakdown& b = result.breakdown;
    EXPECT_NEAR(b.compute + b.tp_comm_exposed + b.dp_comm_exposed + b.pp_comm_exposed + b.pipeline_bubble +
                    b.host_dispatch_exposed,
                result.iteration_time_s, 1e-9 * result.iteration_time_s);
  };
  expectBreakdownAddsUp(syncing);
  expectBreakdownAddsUp(ahead);
  std::string short_sequences = moe;
  short_sequences.replace(short_sequences.find("seq_len: 16384"), 14, "seq_len: 8");
  expectBreakdownAddsUp(simulate(loaded(short_sequences)));
}

// Mixtral 8x7B on short sequences, eager: the host binds. With the parameter gather in the
// background or not, one pipeline stage or two, the sync never makes a step faster (the host
// stays busy launching what the collectives after the sync cover, and cannot run ahead into
// the next pass), and the breakdown adds up to the step (the gather's exposure is measured to
// the compute's end, not to the host's).
TEST(SoftwareStackTest, AMoeHostSyncNeverShortensAStepAndItsBreakdownAddsUp) {
  for (const std::vector<std::string>& plan : std::vector<std::vector<std::string>>{
           {"parallelism.pp=1", "parallelism.dp=auto"},
           {"parallelism.pp=1", "parallelism.dp=auto", "parallelism.overlap_param_gather=false"},
           {"parallelism.pp=2", "parallelism.dp=auto"}}) {
    double seconds[2] = {0.0, 0.0};
    for (const int share : {0, 1}) {
      std::vector<Override> overrides{
          parseOverride("training.stack=megatron-core"), parseOverride("training.seq_len=128"),
          parseOverride("training.stack_overrides.workload.moe_dispatch_host_sync_share=" + std::to_string(share))};
      for (const std::string& set : plan) overrides.push_back(parseOverride(set));
      const auto experiment = loadExperiment("mixtral-8x7b-h100", paths(), overrides);
      ASSERT_TRUE(experiment.ok()) << experiment.error().toString();
      const IterationResult result = simulate(experiment.value());
      const TimeBreakdown& b = result.breakdown;
      EXPECT_NEAR(b.compute + b.tp_comm_exposed + b.dp_comm_exposed + b.pp_comm_exposed + b.pipeline_bubble +
                      b.host_dispatch_exposed,
                  result.iteration_time_s, 1e-9 * result.iteration_time_s)
          << plan.front() << " share " << share;
      seconds[share] = result.iteration_time_s;
    }
    EXPECT_GE(seconds[1], seconds[0]) << plan.back();
  }
}

TEST(SoftwareStackTest, CudaGraphsCostNoHostTimeAndOnlyTheGapBetweenKernels) {
  const IterationResult graphs = simulate(loaded(smallLlama(", dispatch: cuda_graphs, stack: mlperf-nvidia")));
  const IterationResult eager = simulate(loaded(smallLlama(", dispatch: eager, stack: mlperf-nvidia")));
  EXPECT_LT(graphs.iteration_time_s, eager.iteration_time_s);
  // Only the first launch of each pass is on the critical path under CUDA graphs (cost 0).
  EXPECT_LT(graphs.breakdown.host_dispatch_exposed, 1e-9);
}

}  // namespace
}  // namespace trainsim::parallelism
