#include "goodput/goodput_monte_carlo.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <random>
#include <vector>

namespace trainsim::goodput {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// Uniform in (0, 1] from the generator's top 53 bits, then inverse-CDF exponential: the
// library's distributions are not specified bit for bit across standard libraries.
class Draws {
 public:
  explicit Draws(uint64_t seed) : engine_(seed) {}
  double uniform() { return (static_cast<double>(engine_() >> 11) + 1.0) * 0x1.0p-53; }
  double exponential(double rate) { return rate > 0.0 ? -std::log(uniform()) / rate : kNever; }

 private:
  std::mt19937_64 engine_;
};

// SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA
// 2014): well-spread seeds for the draws' generators from one user seed.
uint64_t splitMix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

struct DrawResult {
  double wall_s = 0.0;
  int64_t unplanned = 0;
  int64_t planned = 0;
};

// One run of the process (see goodput_model.h for what each step costs).
class RunDraw {
 public:
  RunDraw(const GoodputInputs& inputs, const GoodputEstimate& estimate, uint64_t seed)
      : inputs_(inputs), estimate_(estimate), draws_(seed) {
    tau_ = estimate.interval_s;
    const CheckpointCost& checkpoint = inputs.checkpoint;
    write_lag_ = checkpoint.async ? checkpoint.write_s : 0.0;
    stall_ = checkpoint.stall_s + (checkpoint.async ? std::max(0.0, checkpoint.write_s - tau_) : 0.0);
    lambda_ = inputs.rates.unplanned();
    share_ = inputs.rates.hardwareShare();
    free_spares_ = inputs.spares.nodes;
  }

  DrawResult run() {
    next_unplanned_ = draws_.exponential(lambda_);
    next_planned_ = draws_.exponential(inputs_.rates.planned);
    while (progress_ < inputs_.useful_s) {
      skipQuietSegments();
      if (progress_ >= inputs_.useful_s) break;
      runSegment();
    }
    return result_;
  }

 private:
  // Whole segments that end before the next event, in one step: they only move time on.
  void skipQuietSegments() {
    const double cost = tau_ + stall_;
    const double room = std::min(next_unplanned_, next_planned_) - result_.wall_s;
    const double left = std::floor((inputs_.useful_s - progress_) / tau_) - 1.0;  // keep the last for runSegment
    const double count = std::min(std::floor(room / cost), left);
    if (!(count >= 1.0)) return;
    result_.wall_s += count * cost;
    progress_ += count * tau_;
    // The segments' last checkpoint is pending; the one before it is durable, since a save
    // waits for the previous one (stall_ covers the write beyond tau_).
    durable_ = write_lag_ > 0.0 ? progress_ - tau_ : progress_;
    pending_ = progress_;
    pending_at_ = result_.wall_s + write_lag_;
  }

  void commitPending(double now) {
    if (pending_at_ <= now) {
      durable_ = std::max(durable_, pending_);
      pending_at_ = kNever;
    }
  }

  void runSegment() {
    const double start = result_.wall_s;
    const double work = std::min(tau_, inputs_.useful_s - progress_);
    const bool last = progress_ + work >= inputs_.useful_s;
    const double end = start + work + (last ? 0.0 : stall_);
    const double event = std::min(next_unplanned_, next_planned_);
    if (event >= end) {
      result_.wall_s = end;
      progress_ += work;
      commitPending(end);
      if (last) return;
      if (write_lag_ > 0.0) {
        pending_ = progress_;
        pending_at_ = end + write_lag_;
      } else {
        durable_ = progress_;
      }
      return;
    }
    const double done = std::min(event - start, work);
    if (next_planned_ <= next_unplanned_) {
      plannedStop(event, progress_ + done);
    } else {
      unplannedFailure(event);
    }
  }

  // A planned stop: a synchronous checkpoint of the progress so far, then a restart.
  void plannedStop(double at, double progress) {
    ++result_.planned;
    progress_ = progress;
    durable_ = progress;
    pending_at_ = kNever;
    result_.wall_s = at + estimate_.restart.planned;
    next_planned_ = result_.wall_s + draws_.exponential(inputs_.rates.planned);
    next_unplanned_ = result_.wall_s + draws_.exponential(lambda_);  // memoryless
  }

  // A failure: back to the last durable checkpoint, then restarts until one completes.
  void unplannedFailure(double at) {
    commitPending(at);
    progress_ = durable_;
    pending_at_ = kNever;
    double now = at;
    while (true) {
      ++result_.unplanned;
      const double restart = restartSeconds(now);
      next_unplanned_ = now + draws_.exponential(lambda_);
      if (next_unplanned_ >= now + restart) {
        now += restart;
        break;
      }
      now = next_unplanned_;
    }
    result_.wall_s = now;
    if (next_planned_ < now) next_planned_ = now + draws_.exponential(inputs_.rates.planned);  // memoryless
  }

  // One restart starting at `now`: a hardware failure takes a hot spare when one is idle.
  double restartSeconds(double now) {
    if (draws_.uniform() > share_) return estimate_.restart.software;
    while (!repairs_.empty() && repairs_.top() <= now) {
      repairs_.pop();
      ++free_spares_;
    }
    const double common = estimate_.restart.software;
    if (free_spares_ > 0) {
      --free_spares_;
      repairs_.push(now + inputs_.spares.repair_hours * 3600.0);
      return common + inputs_.spares.swap_s;
    }
    return common + inputs_.restart.reschedule_s;
  }

  const GoodputInputs& inputs_;
  const GoodputEstimate& estimate_;
  Draws draws_;
  double tau_ = 0.0;
  double write_lag_ = 0.0;
  double stall_ = 0.0;
  double lambda_ = 0.0;
  double share_ = 0.0;
  int64_t free_spares_ = 0;
  std::priority_queue<double, std::vector<double>, std::greater<>> repairs_;
  double progress_ = 0.0;
  double durable_ = 0.0;
  double pending_ = 0.0;
  double pending_at_ = kNever;
  double next_unplanned_ = kNever;
  double next_planned_ = kNever;
  DrawResult result_;
};

// Linear interpolation between the order statistics of sorted `values` (Hyndman & Fan type 7).
double percentile(const std::vector<double>& sorted, double p) {
  const double position = p * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (position - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

}  // namespace

MonteCarloSummary simulateGoodput(const GoodputInputs& inputs, const GoodputEstimate& estimate, int64_t draws,
                                  uint64_t seed) {
  MonteCarloSummary summary;
  summary.draws = draws;
  summary.seed = seed;
  if (draws <= 0) return summary;
  std::vector<double> walls;
  std::vector<double> unplanned;
  walls.reserve(static_cast<std::size_t>(draws));
  unplanned.reserve(static_cast<std::size_t>(draws));
  for (int64_t i = 0; i < draws; ++i) {
    const DrawResult result = RunDraw(inputs, estimate, splitMix(seed + static_cast<uint64_t>(i))).run();
    walls.push_back(result.wall_s);
    unplanned.push_back(static_cast<double>(result.unplanned));
    summary.planned_mean += static_cast<double>(result.planned);
    summary.goodput_mean += inputs.useful_s / result.wall_s;
  }
  const auto n = static_cast<double>(draws);
  for (std::size_t i = 0; i < walls.size(); ++i) {
    summary.wall_mean_s += walls[i] / n;
    summary.unplanned_mean += unplanned[i] / n;
  }
  summary.planned_mean /= n;
  summary.goodput_mean /= n;
  std::sort(walls.begin(), walls.end());
  std::sort(unplanned.begin(), unplanned.end());
  summary.wall_p50_s = percentile(walls, 0.5);
  summary.wall_p90_s = percentile(walls, 0.9);
  summary.unplanned_p50 = percentile(unplanned, 0.5);
  summary.unplanned_p90 = percentile(unplanned, 0.9);
  return summary;
}

}  // namespace trainsim::goodput
