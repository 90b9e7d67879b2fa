#include "parallelism/micro_batch_shard.h"

namespace trainsim::parallelism {

MicroBatchShard MicroBatchShard::of(const TrainingSpec& training, const ParallelPlan& plan) {
  MicroBatchShard shard;
  shard.micro_batch_size = training.micro_batch_size;
  shard.seq_len = training.seq_len;
  shard.tp = plan.tp;
  shard.cp = plan.cp;
  shard.ep = plan.ep;
  shard.etp = plan.expertTensorParallel();
  shard.moe_token_factor = training.moeTokenFactor();
  shard.sequence_parallel = plan.sequence_parallel && plan.tp > 1;
  shard.precision = training.precision;
  shard.grad_reduce_precision = training.grad_reduce_precision;
  shard.fp8_param_gather = training.fp8_param_gather;
  return shard;
}

MicroBatchShard MicroBatchShard::wholeSequence(const TrainingSpec& training) {
  MicroBatchShard shard;
  shard.seq_len = training.seq_len;
  shard.precision = training.precision;
  shard.grad_reduce_precision = training.grad_reduce_precision;
  shard.fp8_param_gather = training.fp8_param_gather;
  return shard;
}

double MicroBatchShard::tokens() const {
  return static_cast<double>(micro_batch_size) * static_cast<double>(seq_len) / static_cast<double>(cp);
}

double MicroBatchShard::replicatedRegionTokens() const {
  return sequence_parallel ? tokens() / static_cast<double>(tp) : tokens();
}

double MicroBatchShard::activationBytes() const {
  switch (precision) {
    case topology::Precision::kFp64: return 8.0;
    case topology::Precision::kFp32:
    case topology::Precision::kTf32: return 4.0;
    case topology::Precision::kFp16:
    case topology::Precision::kBf16:
    case topology::Precision::kFp8: return 2.0;
  }
  return 2.0;
}

double MicroBatchShard::mainGradientBytes() const {
  // readTrainingSpec allows fp32 or the parameters' 16-bit type.
  if (grad_reduce_precision) return *grad_reduce_precision == topology::Precision::kFp32 ? 4.0 : 2.0;
  switch (precision) {
    case topology::Precision::kFp64: return 8.0;
    case topology::Precision::kFp16: return 2.0;
    case topology::Precision::kFp32:
    case topology::Precision::kTf32:
    case topology::Precision::kBf16:
    case topology::Precision::kFp8: return 4.0;
  }
  return 4.0;
}

double MicroBatchShard::gemmOperandBytes() const {
  return precision == topology::Precision::kFp8 ? 1.0 : activationBytes();
}

double MicroBatchShard::parameterGatherBytes() const {
  constexpr double kFp8Bytes = 1.0;
  return fp8_param_gather ? kFp8Bytes : activationBytes();
}

}  // namespace trainsim::parallelism
