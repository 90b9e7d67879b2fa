#include "parallelism/parallel_group_members.h"

namespace trainsim::parallelism {

std::vector<int64_t> groupMembers(const RankLayout& layout, ParallelGroup group, const RankCoordinate& coordinate) {
  switch (group) {
    case ParallelGroup::kTensor: return layout.tensorGroup(coordinate);
    case ParallelGroup::kContext: return layout.contextGroup(coordinate);
    case ParallelGroup::kExpert: return layout.expertGroup(coordinate);
    case ParallelGroup::kExpertTensor: return layout.expertTensorGroup(coordinate);
    case ParallelGroup::kPipeline: break;
  }
  return {};
}

int64_t groupSize(ParallelGroup group, const ParallelPlan& plan) {
  switch (group) {
    case ParallelGroup::kTensor: return plan.tp;
    case ParallelGroup::kContext: return plan.cp;
    case ParallelGroup::kExpert: return plan.ep;
    case ParallelGroup::kExpertTensor: return plan.expertTensorParallel();
    case ParallelGroup::kPipeline: return plan.pp;
  }
  return 1;
}

}  // namespace trainsim::parallelism
