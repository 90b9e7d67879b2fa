// Models and plans built in code for the FLOPs and memory tests, so that the closed forms
// they are checked against see exactly the sizes written here.
#pragma once

#include <cstdint>

#include "parallelism/micro_batch_shard.h"
#include "parallelism/model_spec.h"
#include "parallelism/parallel_plan.h"
#include "parallelism/training_spec.h"

namespace trainsim::parallelism::testing {

// A GPT (LayerNorm, GELU MLP of 4h, no GQA) as Megatron's closed forms assume it.
inline ModelSpec gptModel(int64_t layers, int64_t hidden, int64_t heads, int64_t vocab) {
  ModelSpec model;
  model.name = "gpt-test";
  model.architecture = Architecture::kGpt;
  model.layers = layers;
  model.hidden_size = hidden;
  model.ffn_hidden_size = 4 * hidden;
  model.attention_heads = heads;
  model.kv_heads = heads;
  model.head_dim = hidden / heads;
  model.vocab_size = vocab;
  model.tied_embeddings = true;
  return model;
}

// GPT-3 175B (Brown et al. 2020, Table 2.1; vocabulary padded to 51,200 by Megatron).
inline ModelSpec gpt3Model() { return gptModel(96, 12288, 96, 51200); }

// Llama 3 8B (arXiv:2407.21783, Table 3): GQA with 8 KV heads, SwiGLU of 14,336.
inline ModelSpec llama3_8bModel() {
  ModelSpec model;
  model.name = "llama3-8b";
  model.architecture = Architecture::kLlama;
  model.layers = 32;
  model.hidden_size = 4096;
  model.ffn_hidden_size = 14336;
  model.attention_heads = 32;
  model.kv_heads = 8;
  model.head_dim = 128;
  model.vocab_size = 128256;
  return model;
}

// Mixtral 8x7B: Llama-style layers whose MLP is 8 experts of 14,336, top-2.
inline ModelSpec mixtralModel() {
  ModelSpec model = llama3_8bModel();
  model.name = "mixtral-8x7b";
  model.vocab_size = 32000;
  MoeSpec moe;
  moe.experts = 8;
  moe.top_k = 2;
  moe.ffn_hidden_size = 14336;
  model.moe = moe;
  return model;
}

inline TrainingSpec training(int64_t seq_len, int64_t global_batch, int64_t micro_batch = 1,
                             topology::Precision precision = topology::Precision::kBf16) {
  TrainingSpec spec;
  spec.seq_len = seq_len;
  spec.global_batch_size = global_batch;
  spec.micro_batch_size = micro_batch;
  spec.precision = precision;
  return spec;
}

inline MicroBatchShard shard(int64_t micro_batch, int64_t seq_len, int64_t tp = 1, bool sequence_parallel = false,
                             int64_t cp = 1, int64_t ep = 1,
                             topology::Precision precision = topology::Precision::kBf16) {
  MicroBatchShard result;
  result.micro_batch_size = micro_batch;
  result.seq_len = seq_len;
  result.tp = tp;
  result.cp = cp;
  result.ep = ep;
  result.etp = tp;  // Megatron-Core's default expert tensor parallelism
  result.sequence_parallel = sequence_parallel;
  result.precision = precision;
  return result;
}

}  // namespace trainsim::parallelism::testing
