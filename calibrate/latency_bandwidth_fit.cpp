#include "calibrate/latency_bandwidth_fit.h"
#include "calibrate/robust_statistics.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>

namespace trainsim::calibrate {
namespace {

// Robust weights: robust_statistics.h. Floor of the robust scale, relative error: below 0.5% every point counts fully
// (a curve that the model fits to rounding should not have its best points down-weighted).
constexpr double kAlphaBetaFitMinScale = 0.005;
constexpr int kMaxRounds = 50;

// Weighted least squares for (alpha, gamma = 1/beta) >= 0 in relative error.
Eigen::Vector2d solve(const std::vector<CollectiveSample>& samples, const Eigen::VectorXd& weights) {
  const auto n = static_cast<Eigen::Index>(samples.size());
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& sample = samples[static_cast<std::size_t>(i)];
    const double w = std::sqrt(weights(i));
    a(i, 0) = w / sample.time_us;
    a(i, 1) = w * sample.bytes / sample.time_us;
    b(i) = w;
  }
  Eigen::Vector2d x = a.colPivHouseholderQr().solve(b);
  if (x(0) < 0.0 || x(1) <= 0.0) {
    // One of the two at its bound: the better of the one-parameter fits.
    const double gamma = a.col(1).dot(b) / a.col(1).squaredNorm();
    const double alpha = a.col(0).dot(b) / a.col(0).squaredNorm();
    const double cost_gamma = (a.col(1) * gamma - b).squaredNorm();
    const double cost_alpha = (a.col(0) * alpha - b).squaredNorm();
    x = cost_gamma <= cost_alpha ? Eigen::Vector2d(0.0, gamma) : Eigen::Vector2d(alpha, 0.0);
  }
  return x;
}

}  // namespace

Expected<LatencyBandwidthFit> fitLatencyBandwidth(const std::vector<CollectiveSample>& samples, double bus_factor) {
  if (samples.size() < 2 || samples.front().bytes == samples.back().bytes) {
    return Error{ExitCode::kInvalidInput, "", "", "a latency-bandwidth fit needs at least two sizes"};
  }
  const auto n = static_cast<Eigen::Index>(samples.size());
  Eigen::VectorXd weights = Eigen::VectorXd::Ones(n);
  Eigen::Vector2d x = solve(samples, weights);
  std::vector<double> residuals(samples.size());
  int rounds = 1;
  for (; rounds < kMaxRounds; ++rounds) {
    for (std::size_t i = 0; i < samples.size(); ++i) {
      residuals[i] = (x(0) + samples[i].bytes * x(1)) / samples[i].time_us - 1.0;
    }
    std::vector<double> absolute(residuals.size());
    std::transform(residuals.begin(), residuals.end(), absolute.begin(), [](double r) { return std::abs(r); });
    const double scale = std::max(kAlphaBetaFitMinScale, kMadToSigma * median(absolute));
    Eigen::VectorXd next(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      const double u = std::abs(residuals[static_cast<std::size_t>(i)]) / scale;
      next(i) = u <= kHuberK ? 1.0 : kHuberK / u;
    }
    const Eigen::Vector2d updated = solve(samples, next);
    const bool converged = (updated - x).cwiseAbs().maxCoeff() <= 1e-9 * std::max(1.0, x.cwiseAbs().maxCoeff()) ||
                           (next - weights).cwiseAbs().maxCoeff() < 1e-6;
    x = updated;
    weights = next;
    if (converged) break;
  }

  LatencyBandwidthFit fit;
  fit.latency_us = x(0);
  fit.algbw_GBps = x(1) > 0.0 ? 1.0 / x(1) * 1e-3 : 0.0;  // bytes/us -> GB/s
  fit.busbw_GBps = fit.algbw_GBps * bus_factor;
  fit.points = static_cast<int>(samples.size());
  fit.iterations = rounds;
  double mean_log = 0.0;
  for (const auto& sample : samples) mean_log += std::log(sample.time_us);
  mean_log /= static_cast<double>(samples.size());
  double ss_res = 0.0;
  double ss_tot = 0.0;
  double sum_sq = 0.0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const double predicted = x(0) + samples[i].bytes * x(1);
    const double relative = predicted / samples[i].time_us - 1.0;
    sum_sq += relative * relative;
    fit.max_relative_residual = std::max(fit.max_relative_residual, std::abs(relative));
    const double log_measured = std::log(samples[i].time_us);
    ss_res += std::pow(std::log(std::max(predicted, 1e-12)) - log_measured, 2);
    ss_tot += std::pow(log_measured - mean_log, 2);
    if (weights(static_cast<Eigen::Index>(i)) < 0.5) ++fit.downweighted;
  }
  fit.rms_relative_residual = std::sqrt(sum_sq / static_cast<double>(samples.size()));
  fit.r_squared_log_time = ss_tot > 0.0 ? 1.0 - ss_res / ss_tot : 1.0;
  return fit;
}

}  // namespace trainsim::calibrate
