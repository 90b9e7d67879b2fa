// How Megatron-Core splits a model chunk's gradients into buckets, each reduced (and its
// updated parameters all-gathered) as one collective.
//
// Megatron-Core's DistributedDataParallel (megatron/core/distributed/
// distributed_data_parallel.py and distributed_data_parallel_config.py, r0.8 on): when
// --ddp-bucket-size is not given a bucket holds max(40M, 1M x dp_size) parameters, dp_size
// counting context-parallel ranks too ("larger DP sizes need larger buckets to ensure
// collectives do not become latency-bound"); without overlap_grad_reduce the bucket size is
// unlimited, so a chunk is one bucket. A plan's ddp_bucket_size (--ddp-bucket-size) replaces
// the default.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "parallelism/parallel_plan.h"

namespace trainsim::parallelism {

struct GradientBuckets {
  double min_parameters = 40e6;
  double parameters_per_dp_rank = 1e6;

  // Parameters per bucket for the plan's data-parallel (x context-parallel) group.
  [[nodiscard]] double bucketParameters(const ParallelPlan& plan) const {
    if (plan.ddp_bucket_size) return *plan.ddp_bucket_size;
    return std::max(min_parameters, parameters_per_dp_rank * static_cast<double>(plan.dp * plan.cp));
  }
  // Buckets of a model chunk of `chunk_parameters` parameters.
  [[nodiscard]] int64_t count(const ParallelPlan& plan, double chunk_parameters) const {
    if (!plan.overlap_grad_reduce) return 1;
    return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(chunk_parameters / bucketParameters(plan))));
  }
};

}  // namespace trainsim::parallelism
