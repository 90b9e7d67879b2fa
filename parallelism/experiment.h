// One simulation input: what is trained (model, training), on what (cluster) and how (plan).
#pragma once

#include <string>

#include "parallelism/model_spec.h"
#include "parallelism/parallel_plan.h"
#include "parallelism/training_spec.h"
#include "topology/cluster_spec.h"

namespace trainsim::parallelism {

struct Experiment {
  std::string name;
  ModelSpec model;
  topology::ClusterSpec cluster;
  TrainingSpec training;
  ParallelPlan plan;        // resolved (gpus and dp filled in) and checked against the rest
  std::string source_file;  // the experiment file ("" when built in code)
};

}  // namespace trainsim::parallelism
