#include "perf/compute_model.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>
#include <utility>

namespace trainsim::perf {

namespace {

using topology::GpuSpec;
using topology::Precision;

bool isSixteenBit(Precision precision) { return precision == Precision::kFp16 || precision == Precision::kBf16; }

// fp16 and bf16 share one tensor-core rate on every catalogued part: a row for one serves both.
bool samePrecisionClass(Precision a, Precision b) { return a == b || (isSixteenBit(a) && isSixteenBit(b)); }

double peakOf(const GpuSpec& gpu, Precision precision) { return gpu.peakTflops(precision).value_or(0.0) * 1e12; }

// FlashAttention runs in fp16/bf16: an fp8 recipe keeps attention in 16 bits (Transformer
// Engine's FP8 recipe covers the linear layers only), and so do the matmuls outside Transformer
// Engine's modules (Megatron's output layer, the MoE router). Other precisions run at their own rate.
Precision sixteenBitPrecision(const GpuSpec& gpu, Precision precision) {
  if (precision != Precision::kFp8) return precision;
  if (gpu.peakTflops(Precision::kBf16)) return Precision::kBf16;
  if (gpu.peakTflops(Precision::kFp16)) return Precision::kFp16;
  return precision;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Why these arguments cannot make a model; empty when they can.
std::string invalidReason(const GpuSpec& gpu, Precision precision, const ComputeParameters& p) {
  const std::string gpu_name = "gpu '" + gpu.key + "'";
  if (peakOf(gpu, precision) <= 0.0) {
    return gpu_name + " has no " + std::string(topology::precisionName(precision)) + " peak rate";
  }
  if (!(gpu.memory_bandwidth_GBps > 0.0)) return gpu_name + " has no memory bandwidth";
  if (p.gemm_tiles.empty()) return "compute parameters: gemm_tiles is empty";
  for (const GemmTile& tile : p.gemm_tiles) {
    if (tile.m <= 0 || tile.n <= 0) return "compute parameters: a GEMM tile has a non-positive side";
  }
  const auto positive = [](double v) { return std::isfinite(v) && v > 0.0; };
  const auto non_negative = [](double v) { return std::isfinite(v) && v >= 0.0; };
  const auto fraction = [](double v) { return std::isfinite(v) && v > 0.0 && v <= 1.0; };
  if (!positive(p.full_rate_operand_reuse)) return "compute parameters: full_rate_operand_reuse must be positive";
  if (!non_negative(p.tile_fixed_overhead_us)) return "compute parameters: tile_fixed_overhead_us must be >= 0";
  for (const MeasuredMicroseconds& t : p.tile_fixed_overhead) {
    if (!non_negative(t.us)) return "compute parameters: tile overhead of '" + t.gpu_key + "' must be >= 0";
  }
  if (!non_negative(p.launch_overhead_us)) return "compute parameters: launch_overhead_us must be >= 0";
  if (p.fallback_compute_units <= 0) return "compute parameters: fallback_compute_units must be positive";
  if (!fraction(p.matmul_ceiling_default) || !fraction(p.memory_efficiency_default) ||
      !fraction(p.elementwise_compute_efficiency) || !fraction(p.attention_to_matmul_default)) {
    return "compute parameters: default efficiencies must lie in (0, 1]";
  }
  for (const MeasuredRate& rate : p.matmul_ceilings) {
    if (!positive(rate.tflops)) return "compute parameters: matmul ceiling of '" + rate.gpu_key + "' must be positive";
  }
  for (const MeasuredAttentionRate& rate : p.attention_rates) {
    if (!positive(rate.forward_tflops) || !positive(rate.backward_tflops)) {
      return "compute parameters: attention rates of '" + rate.gpu_key + "' must be positive";
    }
  }
  for (const MeasuredAttentionRate& rate : p.attention_rates) {
    const AttentionShape& at = rate.measured_at;
    if (!non_negative(at.sequences) || !non_negative(at.queries) || !non_negative(at.keys)) {
      return "compute parameters: the attention problem of '" + rate.gpu_key + "' must have sizes >= 0";
    }
  }
  for (std::size_t i = 0; i < p.attention_rates.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const std::string conflict = attentionRowConflict(p.attention_rates[j], p.attention_rates[i]);
      if (!conflict.empty()) return "compute parameters: attention_rates: expected " + conflict;
    }
  }
  const auto overhead_valid = [&](const AttentionTileOverhead& o) {
    return non_negative(o.forward) && non_negative(o.backward);
  };
  if (!overhead_valid(p.attention_tile_overhead_default)) {
    return "compute parameters: attention_tile_overhead_default must be >= 0";
  }
  for (const MeasuredAttentionTileOverhead& row : p.attention_tile_overheads) {
    if (!overhead_valid(row.overhead)) {
      return "compute parameters: attention tile overhead of '" + row.gpu_key + "' must be >= 0";
    }
  }
  for (const GemmShapeEfficiency& e : p.gemm_shape_efficiency) {
    if (!fraction(e.efficiency)) return "compute parameters: GEMM efficiency of '" + e.gpu_key + "' must lie in (0, 1]";
  }
  for (const MeasuredFraction& f : p.memory_efficiency) {
    if (!fraction(f.fraction)) return "compute parameters: memory efficiency of '" + f.gpu_key + "' must lie in (0, 1]";
  }
  for (const MeasuredFraction& f : p.training_rate_fraction) {
    if (!(std::isfinite(f.fraction) && f.fraction >= kMinTrainingRateFraction &&
          f.fraction <= kMaxTrainingRateFraction)) {
      return "compute parameters: training rate fraction of '" + f.gpu_key + "' must lie in [0.25, 4]";
    }
  }
  const auto share = [](double v) { return std::isfinite(v) && v >= 0.0 && v <= 1.0; };
  if (!share(p.gemm_epilogue_exposed_default))
    return "compute parameters: gemm_epilogue_exposed_default must lie in [0, 1]";
  for (const MeasuredFraction& f : p.gemm_epilogue_exposed) {
    if (!share(f.fraction)) return "compute parameters: GEMM epilogue share of '" + f.gpu_key + "' must lie in [0, 1]";
  }
  // A collective leaves some of the compute units to the compute beside it.
  const int units = gpu.compute_units > 0 ? gpu.compute_units : p.fallback_compute_units;
  const double collective_share = p.collectiveComputeShare(gpu, units);
  if (!(std::isfinite(collective_share) && collective_share >= 0.0 && collective_share < 1.0)) {
    return "compute parameters: the collective SMs of " + gpu_name + " must lie in [0, " + std::to_string(units) +
           ") (its compute units)";
  }
  return {};
}

}  // namespace

std::string_view kernelKindName(KernelKind kind) {
  switch (kind) {
    case KernelKind::kGemm: return "gemm";
    case KernelKind::kAttention: return "attention";
    case KernelKind::kElementwise: return "elementwise";
  }
  return "unknown";
}

std::string gemmShapeClass(const GemmShape& shape) {
  const int64_t smallest = std::min({shape.m, shape.n, shape.k});
  const int64_t largest = std::max({shape.m, shape.n, shape.k});
  std::string which;
  if (largest <= 2 * smallest) {
    which = "cubic";
  } else if (smallest == shape.m) {
    which = "m";
  } else if (smallest == shape.n) {
    which = "n";
  } else {
    which = "k";
  }
  const char* band = smallest < 256 ? "tiny" : smallest < 1024 ? "small" : smallest < 4096 ? "medium" : "large";
  return which + "_" + band;
}

// ---- ComputeParameters lookups --------------------------------------------------------------

double ComputeParameters::matmulCeiling(const GpuSpec& gpu, Precision precision) const {
  const double peak = peakOf(gpu, precision);
  assert(peak > 0.0);
  // 1. A row for this precision (fp16 and bf16 are one class).
  for (const MeasuredRate& rate : matmul_ceilings) {
    if (rate.gpu_key == gpu.key && samePrecisionClass(rate.precision, precision)) {
      return std::min(1.0, rate.tflops * 1e12 / peak);
    }
  }
  // 2. The same GPU's fraction at another matrix precision, 16-bit first.
  const MeasuredRate* other = nullptr;
  for (const MeasuredRate& rate : matmul_ceilings) {
    if (rate.gpu_key != gpu.key || peakOf(gpu, rate.precision) <= 0.0) continue;
    if (other == nullptr || (isSixteenBit(rate.precision) && !isSixteenBit(other->precision))) other = &rate;
  }
  if (other != nullptr) return std::min(1.0, other->tflops * 1e12 / peakOf(gpu, other->precision));
  // 3. No measurement of this GPU.
  return matmul_ceiling_default;
}

namespace {

// The first row of a per-GPU table for `gpu_key` (nullptr when the GPU has none): the rows of
// one GPU are unique once read (perf/parameter_sections.h replaces rather than appends).
template <class Row>
const Row* rowOf(const std::vector<Row>& rows, std::string_view gpu_key) {
  for (const Row& row : rows) {
    if (row.gpu_key == gpu_key) return &row;
  }
  return nullptr;
}

}  // namespace

double ComputeParameters::memoryEfficiency(std::string_view gpu_key) const {
  const MeasuredFraction* row = rowOf(memory_efficiency, gpu_key);
  return row != nullptr ? row->fraction : memory_efficiency_default;
}

double ComputeParameters::trainingRateFraction(std::string_view gpu_key) const {
  const MeasuredFraction* row = rowOf(training_rate_fraction, gpu_key);
  return row != nullptr ? row->fraction : training_rate_fraction_default;
}

double ComputeParameters::tileFixedOverheadSeconds(std::string_view gpu_key) const {
  const MeasuredMicroseconds* row = rowOf(tile_fixed_overhead, gpu_key);
  return (row != nullptr ? row->us : tile_fixed_overhead_us) * 1e-6;
}

double ComputeParameters::gemmEpilogueExposed(std::string_view gpu_key) const {
  const MeasuredFraction* row = rowOf(gemm_epilogue_exposed, gpu_key);
  return row != nullptr ? row->fraction : gemm_epilogue_exposed_default;
}

double ComputeParameters::collectiveComputeShare(const GpuSpec& gpu, int units) const {
  if (const MeasuredCount* row = rowOf(collective_sms, gpu.key)) return row->count / static_cast<double>(units);
  for (const std::string& vendor : collective_offload_vendors) {
    if (vendor == gpu.vendor) return 0.0;
  }
  return collective_compute_share_default;
}

std::string attentionRowConflict(const MeasuredAttentionRate& earlier, const MeasuredAttentionRate& later) {
  if (earlier.gpu_key != later.gpu_key || earlier.precision != later.precision) return "";
  if (earlier.measured_at.empty() || later.measured_at.empty()) {
    return "measured_at on every row of a GPU and precision listed more than once (" + later.gpu_key +
           ": rates over sequence length)";
  }
  if (earlier.measured_at.queries == later.measured_at.queries) {
    return "a measured_at.queries of its own (" + later.gpu_key +
           " already has a row measured at that sequence length)";
  }
  return "";
}

std::vector<MeasuredAttentionEfficiency> ComputeParameters::attentionEfficiencies(const GpuSpec& gpu,
                                                                                  Precision precision) const {
  // The rows in force: those of the precision of the GPU's first row with a peak at it.
  const MeasuredAttentionRate* first = nullptr;
  for (const MeasuredAttentionRate& rate : attention_rates) {
    if (rate.gpu_key == gpu.key && peakOf(gpu, rate.precision) > 0.0) {
      first = &rate;
      break;
    }
  }
  std::vector<MeasuredAttentionEfficiency> rows;
  if (first == nullptr) {
    const double fraction = attention_to_matmul_default * matmulCeiling(gpu, precision);
    rows.push_back({{fraction, fraction}, attention_default_measured_at});
    return rows;
  }
  const double rate_peak = peakOf(gpu, first->precision);
  for (const MeasuredAttentionRate& rate : attention_rates) {
    if (rate.gpu_key != gpu.key || rate.precision != first->precision) continue;
    rows.push_back({{std::min(1.0, rate.forward_tflops * 1e12 / rate_peak),
                     std::min(1.0, rate.backward_tflops * 1e12 / rate_peak)},
                    rate.measured_at});
  }
  return rows;
}

AttentionTileOverhead ComputeParameters::attentionTileOverhead(std::string_view gpu_key) const {
  const MeasuredAttentionTileOverhead* row = rowOf(attention_tile_overheads, gpu_key);
  return row != nullptr ? row->overhead : attention_tile_overhead_default;
}

double powerLimitClockRatio(const GpuSpec& gpu, const ComputeParameters& parameters) {
  return std::min(1.0, std::pow(gpu.powerLimitRatio(), parameters.power_clock_exponent));
}

// ---- ComputeModel ----------------------------------------------------------------------------

Expected<ComputeModel> ComputeModel::create(const GpuSpec& gpu, Precision precision, ComputeParameters parameters) {
  std::string reason = invalidReason(gpu, precision, parameters);
  if (!reason.empty()) {
    return Error{ExitCode::kInvalidInput, "", "precision", std::move(reason)};
  }
  return ComputeModel(gpu, precision, std::move(parameters));
}

ComputeModel::ComputeModel(const GpuSpec& gpu, Precision precision, ComputeParameters parameters)
    : parameters_(std::move(parameters)), gpu_key_(gpu.key), precision_(precision) {
  assert(invalidReason(gpu, precision, parameters_).empty());
  compute_units_ = gpu.compute_units > 0 ? gpu.compute_units : parameters_.fallback_compute_units;
  peak_flops_ = peakOf(gpu, precision);
  // Element-wise work runs on the CUDA cores / vector units: the catalog's fp32 rate.
  const double fp32 = peakOf(gpu, Precision::kFp32);
  vector_peak_flops_ = fp32 > 0.0 ? fp32 : peak_flops_;
  const Precision sixteen_bit = sixteenBitPrecision(gpu, precision);
  attention_peak_flops_ = peakOf(gpu, sixteen_bit);
  matmul_ceiling_ = parameters_.matmulCeiling(gpu, precision);
  sixteen_bit_ = {sixteen_bit, peakOf(gpu, sixteen_bit), parameters_.matmulCeiling(gpu, sixteen_bit)};
  attention_tile_overhead_ = parameters_.attentionTileOverhead(gpu.key);
  for (const MeasuredAttentionEfficiency& row : parameters_.attentionEfficiencies(gpu, sixteen_bit)) {
    AttentionPoint point{row.efficiency, row.measured_at, {}};
    for (const AttentionPass pass : {AttentionPass::kForward, AttentionPass::kBackward}) {
      const double tiles =
          attentionTileEfficiency(row.measured_at, pass, compute_units_, attention_tile_overhead_.of(pass));
      (pass == AttentionPass::kForward ? point.tiles.forward : point.tiles.backward) = tiles;
    }
    attention_points_.push_back(point);
  }
  attention_efficiency_ = attention_points_.front().efficiency;
  // Over sequence length in order; the first row listed stays the reference.
  std::stable_sort(
      attention_points_.begin(), attention_points_.end(),
      [](const AttentionPoint& a, const AttentionPoint& b) { return a.measured_at.queries < b.measured_at.queries; });
  achievable_bandwidth_ = gpu.memory_bandwidth_GBps * 1e9 * parameters_.memoryEfficiency(gpu.key);
  launch_overhead_s_ = parameters_.launch_overhead_us * 1e-6;
  training_rate_fraction_ = parameters_.trainingRateFraction(gpu.key);
  clock_ratio_ = powerLimitClockRatio(gpu, parameters_);
  gemm_epilogue_exposed_ = parameters_.gemmEpilogueExposed(gpu.key);
  tile_fixed_overhead_s_ = parameters_.tileFixedOverheadSeconds(gpu.key);
  collective_compute_share_ = parameters_.collectiveComputeShare(gpu, compute_units_);
}

GemmPlan ComputeModel::gemmPlan(const GemmShape& shape, GemmPrecision precision, int sms) const {
  const MatmulRate rate =
      precision == GemmPrecision::kSixteenBit ? sixteen_bit_ : MatmulRate{precision_, peak_flops_, matmul_ceiling_};
  assert(shape.m >= 0 && shape.n >= 0 && shape.k >= 0 && shape.batch >= 0);
  GemmPlan best;
  if (shape.m == 0 || shape.n == 0 || shape.k == 0 || shape.batch == 0) {
    best.tile = parameters_.gemm_tiles.front();
    return best;  // nothing to multiply: no tensor-core time
  }
  assert(sms >= 0 && sms <= compute_units_);
  const int64_t units = sms > 0 ? sms : compute_units_;
  const double sm_rate = rate.peak_flops * rate.ceiling / compute_units_;  // FLOP/s per SM
  const double fixed = tile_fixed_overhead_s_;
  const double k = static_cast<double>(shape.k);
  bool first = true;
  for (const GemmTile& tile : parameters_.gemm_tiles) {
    const int64_t tiles = ceilDiv(shape.m, tile.m) * ceilDiv(shape.n, tile.n) * shape.batch;
    const int64_t waves = ceilDiv(tiles, units);
    const double reuse = static_cast<double>(tile.m * tile.n) / static_cast<double>(tile.m + tile.n);
    const double derating = std::min(1.0, reuse / parameters_.full_rate_operand_reuse);
    const double tile_seconds = 2.0 * static_cast<double>(tile.m * tile.n) * k / (sm_rate * derating) + fixed;
    const double seconds = static_cast<double>(waves) * tile_seconds;
    // Strictly shorter wins: ties keep the earlier (larger) tile, deterministically.
    if (first || seconds < best.seconds) {
      best = GemmPlan{tile, tiles, waves, derating, seconds, 0.0};
      first = false;
    }
  }
  best.efficiency = shape.flops() / (best.seconds * rate.peak_flops);
  const std::string shape_class = parameters_.gemm_shape_efficiency.empty() ? "" : gemmShapeClass(shape);
  for (const GemmShapeEfficiency& measured : parameters_.gemm_shape_efficiency) {
    if (measured.gpu_key == gpu_key_ && samePrecisionClass(measured.precision, rate.precision) &&
        measured.shape_class == shape_class) {
      // Measured on the whole GPU: on fewer SMs, proportionally slower.
      best.seconds = shape.flops() / (rate.peak_flops * measured.efficiency) * static_cast<double>(compute_units_) /
                     static_cast<double>(units);
      best.efficiency = shape.flops() / (best.seconds * rate.peak_flops);
      break;
    }
  }
  return best;
}

double ComputeModel::finish(double compute_seconds, double bytes, double exposed_memory_seconds) const {
  assert(compute_seconds >= 0.0 && bytes >= 0.0 && exposed_memory_seconds >= 0.0);
  const double memory_seconds = bytes / achievable_bandwidth_;
  const double busy = compute_seconds / clock_ratio_ + exposed_memory_seconds;
  return (std::max(busy, memory_seconds) + launch_overhead_s_) / training_rate_fraction_;
}

double ComputeModel::kernelGapsTime(double kernels) const {
  assert(kernels >= 0.0);
  return kernels * launch_overhead_s_ / training_rate_fraction_;
}

double ComputeModel::gemmTime(const GemmShape& shape, double bytes, double epilogue_bytes, GemmPrecision precision,
                              int sms) const {
  assert(epilogue_bytes >= 0.0);
  const double epilogue = gemm_epilogue_exposed_ * epilogue_bytes / achievable_bandwidth_;
  return finish(gemmPlan(shape, precision, sms).seconds, bytes, epilogue);
}

double ComputeModel::attentionShapeFactor(const AttentionShape& shape, AttentionPass pass) const {
  if (shape.empty()) return 1.0;
  return unboundedAttentionEfficiency(shape, pass) / attention_efficiency_.of(pass);
}

double ComputeModel::unboundedAttentionEfficiency(const AttentionShape& shape, AttentionPass pass) const {
  const double tiles = attentionTileEfficiency(shape, pass, compute_units_, attention_tile_overhead_.of(pass));
  const auto scaled = [&](const AttentionPoint& point) {
    return point.efficiency.of(pass) * tiles / point.tiles.of(pass);
  };
  const std::vector<AttentionPoint>& points = attention_points_;
  if (points.size() == 1 || shape.queries <= points.front().measured_at.queries) return scaled(points.front());
  if (shape.queries >= points.back().measured_at.queries) return scaled(points.back());
  const auto above =
      std::upper_bound(points.begin(), points.end(), shape.queries,
                       [](double queries, const AttentionPoint& point) { return queries < point.measured_at.queries; });
  const AttentionPoint& high = *above;
  const AttentionPoint& low = *(above - 1);
  const double weight =
      std::log(shape.queries / low.measured_at.queries) / std::log(high.measured_at.queries / low.measured_at.queries);
  return std::exp((1.0 - weight) * std::log(scaled(low)) + weight * std::log(scaled(high)));
}

double ComputeModel::attentionTime(double flops, double bytes, AttentionPass pass, const AttentionShape& shape) const {
  assert(flops >= 0.0);
  // Never above the peak.
  const double efficiency =
      std::min(1.0, shape.empty() ? attention_efficiency_.of(pass) : unboundedAttentionEfficiency(shape, pass));
  return finish(flops / (attention_peak_flops_ * efficiency), bytes);
}

double ComputeModel::elementwiseTime(double bytes, double flops) const {
  assert(flops >= 0.0);
  return finish(flops / (vector_peak_flops_ * parameters_.elementwise_compute_efficiency), bytes);
}

double ComputeModel::time(const KernelCost& cost) const {
  assert(cost.flops >= 0.0 && cost.bytes >= 0.0);
  if (cost.gemm) {
    assert(cost.kind == KernelKind::kGemm || cost.kind == KernelKind::kElementwise);
    const GemmPlan plan = gemmPlan(*cost.gemm);
    const double shape_flops = cost.gemm->flops();
    // The plan's time is for the shape's 2mnk; other stated FLOPs scale it.
    const double compute =
        cost.flops > 0.0 && shape_flops > 0.0 ? plan.seconds * cost.flops / shape_flops : plan.seconds;
    return finish(compute, cost.bytes);
  }
  switch (cost.kind) {
    case KernelKind::kGemm: return finish(cost.flops / (peak_flops_ * matmul_ceiling_), cost.bytes);
    case KernelKind::kAttention: return attentionTime(cost.flops, cost.bytes, cost.attention_pass);
    case KernelKind::kElementwise: return elementwiseTime(cost.bytes, cost.flops);
  }
  return elementwiseTime(cost.bytes, cost.flops);
}

sim::SimTime ComputeModel::duration(const KernelCost& cost) const {
  return sim::ceilPicoseconds(time(cost) * sim::kPicosecondsPerSecond);
}

}  // namespace trainsim::perf
