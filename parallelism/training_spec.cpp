#include "parallelism/training_spec.h"

namespace trainsim::parallelism {

std::string_view optimizerName(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kAdam: return "adam";
    case Optimizer::kSgd: return "sgd";
  }
  return "unknown";
}

TrainingSpec readTrainingSpec(const ConfigNode& section) {
  section.allowKeys(
      {"seq_len", "global_batch_size", "micro_batch_size", "precision", "optimizer", "tokens", "flash_attention"});
  TrainingSpec training;
  training.seq_len = section.child("seq_len").asPositiveInteger();
  training.global_batch_size = section.child("global_batch_size").asPositiveInteger();
  training.micro_batch_size = section.positiveInteger("micro_batch_size", 1);
  // fp64 is a GPU capability, not a training precision anyone uses, so it is not offered.
  const std::string precision = section.enumeration("precision", {"fp32", "tf32", "fp16", "bf16", "fp8"}, "bf16");
  training.precision = *topology::parsePrecision(precision);
  training.optimizer =
      section.enumeration("optimizer", {"adam", "sgd"}, "adam") == "sgd" ? Optimizer::kSgd : Optimizer::kAdam;
  if (auto tokens = section.optionalChild("tokens")) training.tokens = tokens->asPositiveNumber();
  training.flash_attention = section.boolean("flash_attention", true);
  return training;
}

}  // namespace trainsim::parallelism
