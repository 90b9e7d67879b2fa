#include "validate/calibration_file.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "base/config_node.h"
#include "validate/communication_parameter_names.h"

namespace trainsim::validate {
namespace {

// A YAML double-quoted scalar.
std::string quoted(const std::string& text) {
  std::string result = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') result += '\\';
    if (c == '\n') {
      result += "\\n";
      continue;
    }
    result += c;
  }
  return result + "\"";
}

// The shortest text that reads back as the same double: a calibration reproduces exactly.
std::string number(double value) {
  if (!std::isfinite(value)) throw std::logic_error("a calibration value is not finite");
  return fmt::format("{}", value);
}

topology::Precision readPrecision(const ConfigNode& node) {
  const std::string text = node.asString();
  const auto precision = topology::parsePrecision(text);
  if (!precision) node.failExpected("one of fp64, fp32, tf32, fp16, bf16, fp8");
  return *precision;
}

// Attention rates are of the 16-bit kernels: the model takes them as a fraction of the 16-bit peak.
topology::Precision readSixteenBitPrecision(const ConfigNode& node) {
  const auto precision = topology::parsePrecision(node.asString());
  if (precision != topology::Precision::kBf16 && precision != topology::Precision::kFp16) {
    node.failExpected("bf16 or fp16");
  }
  return *precision;
}

double readFraction(const ConfigNode& node) {
  const double value = node.asPositiveNumber();
  if (value > 1.0) node.failExpected("a fraction in (0, 1]");
  return value;
}

Calibration read(const ConfigNode& root) {
  root.allowKeys({"format", "cluster", "gpu", "sources", "communication", "communication_fit", "compute",
                  "training_step_fit", "collectives", "collective_corrections"});
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
    std::vector<std::string> names;
    for (const auto& entry : communicationParameterNames()) names.emplace_back(entry.name);
    communication->allowKeys(names);
    for (const auto& [key, value] : communication->entries()) {
      const auto* entry = findCommunicationParameter(key);
      const double number_value = value.asNumber();
      if (!inRange(entry->range, number_value)) value.failExpected(std::string(rangeDescription(entry->range)));
      calibration.communication.push_back({key, number_value});
    }
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
    compute->allowKeys({"matmul_ceilings", "memory_efficiency", "gemm_efficiency", "collective_sms", "attention_rates",
                        "attention_tile_overheads", "training_rate_fraction"});
    if (auto fractions = compute->optionalChild("training_rate_fraction")) {
      for (const auto& entry : fractions->elements()) {
        entry.allowKeys({"gpu", "fraction"});
        calibration.compute.training_rate_fraction.push_back(
            {entry.child("gpu").asString(),
             entry.child("fraction").asNumberIn(sim::kMinTrainingRateFraction, sim::kMaxTrainingRateFraction)});
      }
    }
    if (auto ceilings = compute->optionalChild("matmul_ceilings")) {
      for (const auto& entry : ceilings->elements()) {
        entry.allowKeys({"gpu", "precision", "tflops"});
        calibration.compute.matmul_ceilings.push_back({entry.child("gpu").asString(),
                                                       readPrecision(entry.child("precision")),
                                                       entry.child("tflops").asPositiveNumber()});
      }
    }
    if (auto attention = compute->optionalChild("attention_rates")) {
      for (const auto& entry : attention->elements()) {
        entry.allowKeys({"gpu", "precision", "forward_tflops", "backward_tflops", "measured_at"});
        sim::MeasuredAttentionRate rate{
            entry.child("gpu").asString(), readSixteenBitPrecision(entry.child("precision")),
            entry.child("forward_tflops").asPositiveNumber(), entry.child("backward_tflops").asPositiveNumber()};
        // The problem the rates were measured on; without it they are the kernel's full rate.
        if (auto at = entry.optionalChild("measured_at")) {
          at->allowKeys({"sequences", "queries", "keys"});
          rate.measured_at = {at->child("sequences").asPositiveNumber(), at->child("queries").asPositiveNumber(),
                              at->child("keys").asPositiveNumber()};
        }
        calibration.compute.attention_rates.push_back(std::move(rate));
      }
    }
    if (auto overheads = compute->optionalChild("attention_tile_overheads")) {
      for (const auto& entry : overheads->elements()) {
        entry.allowKeys({"gpu", "forward", "backward"});
        calibration.compute.attention_tile_overheads.push_back(
            {entry.child("gpu").asString(),
             {entry.child("forward").asNonNegativeNumber(), entry.child("backward").asNonNegativeNumber()}});
      }
    }
    if (auto memory = compute->optionalChild("memory_efficiency")) {
      for (const auto& entry : memory->elements()) {
        entry.allowKeys({"gpu", "fraction"});
        calibration.compute.memory_efficiency.push_back(
            {entry.child("gpu").asString(), readFraction(entry.child("fraction"))});
      }
    }
    if (auto collective = compute->optionalChild("collective_sms")) {
      for (const auto& entry : collective->elements()) {
        entry.allowKeys({"gpu", "sms"});
        // A sanity bound above every catalog GPU's compute units (MI300X: 304); the model
        // checks the GPU's own count when the calibration is applied.
        calibration.compute.collective_sms.push_back(
            {entry.child("gpu").asString(), entry.child("sms").asNumberIn(0.0, 1024.0)});
      }
    }
    if (auto gemm = compute->optionalChild("gemm_efficiency")) {
      for (const auto& entry : gemm->elements()) {
        entry.allowKeys({"gpu", "precision", "class", "efficiency", "shapes"});
        GemmClassRecord record;
        record.gpu = entry.child("gpu").asString();
        record.precision = readPrecision(entry.child("precision"));
        record.shape_class = entry.child("class").asString();
        record.efficiency = readFraction(entry.child("efficiency"));
        record.shapes = static_cast<int>(entry.child("shapes").asPositiveInteger());
        calibration.compute.gemm_efficiency.push_back(std::move(record));
      }
    }
  }
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
      if (!sim::parseCollectiveOp(record.op)) {
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
      const auto parsed = sim::parseCollectiveOp(op.asString());
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
  out += "# Schema: docs/calibration.md. Values replace the defaults of sim/communication_parameters.h\n";
  out += "# and sim/compute_parameters.h; `collectives` and `communication_fit` are a record of the fits.\n";
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
    for (const auto& value : c.communication) out += fmt::format("  {}: {}\n", value.name, number(value.value));
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
    if (!c.compute.matmul_ceilings.empty()) {
      out += "  matmul_ceilings:\n";
      for (const auto& rate : c.compute.matmul_ceilings) {
        out += fmt::format("    - {{gpu: {}, precision: {}, tflops: {}}}\n", quoted(rate.gpu_key),
                           topology::precisionName(rate.precision), number(rate.tflops));
      }
    }
    if (!c.compute.attention_rates.empty()) {
      out += "  attention_rates:  # TFLOP/s of executed FLOPs, as cudnn-frontend's sdpa benchmark counts them\n";
      for (const auto& rate : c.compute.attention_rates) {
        std::string measured_at;
        if (!rate.measured_at.empty()) {
          measured_at =
              fmt::format(", measured_at: {{sequences: {}, queries: {}, keys: {}}}", number(rate.measured_at.sequences),
                          number(rate.measured_at.queries), number(rate.measured_at.keys));
        }
        out += fmt::format("    - {{gpu: {}, precision: {}, forward_tflops: {}, backward_tflops: {}{}}}\n",
                           quoted(rate.gpu_key), topology::precisionName(rate.precision), number(rate.forward_tflops),
                           number(rate.backward_tflops), measured_at);
      }
    }
    if (!c.compute.attention_tile_overheads.empty()) {
      out += "  attention_tile_overheads:  # loop iterations per attention CTA (sim/attention_tiles.h)\n";
      for (const auto& row : c.compute.attention_tile_overheads) {
        out += fmt::format("    - {{gpu: {}, forward: {}, backward: {}}}\n", quoted(row.gpu_key),
                           number(row.overhead.forward), number(row.overhead.backward));
      }
    }
    if (!c.compute.memory_efficiency.empty()) {
      out += "  memory_efficiency:\n";
      for (const auto& fraction : c.compute.memory_efficiency) {
        out += fmt::format("    - {{gpu: {}, fraction: {}}}\n", quoted(fraction.gpu_key), number(fraction.fraction));
      }
    }
    if (!c.compute.collective_sms.empty()) {
      out += "  collective_sms:\n";
      for (const auto& count : c.compute.collective_sms) {
        out += fmt::format("    - {{gpu: {}, sms: {}}}\n", quoted(count.gpu_key), number(count.count));
      }
    }
    if (!c.compute.training_rate_fraction.empty()) {
      out += "  training_rate_fraction:  # of the kernels' rates, inside the measured training steps\n";
      for (const auto& fraction : c.compute.training_rate_fraction) {
        out += fmt::format("    - {{gpu: {}, fraction: {}}}\n", quoted(fraction.gpu_key), number(fraction.fraction));
      }
    }
    if (!c.compute.gemm_efficiency.empty()) {
      out += "  gemm_efficiency:\n";
      for (const auto& record : c.compute.gemm_efficiency) {
        out += fmt::format("    - {{gpu: {}, precision: {}, class: {}, efficiency: {}, shapes: {}}}\n",
                           quoted(record.gpu), topology::precisionName(record.precision), record.shape_class,
                           number(record.efficiency), record.shapes);
      }
    }
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
                         sim::collectiveOpName(correction.op), correction.group_size, correction.nodes,
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
    Calibration calibration = read(root);
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
    Calibration calibration = read(root);
    calibration.file = path;
    return calibration;
  });
}

}  // namespace trainsim::validate
