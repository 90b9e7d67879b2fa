// Reading the CSV files of NVIDIA/cudnn-frontend's benchmark/sdpa_benchmark_training: measured
// fused-attention (SDPA) forward and backward times and rates, one row per configuration, for
// `trainsim calibrate --attention` (calibrate/attention_fit.h). Columns are found by their header
// name, in any order; two layouts exist:
//
//   - "artifacts" (benchmark_bf16_sdpa.py / benchmark_fp8_sdpa.py, artifacts/*.csv):
//       batch_size,q_seqlen,kv_seqlen,num_q_heads,num_kv_heads,head_dim,is_causal,backend,
//       forward_time,backward_time,fwd_tflops_per_sec,bwd_tflops_per_sec
//     `backend` is cudnn_fe, pyt_flash_attention, cudnn_fe_fp8, ...: the file has no data type
//     column, a backend named *_fp8 ran FP8 (the row reads as backend cudnn_fe, data type fp8)
//     and the others BF16, the one data type benchmark_bf16_sdpa.py runs. The FP8 script
//     writes a `precision` column (bf16 / fp8) instead of `backend`: it benchmarks cuDNN only,
//     so its rows read as backend cudnn_fe.
//   - "results" (benchmark_single_sdpa.py through the config runner, results/*/*.csv):
//       config_name,model_name,backend,data_type,attn_mask,batch_size,q_seqlen,kv_seqlen,
//       num_q_heads,num_kv_heads,head_dim_qk,head_dim_vo,profile_pass,deterministic_bwd,
//       fwd_time_ms,bwd_time_ms,fwd_tflops,bwd_tflops,max_diff,num_iterations,success,
//       error_message,gpu_name,cudnn_version,cudnn_backend_version
//     (newer files add sliding_window_size). attn_mask top_left / bottom_right is causal,
//     no_mask is not. Rows with success False are skipped (a failed run measured nothing;
//     its time cells may be empty).
//
// Times are milliseconds in both layouts; rates are TFLOP/s of executed FLOPs (the causal half
// where masked; the backward 2.5x the forward), as perf::MeasuredAttentionRate counts them. A
// pass that was not profiled (profile_pass fwd or bwd) has an empty, "nan" or zero time or
// rate, and one that did not complete (the June 2025 artifacts' PyTorch math backend out of
// memory at 16,384 tokens and more) an "inf" time: that pass of the row is absent. A cell that does not read as its
// column's type is an InputError at file:line:col naming the column (exit 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.h"

namespace trainsim::calibrate {

enum class AttentionMask : uint8_t { kCausal, kNone, kOther };

// One pass of one row: its time and the rate the benchmark computed from it.
struct AttentionPassSample {
  double time_ms = 0.0;
  double tflops = 0.0;
};

struct AttentionBenchmarkRow {
  int line = 0;           // 1-based line of the row in the file
  std::string backend;    // as written (cudnn_fe, cudnn, pyt_flash_attention, ...); see above
  std::string data_type;  // as written (bf16, bfloat16, fp8, ...), or implied by the layout
  AttentionMask mask = AttentionMask::kCausal;
  int64_t q_seqlen = 0;
  int64_t kv_seqlen = 0;
  int64_t sequences = 0;                // batch_size x num_q_heads: the kernel's (sequence, head) pairs; 0 if not given
  bool deterministic_backward = false;  // results layout: deterministic_bwd
  bool sliding_window = false;          // results layout: a sliding_window_size is set
  std::optional<AttentionPassSample> forward;
  std::optional<AttentionPassSample> backward;
  std::string gpu_name;  // results layout; empty in the artifacts layout
};

struct AttentionBenchmark {
  std::string source;  // the file's name as given
  std::string layout;  // "artifacts" or "results"
  std::vector<AttentionBenchmarkRow> rows;
  int failed_rows = 0;                 // success False, skipped
  std::vector<std::string> gpu_names;  // the distinct gpu_name values, in file order
};

// `name` is what messages print as the file (and AttentionBenchmark::source).
[[nodiscard]] Expected<AttentionBenchmark> parseAttentionBenchmarkCsv(std::string_view text, const std::string& name);
// Reads the file at `path` and parses it; a file that cannot be read is an error.
[[nodiscard]] Expected<AttentionBenchmark> loadAttentionBenchmarkCsv(const std::string& path);

}  // namespace trainsim::calibrate
