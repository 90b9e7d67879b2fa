// How well a fused (FlashAttention-style) attention kernel fills the GPU, from its tiles.
//
// FlashAttention-2/3 and cuDNN's fused attention launch one thread block (CTA) per tile of
// 128 query rows (forward) or 128 key rows (backward) of one (sequence, head) pair; each CTA
// loops over the 128-wide blocks of the other operand that the causal mask leaves (Dao 2023,
// arXiv:2307.08691, Algorithms 1-2; Shah et al. 2024, arXiv:2407.08608, section 3). With
// head dimension 128 a CTA fills an SM (its shared memory), so the SMs take the CTAs in grid
// order, each the next one when it is free. Two things then make a short or narrow attention
// slower per FLOP than a long one, and this model counts both:
//   - a fixed cost per CTA, beside its loop: loading its Q (or K, V) tile, the epilogue that
//     rescales and writes O and the logsumexp (dK, dV for the backward), the pipeline's fill;
//     expressed as `overhead_blocks`, the time of that many loop iterations;
//   - the tail: under the causal mask the CTAs' loops run from 1 to n blocks, and when
//     there are few of them per SM the last SMs to finish set the kernel's time.
// The kernel's rate is then full_rate x efficiency, where full_rate is its rate on an
// unbounded problem (no tail, the fixed cost amortised) and efficiency, computed here, is
// the useful blocks (the causal half that the FLOP count takes: n^2 / 2 per pair) over
// SMs x the time the last SM finishes.
//
// Fit (the evidence): cuDNN 9.27's causal forward on H200 (NVIDIA/cudnn-frontend
// benchmark/attention_inference/results/prefill_sweep/h200, batch 1, head dim 128, 8 to 64
// query heads, sequences 2,048 to 16,384: 16 rates from 290 to 680 TFLOP/s) is reproduced
// within 1.4% mean absolute error (worst +7%, 8 heads at 2,048: 128 CTAs on 132 SMs) with
// overhead_blocks = 2 and one full rate; with no fixed cost the error is 5.3%, and ordering
// the CTAs longest first (as a persistent scheduler would) fits worse (10%+).
#pragma once

#include <cstdint>

namespace trainsim::perf {

// Which pass a fused attention kernel runs: forward, or backward (which recomputes the scores
// and does 2.5x the forward's matmul FLOPs at a rate of its own).
enum class AttentionPass : uint8_t { kForward, kBackward };

// Rows (and columns) of one attention tile: FlashAttention-2/3's and cuDNN's 128 x 128 tiles
// at head dimension 128 (FA3, arXiv:2407.08608, section 4.1: "block sizes 128 x 128").
inline constexpr double kAttentionTileSize = 128.0;

// One fused attention kernel's problem on one GPU, causal (the only mask training runs here).
// An empty shape (sequences 0) stands for an unbounded problem: efficiency 1.
struct AttentionShape {
  double sequences = 0.0;  // independent (sequence, head) pairs: micro-batch x heads on the GPU
  double queries = 0.0;    // query positions per sequence (seq_len / cp)
  double keys = 0.0;       // key positions per sequence (seq_len)
  [[nodiscard]] bool empty() const { return sequences <= 0.0 || queries <= 0.0 || keys <= 0.0; }
  bool operator==(const AttentionShape&) const = default;
};

// Fixed cost of one attention CTA beside its loop, in loop iterations (128 x 128 blocks),
// per pass.
struct AttentionTileOverhead {
  double forward = 0.0;
  double backward = 0.0;
  [[nodiscard]] double of(AttentionPass pass) const { return pass == AttentionPass::kBackward ? backward : forward; }
  bool operator==(const AttentionTileOverhead&) const = default;
};

// The fraction of the full rate (see above) that `shape` reaches on `sms` SMs, in (0, 1].
//   forward:  CTA i of a pair (queries == keys) loops over i + 1 key blocks;
//   backward: CTA j loops over the n - j query blocks at or below its keys (dK, dV per CTA),
//             launched in key-block order, so the longest first;
//   queries < keys (context parallelism, cp = keys / queries): Transformer Engine's ring
//             attention with load-balanced chunks runs one causal kernel over the rank's own
//             queries x queries, then cp - 1 kernels without mask over queries x queries / 2
//             (half of the Q or of the KV chunk); their times add.
// The schedule is simulated CTA by CTA up to 65,536 CTAs; beyond, the tail is under 0.5% of
// the time and a closed form is used. Deterministic; cached per thread.
[[nodiscard]] double attentionTileEfficiency(const AttentionShape& shape, AttentionPass pass, int sms,
                                             double overhead_blocks);

}  // namespace trainsim::perf
