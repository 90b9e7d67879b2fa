// Bounds on model sizes: far above any model built, low enough that the layer-by-layer
// task graph and the size products (parameters, FLOPs, bytes) stay within what the
// simulator can hold and represent.
#pragma once

#include <cstdint>

namespace trainsim::parallelism::model_limits {

// 80x the deepest large models (GPT-1T and Llama 3 405B have 128 and 126 layers); each
// layer is a set of tasks per micro-batch.
inline constexpr int64_t kMaxLayers = 10'000;
// 2^20: 40x the widest (GPT-1T's 25,600).
inline constexpr int64_t kMaxHiddenSize = int64_t{1} << 20;
// 2^22: four times the widest hidden size, the usual MLP ratio.
inline constexpr int64_t kMaxFfnHiddenSize = int64_t{1} << 22;
// Attention heads (query or key/value) and head width: 2^16, 500x the most heads (128).
inline constexpr int64_t kMaxHeads = int64_t{1} << 16;
inline constexpr int64_t kMaxHeadDim = int64_t{1} << 16;
// 2^24: 64x the largest vocabularies (Gemma's 256K).
inline constexpr int64_t kMaxVocabSize = int64_t{1} << 24;
// 2^16 experts: 256x the most routed experts of a published model (DeepSeek-V3's 256).
inline constexpr int64_t kMaxExperts = int64_t{1} << 16;

}  // namespace trainsim::parallelism::model_limits
