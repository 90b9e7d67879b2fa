#include "parallelism/optimizer_step.h"

#include <algorithm>

#include "parallelism/micro_batch_shard.h"

namespace trainsim::parallelism {
namespace {

bool mixedPrecision(topology::Precision precision) {
  return precision == topology::Precision::kFp16 || precision == topology::Precision::kBf16 ||
         precision == topology::Precision::kFp8;
}

}  // namespace

OptimizerStepBytes optimizerStepBytes(const TrainingSpec& training, const OptimizerStepOptions& options) {
  OptimizerStepBytes bytes;
  bytes.per_updated_parameter =
      (training.optimizer == Optimizer::kSgd ? options.sgd_update_bytes : options.adam_update_bytes) +
      options.grad_norm_bytes;
  bytes.per_gradient_element = MicroBatchShard::wholeSequence(training).mainGradientBytes();
  if (training.optimizer_state_precision == topology::Precision::kBf16) {
    // A precision-aware optimizer: the update reads and writes each moment in 2 bytes
    // instead of 4 (Adam: m and v read and written, SGD: the momentum), and reads 16-bit
    // main gradients as they are, with no cast into an fp32 copy.
    const double moment_accesses = training.optimizer == Optimizer::kSgd ? 2.0 : 4.0;
    bytes.per_updated_parameter -= moment_accesses * 2.0 + (4.0 - std::min(4.0, bytes.per_gradient_element));
  } else if (mixedPrecision(training.precision) && bytes.per_gradient_element < 4.0) {
    bytes.per_updated_parameter += options.grad_cast_bytes;
  }
  if (training.precision == topology::Precision::kFp16) bytes.per_updated_parameter += options.fp16_unscale_bytes;
  if (mixedPrecision(training.precision)) {
    if (!training.fp8_param_gather) {
      bytes.per_updated_parameter += options.master_to_model_copy_bytes;
    } else {
      bytes.per_updated_parameter += options.master_to_fp8_model_copy_bytes;
      // Every recipe but delayed scaling reads the master shard for its amax (Transformer
      // Engine tensor/utils.py, _cast_master_weights_to_fp8_*_scaling).
      if (training.fp8_recipe != Fp8Recipe::kDelayed)
        bytes.per_updated_parameter += options.fp8_current_scaling_master_amax_bytes;
    }
  }
  return bytes;
}

double optimizerStepTraffic(const TrainingSpec& training, const ParallelPlan& plan, double dense_parameters,
                            double expert_parameters, const OptimizerStepOptions& options) {
  const OptimizerStepBytes bytes = optimizerStepBytes(training, options);
  // The data-parallel group with context parallel, or its shard group under HSDP.
  const auto dp = static_cast<double>(training.zero3.shardRanks(plan.dp * plan.cp));
  const auto edp = static_cast<double>(plan.expertDataParallel());
  const double sharded = dense_parameters / dp + expert_parameters / edp;
  const double whole = dense_parameters + expert_parameters;
  const double updated = plan.zero >= 1 ? sharded : whole;
  const double gradients = plan.zero >= 3 ? sharded : whole;
  return updated * bytes.per_updated_parameter + gradients * bytes.per_gradient_element;
}

}  // namespace trainsim::parallelism
