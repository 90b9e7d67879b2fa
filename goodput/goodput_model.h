// Expected goodput of a training run interrupted by failures: the wall time it takes to do
// `useful_s` of training when unplanned failures arrive as a Poisson process, each costing a
// restart and the work since the last durable checkpoint, planned stops cost a restart, and
// every checkpoint stalls the step.
//
// The model, for exponential times between failures (rate lambda; Daly, "A higher order
// estimate of the optimum checkpoint interval for restart dumps", FGCS 22(3), 2006, eq. 11):
// a segment of tau seconds of training followed by a checkpoint stall delta is attempted until
// no failure falls in it; each failed attempt costs the time it ran and a restart R, which a
// failure can interrupt too. Its expected wall time is
//     E[T] = (exp(lambda (tau + delta)) - 1) (1 / lambda + R_eff),  R_eff = E[(exp(lambda R) - 1) / lambda]
// over the kinds of restart (with or without a node to replace). An asynchronous checkpoint is
// durable only write_s after its stall: a failure in that window loses the previous segment
// too, adding about write_s per failure to R_eff (first order in write_s / tau). The run ends
// with its last iteration, not with a checkpoint. Planned stops arrive at rate mu while the
// job runs (not while it restarts) and cost R_planned each, no rework.
#pragma once

#include <cstdint>
#include <optional>

#include "goodput/checkpoint_cost.h"
#include "goodput/job_exposure.h"
#include "topology/reliability_spec.h"

namespace trainsim::goodput {

struct GoodputInputs {
  double useful_s = 0.0;     // the failure-free time to train
  double iteration_s = 0.0;  // one iteration (checkpoints fall between iterations)
  JobFailureRates rates;
  CheckpointCost checkpoint;
  topology::RestartCosts restart;
  topology::HotSpares spares;
  // training.checkpoint's interval, in iterations (interval_s converted); unset: Young / Daly.
  std::optional<int64_t> interval_iterations;
};

// What a restart costs, by kind.
struct RestartSeconds {
  double hardware = 0.0;  // detection, a node replaced (spare or rescheduled), start, load, warm-up
  double software = 0.0;  // detection, start, load, warm-up
  double planned = 0.0;   // a synchronous checkpoint written before the stop, start, load, warm-up
  // The chance a hot spare is idle when a node fails (nodes under repair: Poisson with mean
  // hardware failure rate x repair time); 0 without spares.
  double spare_available = 0.0;
};
[[nodiscard]] RestartSeconds restartSeconds(const GoodputInputs& inputs);

// Daly's higher-order optimum of the compute time between checkpoints for a checkpoint cost
// `delta` and mean time between failures `mtbf` (both seconds; eq. 20 of the paper above):
//     tau = sqrt(2 delta M) (1 + sqrt(delta / (2M)) / 3 + delta / (18 M)) - delta   for delta < 2M,
//     tau = M                                                                       otherwise.
// To first order it is Young's sqrt(2 delta M) (CACM 17(9), 1974).
[[nodiscard]] double dalyInterval(double delta, double mtbf);

struct GoodputEstimate {
  int64_t interval_iterations = 0;  // iterations between checkpoints
  double interval_s = 0.0;          // the same in seconds of training
  bool interval_chosen = false;     // by Young / Daly (else given)
  RestartSeconds restart;
  double wall_s = 0.0;     // expected time to train with failures
  double goodput = 0.0;    // useful_s / wall_s
  double unplanned = 0.0;  // expected interruptions
  double planned = 0.0;
  double checkpoints = 0.0;  // checkpoints written
  // Where wall_s - useful_s goes; the three sum to it.
  double lost_checkpoint_s = 0.0;  // stalls
  double lost_restart_s = 0.0;     // restarts
  double lost_rework_s = 0.0;      // work redone after failures
};

// The estimate; nullopt when failures come so fast that the expected time overflows (the run
// makes no progress in any meaningful sense).
[[nodiscard]] std::optional<GoodputEstimate> estimateGoodput(const GoodputInputs& inputs);

// The checkpoint interval in iterations the estimate uses: the given one, or Daly's optimum
// for the stall and the unplanned MTBF, at least the write time when asynchronous (a save
// waits for the previous one), rounded to whole iterations.
[[nodiscard]] int64_t checkpointIntervalIterations(const GoodputInputs& inputs);

}  // namespace trainsim::goodput
