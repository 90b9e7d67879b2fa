#include "calibrate/harness/harness_results_writer.h"

#include <fmt/format.h>

#include <strings.h>

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <iostream>

#include "base/atomic_file.h"

namespace trainsim::harness {

namespace {

// A string as a YAML scalar: plain when it is an identifier-like word that no YAML reader
// turns into a boolean, null or number; double-quoted (with escapes) otherwise.
std::string yamlString(const std::string& text, bool always_quote = false) {
  bool plain = !always_quote && !text.empty() && std::isalpha(static_cast<unsigned char>(text.front()));
  for (const char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') plain = false;
  }
  static constexpr const char* kReserved[] = {"true", "false", "yes", "no", "on", "off", "null", "y", "n"};
  for (const char* word : kReserved) {
    if (strcasecmp(text.c_str(), word) == 0) plain = false;
  }
  if (plain) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': quoted += "\\\""; break;
      case '\\': quoted += "\\\\"; break;
      case '\n': quoted += "\\n"; break;
      case '\t': quoted += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          quoted += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        } else {
          quoted += c;
        }
    }
  }
  return quoted + "\"";
}

void writeHeader(std::string& out, const char* tool, const std::string& gpu, const std::string& cuda_runtime) {
  out += fmt::format("format: {}\n", kResultsFormat);
  out += fmt::format("tool: {}\n", tool);
  out += fmt::format("gpu: {}\n", yamlString(gpu, true));
  out += fmt::format("cuda_runtime: {}\n", yamlString(cuda_runtime, true));
}

}  // namespace

std::string formatDecimal(double value, int significant) {
  assert(std::isfinite(value) && significant >= 1);
  if (value == 0.0) return "0";
  const int exponent = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  const int decimals = std::clamp(significant - 1 - exponent, 0, 17);
  std::string text = fmt::format("{:.{}f}", value, decimals);
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  if (text == "-0") text = "0";
  return text;
}

std::string ncclResultsYaml(const NcclResults& results) {
  std::string out;
  writeHeader(out, kNcclToolName, results.gpu, results.cuda_runtime);
  out += fmt::format("nccl_version: {}\n", yamlString(results.nccl_version, true));
  out += fmt::format("ranks: {}\nnodes: {}\ngpus_per_node: {}\n", results.ranks, results.nodes, results.gpus_per_node);
  if (results.collectives.empty()) {
    out += "collectives: []\n";
    return out;
  }
  out += "collectives:\n";
  for (const CollectiveSeries& series : results.collectives) {
    out += fmt::format("  - op: {}\n", perf::collectiveOpName(series.op));
    out += fmt::format("    layout: {}\n", layoutName(series.layout));
    out += fmt::format("    group_size: {}\n    nodes: {}\n    gpus_per_node: {}\n", series.group_size, series.nodes,
                       series.gpus_per_node);
    out += fmt::format("    dtype: {}\n", topology::precisionName(series.dtype));
    out += fmt::format("    warmup: {}\n    iterations: {}\n", series.warmup, series.iterations);
    if (series.results.empty()) {
      out += "    results: []\n";
      continue;
    }
    out += "    results:\n";
    for (const CollectiveSample& sample : series.results) {
      out += fmt::format("      - {{bytes: {}, time_us: {}, algbw_GBps: {}, busbw_GBps: {}}}\n", sample.bytes,
                         formatDecimal(sample.time_us), formatDecimal(sample.algbw_GBps),
                         formatDecimal(sample.busbw_GBps));
    }
  }
  return out;
}

std::string gemmResultsYaml(const GemmResults& results) {
  std::string out;
  writeHeader(out, kGemmToolName, results.gpu, results.cuda_runtime);
  out += fmt::format("precision: {}\n", topology::precisionName(results.precision));
  out += results.gemm.empty() ? "gemm: []\n" : "gemm:\n";
  for (const GemmSample& sample : results.gemm) {
    const std::string batch = sample.batch == 1 ? "" : fmt::format(", batch: {}", sample.batch);
    out += fmt::format("  - {{m: {}, n: {}, k: {}{}, time_us: {}, tflops: {}, source: {}}}\n", sample.m, sample.n,
                       sample.k, batch, formatDecimal(sample.time_us), formatDecimal(sample.tflops),
                       yamlString(sample.source));
  }
  out += results.memory_bandwidth.empty() ? "memory_bandwidth: []\n" : "memory_bandwidth:\n";
  for (const MemoryBandwidthSample& sample : results.memory_bandwidth) {
    out += fmt::format("  - {{bytes: {}, time_us: {}, GBps: {}}}\n", sample.bytes, formatDecimal(sample.time_us),
                       formatDecimal(sample.GBps));
  }
  return out;
}

std::optional<Error> writeResultsFile(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text << std::flush;
    if (!std::cout) return Error{ExitCode::kInternal, "", "", "cannot write the results to stdout"};
    return std::nullopt;
  }
  // Whole or not at all: a results file cut short by a full disk or a killed job would read
  // as a shorter sweep.
  return writeFileAtomically(path, [&](std::ostream& out) { out << text; });
}

}  // namespace trainsim::harness
