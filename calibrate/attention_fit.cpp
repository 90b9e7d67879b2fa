#include "calibrate/attention_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace trainsim::calibrate {
namespace {

bool isCudnn(const std::string& backend) {
  return backend == "cudnn" || backend == "cudnn_fe" || backend == "pyt_cudnn";
}

bool isSixteenBit(const std::string& data_type) {
  return data_type == "bf16" || data_type == "bfloat16" || data_type == "fp16" || data_type == "float16";
}

void add(AttentionPassTotals& totals, std::vector<AttentionSample>& samples, const AttentionBenchmarkRow& row,
         const std::optional<AttentionPassSample>& sample) {
  if (!sample) return;
  totals.tflops_ms += sample->tflops * sample->time_ms;
  totals.ms += sample->time_ms;
  ++totals.rows;
  samples.push_back(
      {{static_cast<double>(row.sequences), static_cast<double>(row.q_seqlen), static_cast<double>(row.kv_seqlen)},
       sample->tflops,
       sample->time_ms});
}

struct PassModel {
  double full_tflops = 0.0;
  double overhead = 0.0;
  bool fitted = false;
  double error = 0.0;
};

// One pass's full rate and fixed cost (see calibrateAttention in the header).
PassModel fitPass(const std::vector<AttentionSample>& samples, perf::AttentionPass pass, int sms, double start) {
  std::vector<std::tuple<double, double, double>> problems;
  for (const auto& s : samples) problems.emplace_back(s.shape.sequences, s.shape.queries, s.shape.keys);
  std::sort(problems.begin(), problems.end());
  problems.erase(std::unique(problems.begin(), problems.end()), problems.end());
  const auto efficiencies = [&](double overhead) {
    std::vector<double> e;
    for (const auto& s : samples) e.push_back(perf::attentionTileEfficiency(s.shape, pass, sms, overhead));
    return e;
  };
  PassModel model;
  model.overhead = start;
  if (problems.size() >= 3) {
    double best = std::numeric_limits<double>::infinity();
    for (int quarter = 0; quarter <= 64; ++quarter) {
      const double overhead = 0.25 * quarter;
      const std::vector<double> e = efficiencies(overhead);
      double mean = 0.0;
      for (std::size_t i = 0; i < samples.size(); ++i) mean += std::log(samples[i].tflops / e[i]);
      mean /= static_cast<double>(samples.size());
      double squares = 0.0;
      for (std::size_t i = 0; i < samples.size(); ++i) {
        const double residual = std::log(samples[i].tflops / e[i]) - mean;
        squares += residual * residual;
      }
      if (squares < best - 1e-15) {
        best = squares;
        model.overhead = overhead;
        model.full_tflops = std::exp(mean);
      }
    }
    model.fitted = true;
  } else {
    const std::vector<double> e = efficiencies(start);
    double weighted = 0.0;
    double time = 0.0;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      weighted += samples[i].tflops / e[i] * samples[i].time_ms;
      time += samples[i].time_ms;
    }
    model.full_tflops = weighted / time;
  }
  const std::vector<double> e = efficiencies(model.overhead);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    model.error += std::fabs(model.full_tflops * e[i] / samples[i].tflops - 1.0);
  }
  model.error /= static_cast<double>(samples.size());
  return model;
}

}  // namespace

Expected<AttentionFit> fitAttention(const AttentionBenchmark& benchmark) {
  return catchInputErrors([&] {
    std::vector<const AttentionBenchmarkRow*> causal;
    std::vector<const AttentionBenchmarkRow*> non_causal;
    for (const auto& row : benchmark.rows) {
      if (!isCudnn(row.backend) || !isSixteenBit(row.data_type)) continue;
      if (row.deterministic_backward || row.sliding_window) continue;
      if (row.q_seqlen < kAttentionFitMinSeqlen || row.q_seqlen > kAttentionFitMaxSeqlen) continue;
      if (!row.forward && !row.backward) continue;
      if (row.mask == AttentionMask::kCausal) causal.push_back(&row);
      if (row.mask == AttentionMask::kNone) non_causal.push_back(&row);
    }
    const std::string wanted = fmt::format("cuDNN (cudnn, cudnn_fe, pyt_cudnn), 16-bit (bf16, fp16), q_seqlen {} to {}",
                                           kAttentionFitMinSeqlen, kAttentionFitMaxSeqlen);
    if (causal.empty() && non_causal.empty()) {
      throwInputError(benchmark.source, "",
                      fmt::format("no row to fit the attention rates on ({} rows read): expected successful {} rows",
                                  benchmark.rows.size(), wanted));
    }
    AttentionFit fit;
    fit.source = benchmark.source;
    fit.causal = !causal.empty();
    if (!fit.causal) {
      fit.notes.push_back(fmt::format("{}: no causal row ({}): fitted the {} non-causal one{}", benchmark.source,
                                      wanted, non_causal.size(), non_causal.size() == 1 ? "" : "s"));
    }
    for (const AttentionBenchmarkRow* row : fit.causal ? causal : non_causal) {
      add(fit.forward, fit.forward_samples, *row, row->forward);
      add(fit.backward, fit.backward_samples, *row, row->backward);
      fit.min_q_seqlen = fit.rows == 0 ? row->q_seqlen : std::min(fit.min_q_seqlen, row->q_seqlen);
      fit.max_q_seqlen = std::max(fit.max_q_seqlen, row->q_seqlen);
      ++fit.rows;
    }
    for (const auto& [totals, pass] : {std::pair{&fit.forward, "forward"}, std::pair{&fit.backward, "backward"}}) {
      if (totals->rows == 0) {
        throwInputError(benchmark.source, "",
                        fmt::format("none of the {} rows fitted measures the {} pass (run the benchmark with "
                                    "profile_pass both)",
                                    fit.rows, pass));
      }
    }
    return fit;
  });
}

AttentionCalibration calibrateAttention(const std::vector<AttentionFit>& fits, const std::string& gpu_key, int sms,
                                        perf::AttentionTileOverhead start) {
  std::vector<AttentionSample> forward;
  std::vector<AttentionSample> backward;
  for (const auto& fit : fits) {
    forward.insert(forward.end(), fit.forward_samples.begin(), fit.forward_samples.end());
    backward.insert(backward.end(), fit.backward_samples.begin(), fit.backward_samples.end());
  }
  const PassModel f = fitPass(forward, perf::AttentionPass::kForward, sms, start.forward);
  const PassModel b = fitPass(backward, perf::AttentionPass::kBackward, sms, start.backward);
  AttentionCalibration out;
  out.rate = {gpu_key, topology::Precision::kBf16, f.full_tflops, b.full_tflops};
  out.overhead = {f.overhead, b.overhead};
  out.forward_overhead_fitted = f.fitted;
  out.backward_overhead_fitted = b.fitted;
  out.forward_error = f.error;
  out.backward_error = b.error;
  return out;
}

}  // namespace trainsim::calibrate
