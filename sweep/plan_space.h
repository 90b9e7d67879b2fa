// The dimensions a sweep varies and the values the user allows for each: `--vary tp=1,2,4,8`
// restricts a dimension to a list, `--fix pp=8` to one value; a dimension left alone takes
// every value that can make a plan (plan_enumerator.h says which, per plan).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::sweep {

// dp is not free (dp = gpus / (tp x pp x cp) keeps the global batch on every GPU), but it
// may be restricted like the others. recompute is 0 none, 1 selective, 2 full, 3 selective_op;
// sequence_parallel 0 off, 1 on.
enum class Dimension : uint8_t {
  kTp,
  kPp,
  kDp,
  kCp,
  kEp,
  kVirtualStages,
  kMicroBatchSize,
  kRecompute,
  kZero,
  kSequenceParallel,
  kEtp,  // expert tensor parallelism (ParallelPlan::etp)
  // Full recomputation of the first N layers of each chunk (ParallelPlan::recompute_num_layers);
  // free: the experiment's own setting.
  kRecomputeNumLayers,
  // The pipeline schedule (ParallelPlan::schedule, parallelism::PipelineSchedule's values);
  // free: the experiment's own.
  kSchedule,
};
inline constexpr std::size_t kDimensionCount = 13;

// "tp", "pp", ..., "micro_batch_size", "sequence_parallel".
[[nodiscard]] std::string_view dimensionName(Dimension dimension);
// The value as a user writes it: "selective" for recompute 1, "true" for sequence_parallel 1,
// "zero_bubble" for schedule 2.
[[nodiscard]] std::string dimensionValueText(Dimension dimension, int64_t value);

class PlanSpace {
 public:
  // The user's list for `dimension`, or nullopt when it is free.
  [[nodiscard]] const std::optional<std::vector<int64_t>>& allowed(Dimension dimension) const {
    return allowed_[static_cast<std::size_t>(dimension)];
  }
  [[nodiscard]] bool allows(Dimension dimension, int64_t value) const;
  // Restricts a free dimension (throws InputError when it is already restricted: one
  // --vary or --fix per dimension, so that no option silently wins over another).
  void restrict(Dimension dimension, std::vector<int64_t> values, const std::string& option_text);

 private:
  std::array<std::optional<std::vector<int64_t>>, kDimensionCount> allowed_;
};

// Parses `--vary NAME=V1,V2,...` and `--fix NAME=V` options; an unknown dimension, a value
// that is not a positive integer (or none/selective/full/selective_op, true/false, 0..3,
// gpipe/1f1b/zero_bubble where those apply),
// or a dimension given twice is an InputError naming the option.
[[nodiscard]] PlanSpace parsePlanSpace(const std::vector<std::string>& vary, const std::vector<std::string>& fix);

}  // namespace trainsim::sweep
