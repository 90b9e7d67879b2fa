#include "perf/parameter_sections.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "perf/parameter_names.h"

namespace trainsim::perf {
namespace {

constexpr std::array<std::string_view, kComputeTableKeyCount> kComputeTableKeys = {
    "matmul_ceilings",
    "memory_efficiency",
    "gemm_efficiency",
    "collective_sms",
    "attention_rates",
    "attention_tile_overheads",
    "training_rate_fraction",
    "tile_fixed_overhead",
    "gemm_epilogue_exposed",
    "gemm_tiles",
    "collective_offload_vendors",
};

topology::Precision readPrecision(const ConfigNode& node) {
  const auto precision = topology::parsePrecision(node.asString());
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

template <class Row, class Read>
std::vector<Row> readRows(const ConfigNode& table, std::initializer_list<std::string_view> keys, Read read) {
  std::vector<Row> rows;
  for (const auto& entry : table.elements()) {
    entry.allowKeys(keys);
    rows.push_back(read(entry));
  }
  return rows;
}

// Several rows of one GPU and precision are its rates measured over sequence length
// (attentionRowConflict): refused at the row that breaks the rule.
void refuseAmbiguousAttentionRows(const ConfigNode& table, const std::vector<MeasuredAttentionRate>& rows) {
  const std::vector<ConfigNode> entries = table.elements();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const std::string conflict = attentionRowConflict(rows[j], rows[i]);
      if (!conflict.empty()) entries[i].failExpected(conflict);
    }
  }
}

void readComputeTables(const ConfigNode& compute, ComputeSection& section) {
  if (auto table = compute.optionalChild("training_rate_fraction")) {
    section.training_rate_fraction = readRows<MeasuredFraction>(*table, {"gpu", "fraction"}, [](const ConfigNode& e) {
      return MeasuredFraction{e.child("gpu").asString(),
                              e.child("fraction").asNumberIn(kMinTrainingRateFraction, kMaxTrainingRateFraction)};
    });
  }
  if (auto table = compute.optionalChild("matmul_ceilings")) {
    section.matmul_ceilings = readRows<MeasuredRate>(*table, {"gpu", "precision", "tflops"}, [](const ConfigNode& e) {
      return MeasuredRate{e.child("gpu").asString(), readPrecision(e.child("precision")),
                          e.child("tflops").asPositiveNumber()};
    });
  }
  if (auto table = compute.optionalChild("attention_rates")) {
    section.attention_rates = readRows<MeasuredAttentionRate>(
        *table, {"gpu", "precision", "forward_tflops", "backward_tflops", "measured_at"}, [](const ConfigNode& e) {
          MeasuredAttentionRate rate{e.child("gpu").asString(), readSixteenBitPrecision(e.child("precision")),
                                     e.child("forward_tflops").asPositiveNumber(),
                                     e.child("backward_tflops").asPositiveNumber()};
          // The problem the rates were measured on; without it they are the kernel's full rate.
          if (auto at = e.optionalChild("measured_at")) {
            at->allowKeys({"sequences", "queries", "keys"});
            rate.measured_at = {at->child("sequences").asPositiveNumber(), at->child("queries").asPositiveNumber(),
                                at->child("keys").asPositiveNumber()};
          }
          return rate;
        });
    refuseAmbiguousAttentionRows(*table, section.attention_rates);
  }
  if (auto table = compute.optionalChild("attention_tile_overheads")) {
    section.attention_tile_overheads =
        readRows<MeasuredAttentionTileOverhead>(*table, {"gpu", "forward", "backward"}, [](const ConfigNode& e) {
          return MeasuredAttentionTileOverhead{
              e.child("gpu").asString(),
              {e.child("forward").asNonNegativeNumber(), e.child("backward").asNonNegativeNumber()}};
        });
  }
  if (auto table = compute.optionalChild("memory_efficiency")) {
    section.memory_efficiency = readRows<MeasuredFraction>(*table, {"gpu", "fraction"}, [](const ConfigNode& e) {
      return MeasuredFraction{e.child("gpu").asString(), readFraction(e.child("fraction"))};
    });
  }
  if (auto table = compute.optionalChild("collective_sms")) {
    // A sanity bound above every catalog GPU's compute units (MI300X: 304); the model checks
    // the GPU's own count when the parameters are used.
    section.collective_sms = readRows<MeasuredCount>(*table, {"gpu", "sms"}, [](const ConfigNode& e) {
      return MeasuredCount{e.child("gpu").asString(), e.child("sms").asNumberIn(0.0, 1024.0)};
    });
  }
  if (auto table = compute.optionalChild("gemm_efficiency")) {
    section.gemm_efficiency = readRows<GemmClassRecord>(
        *table, {"gpu", "precision", "class", "efficiency", "shapes"}, [](const ConfigNode& e) {
          return GemmClassRecord{e.child("gpu").asString(), readPrecision(e.child("precision")),
                                 e.child("class").asString(), readFraction(e.child("efficiency")),
                                 static_cast<int>(e.child("shapes").asPositiveInteger())};
        });
  }
}

void readComputeLists(const ConfigNode& compute, ComputeSection& section) {
  if (auto table = compute.optionalChild("tile_fixed_overhead")) {
    section.tile_fixed_overhead = readRows<MeasuredMicroseconds>(*table, {"gpu", "us"}, [](const ConfigNode& e) {
      return MeasuredMicroseconds{e.child("gpu").asString(), e.child("us").asNonNegativeNumber()};
    });
  }
  if (auto table = compute.optionalChild("gemm_epilogue_exposed")) {
    section.gemm_epilogue_exposed = readRows<MeasuredFraction>(*table, {"gpu", "fraction"}, [](const ConfigNode& e) {
      return MeasuredFraction{e.child("gpu").asString(), e.child("fraction").asNumberIn(0.0, 1.0)};
    });
  }
  if (auto table = compute.optionalChild("gemm_tiles")) {
    section.gemm_tiles = readRows<GemmTile>(*table, {"m", "n"}, [](const ConfigNode& e) {
      return GemmTile{e.child("m").asIntegerIn(1, 65536), e.child("n").asIntegerIn(1, 65536)};
    });
    if (section.gemm_tiles->empty()) table->failExpected("at least one {m, n} tile");
  }
  if (auto table = compute.optionalChild("collective_offload_vendors")) {
    std::vector<std::string> vendors;
    for (const auto& entry : table->elements()) vendors.push_back(entry.asString());
    section.collective_offload_vendors = std::move(vendors);
  }
}

// Writes `values` (their names relative to the mapping being written) as YAML flow mappings:
// "{ring: {LL: 7}}".
std::string flowMapping(std::span<const std::pair<std::string, double>> values) {
  std::vector<std::string> keys;
  for (const auto& [path, value] : values) {
    const std::string key = path.substr(0, path.find('.'));
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  std::string out = "{";
  for (const std::string& key : keys) {
    std::vector<std::pair<std::string, double>> inner;
    std::optional<double> leaf;
    for (const auto& [path, value] : values) {
      if (path == key) leaf = value;
      if (path.starts_with(key + ".")) inner.emplace_back(path.substr(key.size() + 1), value);
    }
    out += (out.size() > 1 ? ", " : "") + key + ": " + (leaf ? yamlNumber(*leaf) : flowMapping(inner));
  }
  return out + "}";
}

// The body lines of named values: a scalar per line, a table's entries as one flow mapping,
// a per-GPU parameter's rows as one flow list; each at the place of its first value.
std::string namedValuesYaml(std::span<const ParameterValue> values) {
  std::vector<std::string> keys;
  for (const ParameterValue& value : values) {
    const std::string key = value.name.substr(0, value.name.find('.'));
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  std::string out;
  for (const std::string& key : keys) {
    std::vector<std::pair<std::string, double>> entries;
    std::vector<std::string> rows;
    for (const ParameterValue& value : values) {
      if (!value.gpu_key.empty() && value.name == key) {
        rows.push_back(fmt::format("{{gpu: {}, fraction: {}}}", yamlQuoted(value.gpu_key), yamlNumber(value.value)));
      } else if (value.name == key) {
        out += fmt::format("  {}: {}\n", key, yamlNumber(value.value));
      } else if (value.name.starts_with(key + ".")) {
        entries.emplace_back(value.name.substr(key.size() + 1), value.value);
      }
    }
    if (!rows.empty()) out += fmt::format("  {}: [{}]\n", key, fmt::join(rows, ", "));
    if (!entries.empty()) out += fmt::format("  {}: {}\n", key, flowMapping(entries));
  }
  return out;
}

template <class Row, class Same>
void replaceRows(std::vector<Row>& rows, const std::vector<Row>& replacements, Same same) {
  for (const Row& replacement : replacements) {
    std::erase_if(rows, [&](const Row& row) { return same(row, replacement); });
    rows.push_back(replacement);
  }
}

}  // namespace

double readInRange(const ConfigNode& node, ParameterRange range) {
  if (range == ParameterRange::kPositiveInteger) return static_cast<double>(node.asIntegerIn(1, 1'000'000'000));
  const double value = node.asNumber();
  if (!inRange(range, value)) node.failExpected(std::string(rangeDescription(range)));
  return value;
}

bool ComputeSection::empty() const {
  return matmul_ceilings.empty() && memory_efficiency.empty() && gemm_efficiency.empty() && collective_sms.empty() &&
         attention_rates.empty() && attention_tile_overheads.empty() && training_rate_fraction.empty() &&
         tile_fixed_overhead.empty() && gemm_epilogue_exposed.empty() && !gemm_tiles && !collective_offload_vendors &&
         values.empty();
}

std::span<const std::string_view> computeTableKeys() { return kComputeTableKeys; }

std::vector<ParameterValue> readCommunicationSection(const ConfigNode& section) {
  std::vector<ParameterValue> values;
  detail::readNamed(section, "", communicationParameterNames(), {}, values);
  return values;
}

ComputeSection readComputeSection(const ConfigNode& section) {
  ComputeSection result;
  detail::readNamed(section, "", computeParameterNames(), kComputeTableKeys, result.values);
  readComputeTables(section, result);
  readComputeLists(section, result);
  return result;
}

std::string communicationSectionYaml(std::span<const ParameterValue> values) { return namedValuesYaml(values); }

std::string computeSectionYaml(const ComputeSection& c) {
  std::string out;
  if (!c.matmul_ceilings.empty()) {
    out += "  matmul_ceilings:\n";
    for (const auto& rate : c.matmul_ceilings) {
      out += fmt::format("    - {{gpu: {}, precision: {}, tflops: {}}}\n", yamlQuoted(rate.gpu_key),
                         topology::precisionName(rate.precision), yamlNumber(rate.tflops));
    }
  }
  if (!c.attention_rates.empty()) {
    out += "  attention_rates:  # TFLOP/s of executed FLOPs, as cudnn-frontend's sdpa benchmark counts them\n";
    for (const auto& rate : c.attention_rates) {
      std::string measured_at;
      if (!rate.measured_at.empty()) {
        measured_at = fmt::format(", measured_at: {{sequences: {}, queries: {}, keys: {}}}",
                                  yamlNumber(rate.measured_at.sequences), yamlNumber(rate.measured_at.queries),
                                  yamlNumber(rate.measured_at.keys));
      }
      out += fmt::format("    - {{gpu: {}, precision: {}, forward_tflops: {}, backward_tflops: {}{}}}\n",
                         yamlQuoted(rate.gpu_key), topology::precisionName(rate.precision),
                         yamlNumber(rate.forward_tflops), yamlNumber(rate.backward_tflops), measured_at);
    }
  }
  if (!c.attention_tile_overheads.empty()) {
    out += "  attention_tile_overheads:  # loop iterations per attention CTA (perf/attention_tiles.h)\n";
    for (const auto& row : c.attention_tile_overheads) {
      out += fmt::format("    - {{gpu: {}, forward: {}, backward: {}}}\n", yamlQuoted(row.gpu_key),
                         yamlNumber(row.overhead.forward), yamlNumber(row.overhead.backward));
    }
  }
  const auto fractions = [&](const char* header, const std::vector<MeasuredFraction>& rows) {
    if (rows.empty()) return;
    out += header;
    for (const auto& row : rows) {
      out += fmt::format("    - {{gpu: {}, fraction: {}}}\n", yamlQuoted(row.gpu_key), yamlNumber(row.fraction));
    }
  };
  fractions("  memory_efficiency:\n", c.memory_efficiency);
  if (!c.collective_sms.empty()) {
    out += "  collective_sms:\n";
    for (const auto& count : c.collective_sms) {
      out += fmt::format("    - {{gpu: {}, sms: {}}}\n", yamlQuoted(count.gpu_key), yamlNumber(count.count));
    }
  }
  fractions("  training_rate_fraction:  # of the kernels' rates, inside the measured training steps\n",
            c.training_rate_fraction);
  if (!c.gemm_efficiency.empty()) {
    out += "  gemm_efficiency:\n";
    for (const auto& record : c.gemm_efficiency) {
      out += fmt::format("    - {{gpu: {}, precision: {}, class: {}, efficiency: {}, shapes: {}}}\n",
                         yamlQuoted(record.gpu), topology::precisionName(record.precision), record.shape_class,
                         yamlNumber(record.efficiency), record.shapes);
    }
  }
  out += namedValuesYaml(c.values);
  if (c.gemm_tiles) {
    out += "  gemm_tiles:\n";
    for (const auto& tile : *c.gemm_tiles) out += fmt::format("    - {{m: {}, n: {}}}\n", tile.m, tile.n);
  }
  if (!c.tile_fixed_overhead.empty()) {
    out += "  tile_fixed_overhead:  # microseconds per GEMM tile\n";
    for (const auto& row : c.tile_fixed_overhead) {
      out += fmt::format("    - {{gpu: {}, us: {}}}\n", yamlQuoted(row.gpu_key), yamlNumber(row.us));
    }
  }
  fractions("  gemm_epilogue_exposed:\n", c.gemm_epilogue_exposed);
  if (c.collective_offload_vendors) {
    std::vector<std::string> vendors;
    for (const auto& vendor : *c.collective_offload_vendors) vendors.push_back(yamlQuoted(vendor));
    out += fmt::format("  collective_offload_vendors: [{}]\n", fmt::join(vendors, ", "));
  }
  return out;
}

void applyCommunicationValues(std::span<const ParameterValue> values, CommunicationParameters& parameters) {
  for (const ParameterValue& value : values) {
    const auto* name = findCommunicationParameter(value.name);
    // The readers reject unknown names; values built in code must use known ones.
    if (name == nullptr) throw std::logic_error("unknown communication parameter " + value.name);
    name->set(parameters, value.gpu_key, value.value);
  }
}

void applyComputeSection(const ComputeSection& section, ComputeParameters& parameters) {
  replaceRows(parameters.matmul_ceilings, section.matmul_ceilings, [](const MeasuredRate& a, const MeasuredRate& b) {
    return a.gpu_key == b.gpu_key && a.precision == b.precision;
  });
  // A GPU and precision the section gives replaces all of its rows (one, or its rates over
  // sequence length). The model reads the rows of a GPU's first precision listed
  // (attentionEfficiencies): a calibrated fp16 row goes before a default bf16 one of the same
  // GPU, so that it is the one in force.
  auto& attention_rows = parameters.attention_rates;
  for (const auto& rate : section.attention_rates) {
    std::erase_if(attention_rows, [&](const MeasuredAttentionRate& row) {
      return row.gpu_key == rate.gpu_key && row.precision == rate.precision;
    });
  }
  attention_rows.insert(attention_rows.begin(), section.attention_rates.begin(), section.attention_rates.end());
  const auto same_gpu = [](const auto& a, const auto& b) { return a.gpu_key == b.gpu_key; };
  replaceRows(parameters.attention_tile_overheads, section.attention_tile_overheads, same_gpu);
  replaceRows(parameters.memory_efficiency, section.memory_efficiency, same_gpu);
  replaceRows(parameters.collective_sms, section.collective_sms, same_gpu);
  replaceRows(parameters.training_rate_fraction, section.training_rate_fraction, same_gpu);
  replaceRows(parameters.tile_fixed_overhead, section.tile_fixed_overhead, same_gpu);
  replaceRows(parameters.gemm_epilogue_exposed, section.gemm_epilogue_exposed, same_gpu);
  for (const auto& record : section.gemm_efficiency) {
    auto& rows = parameters.gemm_shape_efficiency;
    std::erase_if(rows, [&](const GemmShapeEfficiency& row) {
      return row.gpu_key == record.gpu && row.precision == record.precision && row.shape_class == record.shape_class;
    });
    rows.push_back({record.gpu, record.precision, record.shape_class, record.efficiency});
  }
  if (section.gemm_tiles) parameters.gemm_tiles = *section.gemm_tiles;
  if (section.collective_offload_vendors) parameters.collective_offload_vendors = *section.collective_offload_vendors;
  for (const ParameterValue& value : section.values) {
    const auto* name = findComputeParameter(value.name);
    if (name == nullptr) throw std::logic_error("unknown compute parameter " + value.name);
    name->set(parameters, value.gpu_key, value.value);
  }
}

std::string yamlQuoted(const std::string& text) {
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

std::string yamlNumber(double value) {
  if (!std::isfinite(value)) throw std::logic_error("a parameter value is not finite");
  return fmt::format("{}", value);
}

}  // namespace trainsim::perf
