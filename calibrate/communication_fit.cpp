#include "calibrate/communication_fit.h"

#include <fmt/format.h>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "calibrate/robust_statistics.h"
#include "perf/collective_simulation.h"
#include "perf/parameter_names.h"

namespace trainsim::calibrate {

using perf::CommunicationParameterName;
using perf::findCommunicationParameter;
using perf::linkEfficiencyParameter;
using perf::ParameterRange;

namespace {

using topology::LinkType;

// Robust weights (robust_statistics.h) with the scale's floor (relative error): below 1%
// every point counts fully.
constexpr double kCommunicationFitMinScale = 0.01;
// Central finite-difference step in the transformed space: 2% of the value (log) or of
// the odds (logistic). Large enough to step over the simulator's nanosecond time grid and
// the small jumps of the tuner's algorithm/protocol choice.
constexpr double kJacobianStep = 0.02;
// Levenberg-Marquardt damping: start, decrease on success, increase on failure, give up.
constexpr double kInitialDamping = 1e-2;
constexpr double kDampingDown = 3.0;
constexpr double kDampingUp = 4.0;
constexpr double kMaxDamping = 1e8;
// Convergence: relative cost decrease and largest step in the transformed space.
constexpr double kCostTolerance = 1e-7;
constexpr double kStepTolerance = 1e-5;
// Efficiencies are kept strictly inside (0, 1) in the logistic map.
constexpr double kMinEfficiency = 1e-3;
constexpr double kMaxEfficiency = 0.999;
// Weak prior towards the starting (documented default) value, in the transformed space: a
// parameter the measurements do not constrain (the channel bandwidth of a curve with no
// pipeline-fill signature) stays where it was instead of drifting off; moving one that
// they do by a factor e costs as much as a 1% error on one point.
constexpr double kPriorWeight = 0.01;
// And a hard bound: at most two decades either side of the start (log-mapped parameters).
constexpr double kMaxLogDeviation = 4.605170185988091;  // ln(100)

double logit(double p) { return std::log(p / (1.0 - p)); }

struct Unknown {
  const CommunicationParameterName* name;
  std::string gpu_key;  // the cluster's GPU, for a per-GPU parameter
  double toValue(double theta) const {
    return name->range == ParameterRange::kEfficiency ? 1.0 / (1.0 + std::exp(-theta)) : std::exp(theta);
  }
  // The range the fit keeps theta in: an efficiency's limits, or two decades of the start.
  [[nodiscard]] std::pair<double, double> thetaBounds(double start_theta) const {
    if (name->range == ParameterRange::kEfficiency) return {logit(kMinEfficiency), logit(kMaxEfficiency)};
    return {start_theta - kMaxLogDeviation, start_theta + kMaxLogDeviation};
  }
  // Moved by the fit onto a limit of thetaBounds (a value that starts on one and stays is not).
  [[nodiscard]] bool atBound(double theta, double start_theta) const {
    constexpr double kSlack = 1e-9;
    if (std::abs(theta - start_theta) <= kSlack) return false;
    const auto [low, high] = thetaBounds(start_theta);
    return theta <= low + kSlack || theta >= high - kSlack;
  }
  double toTheta(double value) const {
    if (name->range == ParameterRange::kEfficiency) {
      return logit(std::clamp(value, kMinEfficiency, kMaxEfficiency));
    }
    return std::log(std::max(value, 1e-6));
  }
};

struct Point {
  std::size_t curve;
  std::size_t sample;
};

// A simulation error while fitting a measured curve, placed at the curve (the log or results
// file and line it came from): the simulator's own message names no file.
template <class T>
Expected<T> atCurve(const MeasuredCollective& curve, Expected<T> result) {
  if (result.ok() || curve.where.empty()) return result;
  Error error = result.error();
  error.message =
      fmt::format("simulating this measured {} on the cluster: {}", perf::collectiveOpName(curve.op), error.toString());
  error.where = curve.where;
  error.key_path.clear();
  return error;
}

// The files the curves came from, for a message about all of them ("a.log, b.yaml").
std::string sourceList(std::span<const MeasuredCollective> curves) {
  std::vector<std::string> sources;
  for (const auto& curve : curves) {
    if (!curve.source.empty() && std::find(sources.begin(), sources.end(), curve.source) == sources.end()) {
      sources.push_back(curve.source);
    }
  }
  std::string text;
  for (const auto& source : sources) text += (text.empty() ? "" : ", ") + source;
  return text;
}

class Problem {
 public:
  Problem(const topology::Cluster& cluster, std::span<const MeasuredCollective> curves,
          const perf::CommunicationParameters& start, std::vector<Unknown> unknowns,
          std::vector<std::vector<int64_t>> groups, double min_bytes)
      : cluster_(cluster), curves_(curves), start_(start), unknowns_(std::move(unknowns)), groups_(std::move(groups)) {
    for (std::size_t c = 0; c < curves.size(); ++c) {
      for (std::size_t s = 0; s < curves[c].samples.size(); ++s) {
        if (curves[c].samples[s].bytes >= min_bytes) points_.push_back({c, s});
      }
    }
  }

  [[nodiscard]] std::size_t pointCount() const { return points_.size(); }

  [[nodiscard]] perf::CommunicationParameters parameters(const Eigen::VectorXd& theta) const {
    perf::CommunicationParameters result = start_;
    for (std::size_t j = 0; j < unknowns_.size(); ++j) {
      unknowns_[j].name->set(result, unknowns_[j].gpu_key, unknowns_[j].toValue(theta(static_cast<Eigen::Index>(j))));
    }
    return result;
  }

  // Keeps log-mapped parameters within kMaxLogDeviation of the start and efficiencies within
  // [kMinEfficiency, kMaxEfficiency].
  [[nodiscard]] Eigen::VectorXd bounded(Eigen::VectorXd theta, const Eigen::VectorXd& start) const {
    for (std::size_t j = 0; j < unknowns_.size(); ++j) {
      const auto i = static_cast<Eigen::Index>(j);
      const auto [low, high] = unknowns_[j].thetaBounds(start(i));
      theta(i) = std::clamp(theta(i), low, high);
    }
    return theta;
  }

  // Simulated times of every sample of every curve.
  std::vector<std::vector<double>> simulateAll(const perf::CommunicationParameters& parameters) {
    std::vector<std::vector<double>> times(curves_.size());
    for (std::size_t c = 0; c < curves_.size(); ++c) {
      perf::CollectiveSimulator simulator(cluster_, parameters);
      for (const auto& sample : curves_[c].samples) {
        perf::CollectiveRequest request{curves_[c].op, groups_[c], sample.bytes, std::nullopt, std::nullopt};
        times[c].push_back(valueOrThrow(atCurve(curves_[c], simulator.simulate(request))).time_s * 1e6);
        ++simulations_;
      }
    }
    return times;
  }

  // log(t_sim / t_measured) of the fitted points, then the prior rows.
  Eigen::VectorXd residuals(const Eigen::VectorXd& theta, const Eigen::VectorXd& start) {
    const auto times = simulateAll(parameters(theta));
    Eigen::VectorXd r(static_cast<Eigen::Index>(points_.size() + unknowns_.size()));
    for (std::size_t j = 0; j < unknowns_.size(); ++j) {
      const auto i = static_cast<Eigen::Index>(j);
      r(static_cast<Eigen::Index>(points_.size()) + i) = kPriorWeight * (theta(i) - start(i));
    }
    for (std::size_t i = 0; i < points_.size(); ++i) {
      const auto& point = points_[i];
      r(static_cast<Eigen::Index>(i)) =
          std::log(times[point.curve][point.sample] / curves_[point.curve].samples[point.sample].time_us);
    }
    return r;
  }

  [[nodiscard]] int simulations() const { return simulations_; }

 private:
  const topology::Cluster& cluster_;
  std::span<const MeasuredCollective> curves_;
  perf::CommunicationParameters start_;
  std::vector<Unknown> unknowns_;
  std::vector<std::vector<int64_t>> groups_;
  std::vector<Point> points_;
  int simulations_ = 0;
};

// Huber weights of the first `points` rows (the data); the prior rows keep weight 1.
Eigen::VectorXd huberWeights(const Eigen::VectorXd& r, std::size_t points) {
  std::vector<double> absolute(points);
  for (std::size_t i = 0; i < points; ++i) absolute[i] = std::abs(r(static_cast<Eigen::Index>(i)));
  const double scale = std::max(kCommunicationFitMinScale, kMadToSigma * median(absolute));
  Eigen::VectorXd w = Eigen::VectorXd::Ones(r.size());
  for (std::size_t i = 0; i < points; ++i) {
    const double u = std::abs(r(static_cast<Eigen::Index>(i))) / scale;
    w(static_cast<Eigen::Index>(i)) = u <= kHuberK ? 1.0 : kHuberK / u;
  }
  return w;
}

// RMS of t_sim / t_measured - 1 over the first `points` rows.
double rmsRelative(const Eigen::VectorXd& log_residuals, std::size_t points) {
  if (points == 0) return 0.0;
  double sum = 0.0;
  for (std::size_t i = 0; i < points; ++i) sum += std::pow(std::expm1(log_residuals(static_cast<Eigen::Index>(i))), 2);
  return std::sqrt(sum / static_cast<double>(points));
}

LinkType networkLinkType(const topology::ClusterSpec& spec) {
  if (!spec.inter_node) return LinkType::kIci;
  switch (spec.inter_node->protocol) {
    case topology::NetworkProtocol::kInfiniBand: return LinkType::kInfiniBand;
    case topology::NetworkProtocol::kRoce: return LinkType::kRoce;
    case topology::NetworkProtocol::kEthernet:
    case topology::NetworkProtocol::kEfa: return LinkType::kEthernet;
  }
  return LinkType::kEthernet;
}

LinkType intraNodeLinkType(const topology::ClusterSpec& spec) {
  switch (spec.intra_node.fabric) {
    case topology::IntraNodeFabric::kNvSwitch:
    case topology::IntraNodeFabric::kNvLinkMesh: return LinkType::kNvLink;
    case topology::IntraNodeFabric::kPcie: return LinkType::kPcie;
    case topology::IntraNodeFabric::kTorus: return LinkType::kIci;
  }
  return LinkType::kNvLink;
}

// Whether `name` is the protocol efficiency of `spec`'s network links.
bool isNetworkEfficiencyParameter(const topology::ClusterSpec& spec, std::string_view name) {
  return spec.inter_node && name == linkEfficiencyParameter(networkLinkType(spec));
}

}  // namespace

Expected<std::vector<int64_t>> placeMeasuredGroup(const topology::Cluster& cluster, const MeasuredCollective& curve) {
  const auto& spec = cluster.spec();
  if (curve.nodes() > spec.nodes) {
    return Error{ExitCode::kInvalidInput, curve.where, "",
                 fmt::format("the measured group spans {} nodes but cluster {} has {}; add nodes with --set nodes=N",
                             curve.nodes(), spec.name, spec.nodes)};
  }
  if (curve.maxPerNode() > spec.gpus_per_node) {
    return Error{ExitCode::kInvalidInput, curve.where, "",
                 fmt::format("the measured group has {} GPUs on one node but cluster {} has {} per node",
                             curve.maxPerNode(), spec.name, spec.gpus_per_node)};
  }
  std::vector<int64_t> ranks;
  for (std::size_t node = 0; node < curve.ranks_per_node.size(); ++node) {
    for (int64_t local = 0; local < curve.ranks_per_node[node]; ++local) {
      ranks.push_back(static_cast<int64_t>(node) * spec.gpus_per_node + local);
    }
  }
  return ranks;
}

std::vector<std::string> constrainedParameters(const topology::Cluster& cluster,
                                               std::span<const MeasuredCollective> curves) {
  const auto& spec = cluster.spec();
  std::set<std::string> chosen;
  std::vector<std::string> result;
  auto add = [&](std::string_view name) {
    if (chosen.insert(std::string(name)).second) result.emplace_back(name);
  };
  bool single = false;
  bool multi = false;
  std::set<double> single_node_all_reduce_sizes;
  for (const auto& curve : curves) {
    (curve.nodes() > 1 ? multi : single) = true;
    if (curve.op == perf::CollectiveOp::kAllReduce && curve.nodes() == 1) {
      for (const auto& sample : curve.samples) single_node_all_reduce_sizes.insert(sample.bytes);
    }
  }
  if (single) add(linkEfficiencyParameter(intraNodeLinkType(spec)));
  // A single-node all-reduce on NVSwitch nodes with NVLink SHARP runs NVLS from a few MiB on,
  // at NVLS's own share of the NVLink (perf/collective_nvls.cpp), which the links' efficiency
  // does not move: its level is fitted where the curves give it two sizes at least (one
  // cannot tell it from the latency).
  const bool nvls_nodes =
      spec.intra_node.nvls && spec.intra_node.fabric == topology::IntraNodeFabric::kNvSwitch && !spec.explicit_graph;
  if (nvls_nodes && single_node_all_reduce_sizes.size() >= 2) add("nvls_efficiency_per_gpu");
  // A cluster that carries its measured network efficiency (inter_node.efficiency) runs its
  // network links at it whatever the protocol's parameter says: nothing there to fit.
  if (multi && spec.inter_node && !spec.inter_node->efficiency) add(linkEfficiencyParameter(networkLinkType(spec)));
  if (!curves.empty()) {
    add("launch_overhead_us");
    add("channel_bandwidth_GBps");
  }
  return result;
}

Expected<std::vector<double>> simulateCurve(const topology::Cluster& cluster,
                                            const perf::CommunicationParameters& parameters,
                                            const MeasuredCollective& curve) {
  TRAINSIM_ASSIGN_OR_RETURN(const auto ranks, placeMeasuredGroup(cluster, curve));
  perf::CollectiveSimulator simulator(cluster, parameters);
  std::vector<double> times;
  for (const auto& sample : curve.samples) {
    perf::CollectiveRequest request{curve.op, ranks, sample.bytes, std::nullopt, std::nullopt};
    TRAINSIM_ASSIGN_OR_RETURN(const perf::CollectiveResult result, atCurve(curve, simulator.simulate(request)));
    times.push_back(result.time_s * 1e6);
  }
  return times;
}

Expected<CommunicationFit> fitCommunicationParameters(const topology::Cluster& cluster,
                                                      std::span<const MeasuredCollective> curves,
                                                      const perf::CommunicationParameters& start,
                                                      const CommunicationFitOptions& options) {
  return catchInputErrors([&] {
    if (curves.empty()) throwInputError("", "", "no measured collective to fit");
    const std::vector<std::string> names =
        options.parameters.empty() ? constrainedParameters(cluster, curves) : options.parameters;
    std::vector<Unknown> unknowns;
    for (const auto& name : names) {
      const auto* entry = findCommunicationParameter(name);
      if (!entry) throwInputError("", name, "not a communication parameter a calibration can set");
      const auto& network = cluster.spec().inter_node;
      if (network && network->efficiency && isNetworkEfficiencyParameter(cluster.spec(), name)) {
        throwInputError("", name,
                        fmt::format("cluster {} sets inter_node.efficiency ({}), which its network links run at: "
                                    "remove it from the cluster file to fit {}",
                                    cluster.spec().name, *network->efficiency, name));
      }
      // On AMD hosts NCCL's tuner takes the AMD values in place of these (perf::forHostCpu):
      // fitting them would move nothing.
      if (cluster.spec().pcie.host_cpu == topology::HostCpu::kAmd) {
        for (const perf::AmdHostParameter& replaced : perf::amdHostParameters()) {
          if (name == replaced.name) {
            throwInputError("", name,
                            fmt::format("cluster {} has AMD hosts (pcie.host_cpu: amd), where NCCL's tuner takes {} "
                                        "in its place: fit {}",
                                        cluster.spec().name, replaced.amd_name, replaced.amd_name));
          }
        }
      }
      const Unknown unknown{entry, entry->per_gpu ? cluster.spec().gpu.key : std::string()};
      // A fit moves a parameter by factors from where it starts: one at 0 (an optional cap
      // that is off) has no scale to move from.
      if (entry->range != ParameterRange::kEfficiency && !(entry->get(start, unknown.gpu_key) > 0.0)) {
        throwInputError("", name,
                        "starts at 0 (off), which a fit cannot scale from: give it a starting value in a "
                        "calibration file (--calibration) or fit another parameter");
      }
      unknowns.push_back(unknown);
    }
    std::vector<std::vector<int64_t>> groups;
    for (const auto& curve : curves) groups.push_back(valueOrThrow(placeMeasuredGroup(cluster, curve)));
    Problem problem(cluster, curves, start, unknowns, groups, options.min_bytes);
    if (problem.pointCount() < unknowns.size() + 1) {
      throwInputError(sourceList(curves), "",
                      fmt::format("{} measured points{} for {} parameters: measure more sizes or fit fewer "
                                  "parameters (--fit)",
                                  problem.pointCount(), options.min_bytes > 0.0 ? " from --fit-min-bytes on" : "",
                                  unknowns.size()));
    }

    const auto p = static_cast<Eigen::Index>(unknowns.size());
    Eigen::VectorXd theta(p);
    for (Eigen::Index j = 0; j < p; ++j) {
      const Unknown& unknown = unknowns[static_cast<std::size_t>(j)];
      theta(j) = unknown.toTheta(unknown.name->get(start, unknown.gpu_key));
    }
    const Eigen::VectorXd start_theta = theta;
    const std::size_t points = problem.pointCount();
    Eigen::VectorXd r = problem.residuals(theta, start_theta);
    const Eigen::VectorXd r_before = r;
    double damping = kInitialDamping;
    int iterations = 0;
    for (; iterations < options.max_iterations; ++iterations) {
      const Eigen::VectorXd w = huberWeights(r, points);
      const double cost = r.cwiseProduct(w).dot(r);
      Eigen::MatrixXd jacobian(r.size(), p);
      for (Eigen::Index j = 0; j < p; ++j) {
        Eigen::VectorXd up = theta;
        Eigen::VectorXd down = theta;
        up(j) += kJacobianStep;
        down(j) -= kJacobianStep;
        jacobian.col(j) =
            (problem.residuals(up, start_theta) - problem.residuals(down, start_theta)) / (2.0 * kJacobianStep);
      }
      const Eigen::MatrixXd jtw = jacobian.transpose() * w.asDiagonal();
      const Eigen::MatrixXd normal = jtw * jacobian;
      const Eigen::VectorXd gradient = jtw * r;
      bool accepted = false;
      double step_size = 0.0;
      double new_cost = cost;
      while (damping <= kMaxDamping) {
        Eigen::MatrixXd damped = normal;
        for (Eigen::Index j = 0; j < p; ++j) damped(j, j) += damping * std::max(normal(j, j), 1e-12);
        const Eigen::VectorXd step = damped.ldlt().solve(-gradient);
        const Eigen::VectorXd candidate = problem.bounded(theta + step, start_theta);
        const Eigen::VectorXd candidate_r = problem.residuals(candidate, start_theta);
        new_cost = candidate_r.cwiseProduct(w).dot(candidate_r);
        if (new_cost < cost) {
          step_size = (candidate - theta).cwiseAbs().maxCoeff();
          theta = candidate;
          r = candidate_r;
          damping = std::max(damping / kDampingDown, 1e-9);
          accepted = true;
          break;
        }
        damping *= kDampingUp;
      }
      if (!accepted) break;
      if ((cost - new_cost) <= kCostTolerance * cost || step_size <= kStepTolerance) {
        ++iterations;
        break;
      }
    }

    CommunicationFit fit;
    fit.parameters = problem.parameters(theta);
    for (std::size_t j = 0; j < unknowns.size(); ++j) {
      const Unknown& unknown = unknowns[j];
      const auto i = static_cast<Eigen::Index>(j);
      fit.values.push_back({unknown.name->name, unknown.name->get(start, unknown.gpu_key),
                            unknown.name->get(fit.parameters, unknown.gpu_key), unknown.gpu_key,
                            unknown.atBound(theta(i), start_theta(i))});
    }
    fit.points = static_cast<int>(problem.pointCount());
    fit.iterations = iterations;
    fit.rms_relative_error_before = rmsRelative(r_before, points);
    fit.rms_relative_error_after = rmsRelative(r, points);
    const auto before = problem.simulateAll(start);
    const auto after = problem.simulateAll(fit.parameters);
    for (std::size_t c = 0; c < curves.size(); ++c) fit.curves.push_back({&curves[c], before[c], after[c]});
    fit.simulations = problem.simulations();
    return fit;
  });
}

}  // namespace trainsim::calibrate
