// Forward and backward fused-attention rates (perf::MeasuredAttentionRate) from cudnn-frontend
// sdpa benchmark CSVs (calibrate/attention_benchmark_csv.h), for `trainsim calibrate --attention`.
//
// The rows fitted are those that stand for the attention a training step runs with cuDNN
// (Transformer Engine's FusedAttention, what the default Blackwell rates measure):
//   - a cuDNN backend: cudnn, cudnn_fe or pyt_cudnn (a precision-column file is cuDNN's);
//   - a 16-bit data type: bf16, bfloat16, fp16 or float16 (the rate the model uses for a
//     16-bit step; FP8 attention is another kernel);
//   - causal (attn_mask top_left / bottom_right, is_causal True), as GPT-style training runs;
//     where no row qualifies causal, the non-causal ones are used and a note says so;
//   - q_seqlen from 4,096 to 16,384 inclusive: the training range of the validation suite's
//     Megatron-Core and Llama rows (sequences of 4,096 and 8,192 tokens), with one doubling of
//     headroom. Shorter sequences fill the GPU less (GB200 cuDNN BF16 forward: 1,069 TFLOP/s
//     at 2,048 against 1,584 at 8,192), which the tile model below accounts for, but below
//     1,024 the runs are launch-bound, and beyond 32,768 cuDNN's rates fall again (1,467 at
//     131,072), which no tile count explains;
//   - not a deterministic backward (deterministic_bwd True serialises the dQ accumulation,
//     which training does not ask for) and without a sliding window (another FLOP count).
//
// Per pass, the rows' total FLOPs over their total time, sum(tflops_i x time_i) / sum(time_i),
// is reported per file. What calibration keeps (calibrateAttention) is the tile model's two
// parameters per pass, from all files' rows together: the kernel's full rate and, where the
// rows hold at least 3 distinct problems, its fixed cost per CTA (least squares on the log of
// the rates, the cost searched from 0 to 16 iterations in quarters); with fewer problems the
// GPU's default cost is kept and the full rate is the time-weighted mean of the rows' rates
// over their tile efficiencies. A file with no qualifying row, or whose qualifying rows never
// measure one of the passes, is an InputError naming the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/expected.h"
#include "calibrate/attention_benchmark_csv.h"
#include "perf/compute_parameters.h"

namespace trainsim::calibrate {

inline constexpr int64_t kAttentionFitMinSeqlen = 4096;
inline constexpr int64_t kAttentionFitMaxSeqlen = 16384;

// One measured pass of one row: its problem (empty when the file gives no batch or heads),
// rate and time.
struct AttentionSample {
  perf::AttentionShape shape;
  double tflops = 0.0;
  double time_ms = 0.0;
};

// One pass's totals over the rows used: sum(tflops x time) and sum(time), milliseconds.
struct AttentionPassTotals {
  double tflops_ms = 0.0;
  double ms = 0.0;
  int rows = 0;
  [[nodiscard]] double tflops() const { return ms > 0.0 ? tflops_ms / ms : 0.0; }
};

struct AttentionFit {
  std::string source;  // the file's name as given
  AttentionPassTotals forward;
  AttentionPassTotals backward;
  std::vector<AttentionSample> forward_samples;
  std::vector<AttentionSample> backward_samples;
  int rows = 0;  // rows used (for either pass)
  int64_t min_q_seqlen = 0;
  int64_t max_q_seqlen = 0;
  bool causal = true;  // false: no causal row qualified, the non-causal ones were used
  std::vector<std::string> notes;
  [[nodiscard]] double forwardTflops() const { return forward.tflops(); }
  [[nodiscard]] double backwardTflops() const { return backward.tflops(); }
};

[[nodiscard]] Expected<AttentionFit> fitAttention(const AttentionBenchmark& benchmark);

// The tile model of `gpu_key` (`sms` SMs) at BF16 (the 16-bit row the model reads) over every
// fit's rows; `start`: the GPU's default fixed costs, kept for a pass with too few problems.
struct AttentionCalibration {
  perf::MeasuredAttentionRate rate;  // the full rates (no measured_at)
  perf::AttentionTileOverhead overhead;
  bool forward_overhead_fitted = false;
  bool backward_overhead_fitted = false;
  double forward_error = 0.0;  // mean |model / measured - 1| over the rows
  double backward_error = 0.0;
};
[[nodiscard]] AttentionCalibration calibrateAttention(const std::vector<AttentionFit>& fits, const std::string& gpu_key,
                                                      int sms, perf::AttentionTileOverhead start);

}  // namespace trainsim::calibrate
