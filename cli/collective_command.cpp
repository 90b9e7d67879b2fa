#include "cli/collective_command.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/expected.h"
#include "calibrate/calibration_file.h"
#include "cli/input_file.h"
#include "cli/json_text.h"
#include "cli/memory_budget_option.h"
#include "cli/output_file.h"
#include "perf/collective_flow_bound.h"
#include "perf/collective_simulation.h"
#include "perf/default_parameters.h"
#include "topology/cluster.h"
#include "topology/cluster_loader.h"
#include "topology/rank_placement.h"

namespace trainsim::cli {

double parseByteSize(const std::string& text, const std::string& option) {
  std::size_t used = 0;
  double value = 0.0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throwInputError(option, "", "expected a size such as 8, 64K, 32M or 1G, found \"" + text + "\"");
  }
  const std::string suffix = text.substr(used);
  if (suffix == "K" || suffix == "k") {
    value *= 1024.0;
  } else if (suffix == "M" || suffix == "m") {
    value *= 1024.0 * 1024.0;
  } else if (suffix == "G" || suffix == "g") {
    value *= 1024.0 * 1024.0 * 1024.0;
  } else if (!suffix.empty()) {
    throwInputError(option, "", "expected a size such as 8, 64K, 32M or 1G, found \"" + text + "\"");
  }
  if (!std::isfinite(value) || value < 1.0 || std::floor(value) != value || value > 9.007199254740992e15) {
    throwInputError(option, "", "expected a whole number of bytes from 1 to 2^53, found \"" + text + "\"");
  }
  return value;
}

namespace {

// The most message sizes one run prints: -f close to 1 over a wide -b..-e would otherwise
// simulate for minutes (nccl-tests' own default, -f 2 from 8 B to 2^53 B, is 51 sizes).
constexpr double kMaxSizes = 1000.0;
// The smallest step factor: sizes closer than 1% apart repeat each other's row.
constexpr double kMinStepFactor = 1.01;

std::vector<int64_t> placeRanks(const topology::Cluster& cluster, int64_t gpus,
                                std::optional<int64_t> per_node_option) {
  if (per_node_option && *per_node_option < 1) {
    throwInputError("--gpus-per-node", "",
                    "expected a positive number of GPUs per node, found " + std::to_string(*per_node_option));
  }
  topology::RankPlacement placement = topology::placeRanks(cluster, gpus, per_node_option.value_or(0));
  if (!placement.problem.empty()) {
    throwInputError(placement.per_node_at_fault ? "--gpus-per-node" : "--gpus", "", placement.problem);
  }
  return std::move(placement.ranks);
}

perf::CollectiveOp parseOp(const std::string& text) {
  const auto op = perf::parseCollectiveOp(text);
  if (!op) {
    throwInputError("--op", "",
                    "expected all_reduce, all_gather, reduce_scatter, all_to_all, broadcast or "
                    "send_recv, found \"" +
                        text + "\"");
  }
  return *op;
}

// --algo; none when empty (the simulator chooses).
std::optional<perf::CollectiveAlgorithm> parseAlgorithm(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const std::optional<perf::CollectiveAlgorithm> algorithm = perf::parseAlgorithmName(text);
  if (!algorithm)
    throwInputError("--algo", "", "expected ring, tree, nvls, direct, nvls_tree or pat, found \"" + text + "\"");
  return algorithm;
}

// --proto; none when empty (the simulator chooses).
std::optional<perf::Protocol> parseProtocol(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::optional<perf::Protocol> protocol;
  for (auto candidate : perf::kAllProtocols) {
    if (perf::protocolName(candidate) == text) protocol = candidate;
  }
  if (!protocol) throwInputError("--proto", "", "expected LL, LL128 or Simple, found \"" + text + "\"");
  return protocol;
}

// The message sizes of a run: min_bytes, min_bytes f, min_bytes f^2, ... up to max_bytes.
struct SizeRange {
  double min_bytes = 0.0;
  double max_bytes = 0.0;
  double step_factor = 0.0;
};

SizeRange parseSizeRange(const CollectiveOptions& options) {
  const double min_bytes = parseByteSize(options.min_bytes, "--min-bytes");
  const double max_bytes = parseByteSize(options.max_bytes, "--max-bytes");
  if (max_bytes < min_bytes) throwInputError("--max-bytes", "", "must be at least --min-bytes");
  if (!std::isfinite(options.step_factor) || options.step_factor < kMinStepFactor) {
    throwInputError(
        "--step-factor", "",
        fmt::format("expected a finite factor of at least {}, found {}", kMinStepFactor, options.step_factor));
  }
  // Count the sizes before simulating any.
  const double sizes = std::floor(std::log(max_bytes / min_bytes) / std::log(options.step_factor) + 1e-9) + 1.0;
  if (sizes > kMaxSizes) {
    throwInputError("--step-factor", "",
                    fmt::format("{} gives {:.0f} sizes from {} to {} bytes, more than the {:.0f} a run prints; use a "
                                "larger factor or a narrower --min-bytes..--max-bytes",
                                options.step_factor, sizes, min_bytes, max_bytes, kMaxSizes));
  }
  return SizeRange{min_bytes, max_bytes, options.step_factor};
}

// The memory of the run at most (sim/memory_budget.h): the cluster and the largest flow
// graph of one size (each size's graph is freed before the next), every flow running at
// once, from the spec and the placement alone, before the cluster is built. A placement the
// cluster cannot hold is left to placeRanks, which says why.
sim::MemoryEstimate collectiveMemory(const topology::ClusterSpec& spec, perf::CollectiveOp op,
                                     std::optional<perf::CollectiveAlgorithm> algorithm,
                                     const CollectiveOptions& options) {
  sim::MemoryEstimate estimate;
  sim::addClusterMemory(spec, estimate);
  const int64_t gpus = options.gpus.value_or(spec.totalGpus());
  if (gpus < 2 || gpus > spec.totalGpus()) return estimate;
  perf::CollectiveShape shape;
  shape.op = op;
  shape.gpus = gpus;
  shape.algorithm = algorithm;
  shape.most_per_node = std::min<int64_t>(gpus, options.gpus_per_node.value_or(spec.gpus_per_node));
  shape.multi_node = gpus > shape.most_per_node;
  shape.nics_per_node = perf::channelLimit(spec);
  shape.mesh = perf::meshFabric(spec);
  const double flows = perf::collectiveFlowBound(shape);
  estimate.add(sim::MemoryKind::kFlows, fmt::format("flows of {} on {} GPUs", options.op, gpus), flows);
  // They all start together.
  estimate.add(sim::MemoryKind::kRunningFlows, fmt::format("flows of {} on {} GPUs running at once", options.op, gpus),
               flows);
  estimate.add(sim::MemoryKind::kRunningFlows,
               fmt::format("routes of the GPU pairs of {} on {} GPUs", options.op, gpus),
               perf::collectivePairRoutes(shape));
  return estimate;
}

// The group's shape, for a measured correction of the calibration (collective_correction.h).
struct GroupShape {
  int64_t nodes = 0;
  int64_t most_per_node = 0;  // GPUs of the group on its fullest node
};

GroupShape groupShape(const topology::Cluster& cluster, const std::vector<int64_t>& ranks) {
  std::map<int32_t, int64_t> per_node;
  for (int64_t rank : ranks) ++per_node[cluster.device(cluster.accelerator(rank)).node];
  GroupShape shape;
  shape.nodes = static_cast<int64_t>(per_node.size());
  for (const auto& [node, count] : per_node) shape.most_per_node = std::max(shape.most_per_node, count);
  return shape;
}

// The table's comment lines (what runs where, the calibration in force) and column headings.
std::string tableHeader(const CollectiveOptions& options, const topology::ClusterSpec& spec, perf::CollectiveOp op,
                        const std::vector<int64_t>& ranks, const GroupShape& shape,
                        const std::optional<calibrate::Calibration>& calibration, const std::string& in_force) {
  std::string table = fmt::format("# trainsim collective: {} on {} GPUs of {} ({} x {} per node)\n", options.op,
                                  ranks.size(), spec.name, spec.nodes, spec.gpus_per_node);
  if (calibration) {
    table += "# calibration in force: " + in_force + "\n";
    const std::string mismatch = calibrate::calibrationMismatch(*calibration, spec);
    if (!mismatch.empty()) table += "# warning: " + mismatch + "\n";
    if (calibrate::calibrationCorrection(*calibration, op, static_cast<int64_t>(ranks.size()), shape.nodes,
                                         shape.most_per_node, 1.0)) {
      table += "# this group was measured: times include the calibration's measured correction\n";
    }
  }
  table += fmt::format("#{:>12} {:>13} {:>9} {:>10} {:>8} {:>8} {:>7} {:>7}\n", "size", "count", "type", "time",
                       "algbw", "busbw", "algo", "proto");
  table +=
      fmt::format("#{:>12} {:>13} {:>9} {:>10} {:>8} {:>8}\n", "(B)", "(elements)", "", "(us)", "(GB/s)", "(GB/s)");
  return table;
}

int run(const CollectiveOptions& options, const CommandContext& context) {
  requireWritableOutputs({&options.json_file});
  const perf::CollectiveOp op = parseOp(options.op);
  const std::optional<perf::CollectiveAlgorithm> algorithm = parseAlgorithm(options.algorithm);
  const std::optional<perf::Protocol> protocol = parseProtocol(options.protocol);
  const SizeRange size_range = parseSizeRange(options);

  std::vector<Override> overrides;
  for (const auto& text : options.overrides) overrides.push_back(parseOverride(text));
  requireNotDirectory(options.cluster, "a cluster YAML file");
  const auto spec = valueOrThrow(topology::loadClusterFile(options.cluster, context.paths, overrides));
  requireWithinMemoryBudget(collectiveMemory(spec, op, algorithm, options), options.max_memory_GiB,
                            op == perf::CollectiveOp::kAllReduce && !algorithm
                                ? "use fewer GPUs (--gpus), or --algo ring (a quarter of the tree's flows)"
                                : "use fewer GPUs (--gpus)");
  const auto cluster = valueOrThrow(topology::Cluster::build(spec));
  const int64_t gpus = options.gpus.value_or(cluster.acceleratorCount());
  const std::vector<int64_t> ranks = placeRanks(cluster, gpus, options.gpus_per_node);

  perf::CommunicationParameters parameters = valueOrThrow(perf::defaultCommunicationParameters(context.paths));
  std::optional<calibrate::Calibration> calibration;
  if (!options.calibration_file.empty()) {
    calibration = valueOrThrow(calibrate::loadCalibrationFile(options.calibration_file));
    calibrate::applyCalibration(*calibration, parameters);
  }
  const GroupShape shape = groupShape(cluster, ranks);

  perf::CollectiveSimulator simulator(cluster, parameters);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  const std::string in_force = calibration ? calibrate::describeCalibration(*calibration) : std::string();
  std::string table = tableHeader(options, spec, op, ranks, shape, calibration, in_force);
  // nccl-tests rounds each size down to a whole number of elements per rank.
  const int64_t element = 4;
  const int64_t align = element * ((op == perf::CollectiveOp::kAllReduce || op == perf::CollectiveOp::kBroadcast ||
                                    op == perf::CollectiveOp::kSendRecv)
                                       ? 1
                                       : static_cast<int64_t>(ranks.size()));
  for (double size = size_range.min_bytes; size <= size_range.max_bytes * (1.0 + 1e-12);
       size *= size_range.step_factor) {
    const int64_t bytes = std::max<int64_t>(align, static_cast<int64_t>(size) / align * align);
    perf::CollectiveRequest request{op, ranks, static_cast<double>(bytes), algorithm, protocol};
    perf::CollectiveResult result = valueOrThrow(simulator.simulate(request));
    std::optional<double> correction;
    if (calibration) {
      correction = calibrate::calibrationCorrection(*calibration, op, static_cast<int64_t>(ranks.size()), shape.nodes,
                                                    shape.most_per_node, static_cast<double>(bytes));
    }
    if (correction) {
      result.time_s *= *correction;
      result.algbw_Bps /= *correction;
      result.busbw_Bps /= *correction;
    }
    const double time_us = result.time_s * 1e6;
    table += fmt::format(" {:>12} {:>13} {:>9} {:>10.2f} {:>8.2f} {:>8.2f} {:>7} {:>7}\n", bytes, bytes / element,
                         "float", time_us, result.algbw_Bps / 1e9, result.busbw_Bps / 1e9,
                         perf::algorithmName(result.choice.algorithm), perf::protocolName(result.choice.protocol));
    rows.push_back({{"bytes", bytes},
                    {"time_us", time_us},
                    {"algbw_GBps", result.algbw_Bps / 1e9},
                    {"busbw_GBps", result.busbw_Bps / 1e9},
                    {"algorithm", perf::algorithmName(result.choice.algorithm)},
                    {"protocol", perf::protocolName(result.choice.protocol)}});
    if (calibration) {
      rows.back()["calibration"] = in_force;
      if (correction) rows.back()["measured_correction"] = *correction;
    }
  }
  if (!options.json_file.empty()) {
    writeOutput(options.json_file, [&](std::ostream& out) { out << jsonText(rows, 2) << "\n"; });
    if (options.json_file == "-") return 0;
  }
  std::cout << table;
  return 0;
}

}  // namespace

void addCollectiveCommand(CLI::App& app, CollectiveOptions& options) {
  CLI::App* command = app.add_subcommand("collective", "Predict a collective like nccl-tests prints it");
  command->add_option("--cluster", options.cluster, "Cluster preset name or YAML file")->required();
  command
      ->add_option("--op", options.op, "all_reduce | all_gather | reduce_scatter | all_to_all | broadcast | send_recv")
      ->capture_default_str();
  command->add_option("--gpus", options.gpus, "Number of GPUs (default: all), the first N in rank order");
  command->add_option("--gpus-per-node", options.gpus_per_node, "Spread the GPUs as K per node instead");
  command->add_option("-b,--min-bytes", options.min_bytes, "Smallest size (nccl-tests -b)")->capture_default_str();
  command->add_option("-e,--max-bytes", options.max_bytes, "Largest size (nccl-tests -e)")->capture_default_str();
  command->add_option("-f,--step-factor", options.step_factor, "Size multiplier (nccl-tests -f)")
      ->capture_default_str();
  command->add_option("--algo", options.algorithm,
                      "Force the algorithm: ring | tree | nvls | direct | nvls_tree | pat");
  command->add_option("--proto", options.protocol, "Force the protocol: LL | LL128 | Simple");
  command->add_option("--set", options.overrides, "Override a cluster key: KEY=VALUE (repeatable)");
  command->add_option("--json", options.json_file, "Write the rows as JSON (- = stdout)");
  command->add_option("--calibration", options.calibration_file, "Apply a calibration (trainsim calibrate)");
  addMemoryBudgetOption(*command, options.max_memory_GiB);
}

int runCollective(const CollectiveOptions& options, const CommandContext& context) {
  try {
    return run(options, context);
  } catch (const InputError& error) {
    return reportError(error.error(), context);
  }
}

}  // namespace trainsim::cli
