#include "calibrate/harness/harness_options.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>

#include "calibrate/harness/collective_buffers.h"
#include "calibrate/harness/size_sweep.h"

namespace trainsim::harness {

namespace {

Error invalid(const std::string& where, const std::string& message) {
  return Error{ExitCode::kInvalidInput, where, "", message};
}

// Runs CLI11 on `arguments`; nullopt when parsing succeeded, else the help text or the error.
struct ParseOutcome {
  std::optional<std::string> help;
  std::optional<Error> error;
};
ParseOutcome runParser(CLI::App& app, const std::vector<std::string>& arguments) {
  std::vector<std::string> reversed(arguments.rbegin(), arguments.rend());  // CLI11 takes them reversed
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    return {app.help(), std::nullopt};
  } catch (const CLI::ParseError& error) {
    return {std::nullopt, invalid("", error.what())};
  }
  return {};
}

template <class T, class Parse>
Expected<std::vector<T>> parseList(const std::vector<std::string>& names, const std::string& option,
                                   const std::string& choices, Parse parse) {
  std::vector<T> values;
  for (const std::string& name : names) {
    const std::optional<T> value = parse(name);
    if (!value) return invalid(option, fmt::format("unknown value \"{}\"; expected {}", name, choices));
    if (std::find(values.begin(), values.end(), *value) == values.end()) values.push_back(*value);
  }
  return values;
}

std::optional<Error> checkRepetitions(int warmup, int iterations) {
  if (warmup < 0) return invalid("--warmup", fmt::format("expected 0 or more, found {}", warmup));
  if (iterations < 1) return invalid("--iters", fmt::format("expected at least 1, found {}", iterations));
  return std::nullopt;
}

}  // namespace

std::vector<std::string> argumentList(int argc, const char* const* argv) {
  std::vector<std::string> arguments;
  for (int i = 1; i < argc; ++i) arguments.emplace_back(argv[i]);
  return arguments;
}

Expected<CommandLine<NcclHarnessOptions>> parseNcclHarnessArguments(const std::vector<std::string>& arguments) {
  CommandLine<NcclHarnessOptions> result;
  NcclHarnessOptions& options = result.options;
  CLI::App app{
      "trainsim-calib-nccl: measure NCCL collectives over a size sweep and over the group layouts training uses, "
      "one GPU per MPI rank; rank 0 writes the results file (docs/harness.md)",
      "trainsim-calib-nccl"};
  std::string min_bytes = "8";
  std::string max_bytes = "1G";
  std::vector<std::string> ops = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"};
  std::vector<std::string> layouts = {"intra_node", "one_per_node", "tp_like", "dp_like", "world"};
  std::string dtype = "bf16";
  app.add_option("-b,--min-bytes", min_bytes, "Smallest size (nccl-tests -b; 8, 64K, 32M, 1G)")->capture_default_str();
  app.add_option("-e,--max-bytes", max_bytes, "Largest size (nccl-tests -e)")->capture_default_str();
  app.add_option("-f,--step-factor", options.step_factor, "Size multiplier (nccl-tests -f)")->capture_default_str();
  app.add_option("--ops", ops, "Collectives, comma-separated")->delimiter(',')->capture_default_str();
  app.add_option("--layouts", layouts, "Group layouts, comma-separated")->delimiter(',')->capture_default_str();
  app.add_option("-w,--warmup", options.warmup, "Untimed repetitions per size (nccl-tests -w)")->capture_default_str();
  app.add_option("-n,--iters", options.iterations, "Timed repetitions per size; the median is reported (nccl-tests -n)")
      ->capture_default_str();
  app.add_option("--dtype", dtype, "Element type: fp32, fp16 or bf16")->capture_default_str();
  app.add_option("--tp", options.tp, "tp_like group size (0 = GPUs per node)")->capture_default_str();
  app.add_option("-o,--out", options.out, "Results file (- = stdout)")->capture_default_str();
  const ParseOutcome outcome = runParser(app, arguments);
  if (outcome.error) return *outcome.error;
  if (outcome.help) {
    result.help = *outcome.help;
    return result;
  }

  auto min = parseByteSize(min_bytes, "-b/--min-bytes");
  if (!min.ok()) return min.error();
  auto max = parseByteSize(max_bytes, "-e/--max-bytes");
  if (!max.ok()) return max.error();
  options.min_bytes = *min;
  options.max_bytes = *max;
  const auto sizes = sizeSweep(options.min_bytes, options.max_bytes, options.step_factor);
  if (!sizes.ok()) return sizes.error();

  auto parsed_ops =
      parseList<perf::CollectiveOp>(ops, "--ops", "all_reduce, all_gather, reduce_scatter, all_to_all or send_recv",
                                    [](const std::string& name) -> std::optional<perf::CollectiveOp> {
                                      const auto op = perf::parseCollectiveOp(name);
                                      if (!op || !harnessMeasures(*op)) return std::nullopt;
                                      return op;
                                    });
  if (!parsed_ops.ok()) return parsed_ops.error();
  options.ops = std::move(parsed_ops).value();
  if (options.ops.empty()) return invalid("--ops", "expected at least one collective");

  auto parsed_layouts =
      parseList<LayoutKind>(layouts, "--layouts", "intra_node, one_per_node, tp_like, dp_like or world",
                            [](const std::string& name) { return parseLayout(name); });
  if (!parsed_layouts.ok()) return parsed_layouts.error();
  options.layouts = std::move(parsed_layouts).value();
  if (options.layouts.empty()) return invalid("--layouts", "expected at least one layout");

  const auto precision = topology::parsePrecision(dtype);
  if (!precision || (*precision != topology::Precision::kFp32 && *precision != topology::Precision::kFp16 &&
                     *precision != topology::Precision::kBf16)) {
    return invalid("--dtype", fmt::format("expected fp32, fp16 or bf16, found \"{}\"", dtype));
  }
  options.dtype = *precision;
  if (auto error = checkRepetitions(options.warmup, options.iterations)) return *error;
  if (options.tp < 0) return invalid("--tp", fmt::format("expected 0 (GPUs per node) or more, found {}", options.tp));
  if (options.out.empty()) return invalid("--out", "expected a file name");
  return result;
}

Expected<CommandLine<GemmHarnessOptions>> parseGemmHarnessArguments(const std::vector<std::string>& arguments) {
  CommandLine<GemmHarnessOptions> result;
  GemmHarnessOptions& options = result.options;
  CLI::App app{
      "trainsim-calib-gemm: measure cuBLASLt GEMMs (the shapes an experiment's per-GPU workload runs, and a "
      "reference set) and device memory bandwidth on one GPU; writes the results file (docs/harness.md)",
      "trainsim-calib-gemm"};
  std::vector<std::string> sets;
  std::string precision;
  bool no_reference = false;
  bool no_memory = false;
  std::string workspace = "32M";
  std::string memory_min = "1M";
  std::string memory_max = "4G";
  app.add_option("--experiment", options.experiments,
                 "Experiment preset or file whose GEMM shapes to measure (repeatable)");
  app.add_option("--set", sets, "Override KEY=VALUE of every experiment (repeatable), e.g. parallelism.tp=4");
  app.add_option("--config-dir", options.config_dir, "Directory of presets (gpus.yaml, models/, experiments/ ...)")
      ->envname("TRAINSIM_CONFIG_DIR");
  app.add_option("--precision", precision,
                 "fp32, tf32, fp16, bf16 or fp8 (default: the experiments' training precision, else bf16)");
  app.add_flag("--no-reference", no_reference, "Leave out the reference shapes");
  app.add_flag("--unfused-attention", options.unfused_attention,
               "Model attention as score and context matmuls (adds their batched GEMM shapes)");
  app.add_option("-w,--warmup", options.warmup, "Untimed repetitions per shape")->capture_default_str();
  app.add_option("-n,--iters", options.iterations, "Timed repetitions per shape; the median is reported")
      ->capture_default_str();
  app.add_option("--workspace", workspace, "cuBLASLt workspace size")->capture_default_str();
  app.add_flag("--no-memory", no_memory, "Skip the memory-bandwidth test");
  app.add_option("--memory-min-bytes", memory_min, "Smallest device-to-device copy")->capture_default_str();
  app.add_option("--memory-max-bytes", memory_max, "Largest device-to-device copy")->capture_default_str();
  app.add_option("--memory-step-factor", options.memory_step_factor, "Copy size multiplier")->capture_default_str();
  app.add_option("-o,--out", options.out, "Results file (- = stdout)")->capture_default_str();
  app.add_flag("--dry-run", options.dry_run, "Print the shapes and copy sizes it would measure, then exit (no GPU)");
  const ParseOutcome outcome = runParser(app, arguments);
  if (outcome.error) return *outcome.error;
  if (outcome.help) {
    result.help = *outcome.help;
    return result;
  }

  for (const std::string& set : sets) {
    auto override_value = catchInputErrors([&] { return parseOverride(set); });
    if (!override_value.ok()) return override_value.error();
    options.overrides.push_back(std::move(override_value).value());
  }
  if (!options.overrides.empty() && options.experiments.empty()) {
    return invalid("--set", "applies to an --experiment; none was given");
  }
  if (!precision.empty()) {
    const auto parsed = topology::parsePrecision(precision);
    if (!parsed || *parsed == topology::Precision::kFp64) {
      return invalid("--precision", fmt::format("expected fp32, tf32, fp16, bf16 or fp8, found \"{}\"", precision));
    }
    options.precision = *parsed;
  }
  options.reference_shapes = !no_reference;
  options.memory_bandwidth = !no_memory;
  if (!options.reference_shapes && options.experiments.empty()) {
    return invalid("--no-reference", "leaves no GEMM shape to measure: give an --experiment");
  }
  if (auto error = checkRepetitions(options.warmup, options.iterations)) return *error;
  auto workspace_bytes = parseByteSize(workspace, "--workspace");
  if (!workspace_bytes.ok()) return workspace_bytes.error();
  options.workspace_bytes = *workspace_bytes;
  auto min = parseByteSize(memory_min, "--memory-min-bytes");
  if (!min.ok()) return min.error();
  auto max = parseByteSize(memory_max, "--memory-max-bytes");
  if (!max.ok()) return max.error();
  options.memory_min_bytes = *min;
  options.memory_max_bytes = *max;
  const auto sizes = sizeSweep(options.memory_min_bytes, options.memory_max_bytes, options.memory_step_factor);
  if (!sizes.ok()) {
    return invalid("--memory-min-bytes/--memory-max-bytes/--memory-step-factor", sizes.error().message);
  }
  if (options.out.empty()) return invalid("--out", "expected a file name");
  return result;
}

}  // namespace trainsim::harness
