#include "calibrate/calibration_file.h"

#include <fmt/format.h>

#include <filesystem>

#include "base/config_node.h"
#include "parallelism/model_constant_sections.h"
#include "perf/parameter_sections.h"

namespace trainsim::calibrate {
namespace {

std::string quoted(const std::string& text) { return perf::yamlQuoted(text); }
std::string number(double value) { return perf::yamlNumber(value); }

Calibration readCalibration(const ConfigNode& root) {
  root.allowKeys({"format", "cluster", "gpu", "sources", "communication", "communication_fit", "compute", "workload",
                  "memory", "training_step_fit", "collectives", "collective_corrections"});
  const ConfigNode format = root.child("format");
  if (format.asString() != kCalibrationFormat) format.failExpected(std::string(kCalibrationFormat));
  Calibration calibration;
  calibration.cluster = root.child("cluster").asString();
  calibration.gpu = root.child("gpu").asString();
  if (auto sources = root.optionalChild("sources")) {
    for (const auto& entry : sources->elements()) {
      entry.allowKeys({"file", "kind", "entries"});
      CalibrationSource source;
      source.file = entry.child("file").asString();
      source.kind = entry.child("kind").asEnum(
          {"nccl-tests", "trainsim-calib-nccl", "trainsim-calib-gemm", "cudnn-sdpa-benchmark", "training-step"});
      source.entries = entry.child("entries").asNonNegativeInteger();
      calibration.sources.push_back(std::move(source));
    }
  }
  if (auto communication = root.optionalChild("communication")) {
    calibration.communication = perf::readCommunicationSection(*communication);
  }
  if (auto fit = root.optionalChild("communication_fit")) {
    fit->allowKeys({"points", "iterations", "rms_relative_error_before", "rms_relative_error_after"});
    CommunicationFitQuality quality;
    quality.points = static_cast<int>(fit->child("points").asNonNegativeInteger());
    quality.iterations = static_cast<int>(fit->child("iterations").asNonNegativeInteger());
    quality.rms_relative_error_before = fit->child("rms_relative_error_before").asNonNegativeNumber();
    quality.rms_relative_error_after = fit->child("rms_relative_error_after").asNonNegativeNumber();
    calibration.communication_fit = quality;
  }
  if (auto compute = root.optionalChild("compute")) {
    // A stack's factor is applied with the stack, before a calibration: here it would do nothing.
    if (auto factor = compute->optionalChild("training_rate_stack_factor")) {
      factor->fail(
          "training_rate_stack_factor belongs to a software stack (configs/stacks/, training.stack_overrides), "
          "not to a calibration; give the calibrated GPU's compute.training_rate_fraction instead");
    }
    calibration.compute = perf::readComputeSection(*compute);
  }
  if (auto workload = root.optionalChild("workload"))
    calibration.workload = parallelism::readWorkloadSection(*workload);
  if (auto memory = root.optionalChild("memory")) calibration.memory = parallelism::readMemorySection(*memory);
  if (auto fit = root.optionalChild("training_step_fit")) {
    fit->allowKeys({"steps", "rms_relative_error_before", "rms_relative_error_after"});
    TrainingStepFitQuality quality;
    quality.steps = static_cast<int>(fit->child("steps").asPositiveInteger());
    quality.rms_relative_error_before = fit->child("rms_relative_error_before").asNonNegativeNumber();
    quality.rms_relative_error_after = fit->child("rms_relative_error_after").asNonNegativeNumber();
    calibration.training_step_fit = quality;
  }
  if (auto collectives = root.optionalChild("collectives")) {
    for (const auto& entry : collectives->elements()) {
      entry.allowKeys({"op", "layout", "group_size", "nodes", "gpus_per_node", "source", "latency_us", "algbw_GBps",
                       "busbw_GBps", "r_squared_log_time", "rms_relative_residual", "max_relative_residual", "points",
                       "downweighted", "model_rms_relative_error", "model_max_relative_error_from_1MiB"});
      CollectiveCurveRecord record;
      const ConfigNode op = entry.child("op");
      record.op = op.asString();
      if (!perf::parseCollectiveOp(record.op)) {
        op.failExpected("all_reduce, all_gather, reduce_scatter, all_to_all, broadcast or send_recv");
      }
      record.layout = entry.child("layout").asString();
      record.group_size = entry.child("group_size").asPositiveInteger();
      record.nodes = entry.child("nodes").asPositiveInteger();
      record.gpus_per_node = entry.child("gpus_per_node").asPositiveInteger();
      record.source = entry.child("source").asString();
      record.fit.latency_us = entry.child("latency_us").asNonNegativeNumber();
      record.fit.algbw_GBps = entry.child("algbw_GBps").asNonNegativeNumber();
      record.fit.busbw_GBps = entry.child("busbw_GBps").asNonNegativeNumber();
      record.fit.r_squared_log_time = entry.child("r_squared_log_time").asNumber();
      record.fit.rms_relative_residual = entry.child("rms_relative_residual").asNonNegativeNumber();
      record.fit.max_relative_residual = entry.child("max_relative_residual").asNonNegativeNumber();
      record.fit.points = static_cast<int>(entry.child("points").asPositiveInteger());
      record.fit.downweighted = static_cast<int>(entry.child("downweighted").asNonNegativeInteger());
      record.model_rms_relative_error = entry.child("model_rms_relative_error").asNonNegativeNumber();
      record.model_max_relative_error_from_1MiB =
          entry.child("model_max_relative_error_from_1MiB").asNonNegativeNumber();
      calibration.collectives.push_back(std::move(record));
    }
  }
  if (auto corrections = root.optionalChild("collective_corrections")) {
    for (const auto& entry : corrections->elements()) {
      entry.allowKeys({"op", "group_size", "nodes", "gpus_per_node", "points"});
      CollectiveCorrection correction;
      const ConfigNode op = entry.child("op");
      const auto parsed = perf::parseCollectiveOp(op.asString());
      if (!parsed) op.failExpected("all_reduce, all_gather, reduce_scatter, all_to_all, broadcast or send_recv");
      correction.op = *parsed;
      correction.group_size = entry.child("group_size").asPositiveInteger();
      correction.nodes = entry.child("nodes").asPositiveInteger();
      correction.gpus_per_node = entry.child("gpus_per_node").asPositiveInteger();
      const ConfigNode points = entry.child("points");
      for (const auto& point : points.elements()) {
        const auto pair = point.elements();
        if (pair.size() != 2) point.failExpected("a [bytes, factor] pair");
        const double bytes = pair[0].asPositiveNumber();
        if (!correction.points.empty() && bytes <= correction.points.back().bytes) {
          pair[0].failExpected(fmt::format("a size above the one before ({:g})", correction.points.back().bytes));
        }
        correction.points.push_back({bytes, pair[1].asPositiveNumber()});
      }
      if (correction.points.empty()) points.failExpected("at least one [bytes, factor] pair");
      calibration.corrections.push_back(std::move(correction));
    }
  }
  return calibration;
}

}  // namespace

std::string calibrationYaml(const Calibration& c) {
  std::string out;
  out += "# trainsim calibration, written by `trainsim calibrate`; apply with --calibration FILE.\n";
  out += "# Schema: docs/calibration.md. Values replace the shipped defaults (configs/defaults/*.yaml);\n";
  out += "# `collectives` and `communication_fit` are a record of the fits.\n";
  out += fmt::format("format: {}\n", kCalibrationFormat);
  out += fmt::format("cluster: {}\n", quoted(c.cluster));
  out += fmt::format("gpu: {}\n", quoted(c.gpu));
  if (!c.sources.empty()) {
    out += "sources:\n";
    for (const auto& source : c.sources) {
      out += fmt::format("  - {{file: {}, kind: {}, entries: {}}}\n", quoted(source.file), source.kind, source.entries);
    }
  }
  if (!c.communication.empty()) {
    out += "communication:  # sim::CommunicationParameters fields\n";
    out += perf::communicationSectionYaml(c.communication);
  }
  if (c.communication_fit) {
    const auto& fit = *c.communication_fit;
    out += "communication_fit:  # simulator vs the measured points, relative time error\n";
    out += fmt::format("  points: {}\n  iterations: {}\n", fit.points, fit.iterations);
    out += fmt::format("  rms_relative_error_before: {}\n", number(fit.rms_relative_error_before));
    out += fmt::format("  rms_relative_error_after: {}\n", number(fit.rms_relative_error_after));
  }
  if (!c.compute.empty()) {
    out += "compute:  # sim::ComputeParameters tables\n";
    out += perf::computeSectionYaml(c.compute);
  }
  if (!c.workload.empty()) {
    out += "workload:  # parallelism::FlopsOptions constants\n";
    out += parallelism::constantSectionYaml(c.workload);
  }
  if (!c.memory.empty()) {
    out += "memory:  # parallelism::MemoryOptions constants\n";
    out += parallelism::constantSectionYaml(c.memory);
  }
  if (c.training_step_fit) {
    const auto& fit = *c.training_step_fit;
    out += "training_step_fit:  # simulator vs the measured training steps, relative time error\n";
    out += fmt::format("  steps: {}\n", fit.steps);
    out += fmt::format("  rms_relative_error_before: {}\n", number(fit.rms_relative_error_before));
    out += fmt::format("  rms_relative_error_after: {}\n", number(fit.rms_relative_error_after));
  }
  if (!c.collectives.empty()) {
    out += "collectives:  # per (op, group layout): t(S) = latency + S / algbw, robust fit; model = calibrated sim\n";
    for (const auto& r : c.collectives) {
      out += fmt::format("  - op: {}\n    layout: {}\n    group_size: {}\n    nodes: {}\n    gpus_per_node: {}\n", r.op,
                         r.layout, r.group_size, r.nodes, r.gpus_per_node);
      out += fmt::format("    source: {}\n", quoted(r.source));
      out += fmt::format("    latency_us: {}\n    algbw_GBps: {}\n    busbw_GBps: {}\n", number(r.fit.latency_us),
                         number(r.fit.algbw_GBps), number(r.fit.busbw_GBps));
      out += fmt::format("    r_squared_log_time: {}\n    rms_relative_residual: {}\n    max_relative_residual: {}\n",
                         number(r.fit.r_squared_log_time), number(r.fit.rms_relative_residual),
                         number(r.fit.max_relative_residual));
      out += fmt::format("    points: {}\n    downweighted: {}\n", r.fit.points, r.fit.downweighted);
      out += fmt::format("    model_rms_relative_error: {}\n    model_max_relative_error_from_1MiB: {}\n",
                         number(r.model_rms_relative_error), number(r.model_max_relative_error_from_1MiB));
    }
  }
  if (!c.corrections.empty()) {
    out += "collective_corrections:  # measured / calibrated-simulated time per size, on the measured layouts\n";
    for (const auto& correction : c.corrections) {
      out += fmt::format("  - op: {}\n    group_size: {}\n    nodes: {}\n    gpus_per_node: {}\n    points:\n",
                         perf::collectiveOpName(correction.op), correction.group_size, correction.nodes,
                         correction.gpus_per_node);
      for (const auto& point : correction.points) {
        out += fmt::format("      - [{}, {}]\n", number(point.bytes), number(point.factor));
      }
    }
  }
  return out;
}

Expected<Calibration> parseCalibration(const std::string& text, const std::string& name) {
  return catchInputErrors([&] {
    const ConfigNode root = parseConfigText(text, name);
    if (!root.yaml().IsDefined() || root.yaml().IsNull()) throwInputError(name, "", "the file is empty");
    Calibration calibration = readCalibration(root);
    calibration.file = name;
    return calibration;
  });
}

Expected<Calibration> loadCalibrationFile(const std::string& path) {
  return catchInputErrors([&] {
    // Checked here: a directory opens as a stream and fails only when read.
    std::error_code ignored;
    if (std::filesystem::is_directory(path, ignored)) {
      throwInputError(path, "", "is a directory, expected a calibration file (written by trainsim calibrate)");
    }
    const ConfigNode root = loadConfigFile(path);
    Calibration calibration = readCalibration(root);
    calibration.file = path;
    return calibration;
  });
}

}  // namespace trainsim::calibrate
