#include "sweep/trade_off_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sweep/pareto_front.h"

namespace trainsim::sweep {
namespace {

constexpr double kWidth = 900.0;
constexpr double kHeight = 560.0;
constexpr double kLeft = 90.0;
constexpr double kRight = 30.0;
constexpr double kTop = 50.0;
constexpr double kBottom = 60.0;
constexpr std::size_t kMaxFrontLabels = 10;

std::string escapeXml(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    switch (c) {
      case '&': escaped += "&amp;"; break;
      case '<': escaped += "&lt;"; break;
      case '>': escaped += "&gt;"; break;
      case '"': escaped += "&quot;"; break;
      default: escaped += c;
    }
  }
  return escaped;
}

// A logarithmic axis over [low, high] padded a little, with ticks at 1, 2 and 5 x 10^k.
class LogAxis {
 public:
  LogAxis(double low, double high, double from_px, double to_px) : from_px_(from_px), to_px_(to_px) {
    if (!(high > low)) {  // one point, or all equal: a decade around it
      low /= 3.0;
      high *= 3.0;
    }
    const double pad = 0.05 * (std::log10(high) - std::log10(low));
    low_ = std::log10(low) - pad;
    high_ = std::log10(high) + pad;
  }
  [[nodiscard]] double operator()(double value) const {
    return from_px_ + (std::log10(value) - low_) / (high_ - low_) * (to_px_ - from_px_);
  }
  [[nodiscard]] std::vector<double> ticks() const {
    std::vector<double> values;
    const bool dense = high_ - low_ < 1.5;
    for (int exponent = static_cast<int>(std::floor(low_)); exponent <= static_cast<int>(std::ceil(high_));
         ++exponent) {
      for (double mantissa : dense ? std::vector<double>{1, 2, 3, 5, 7} : std::vector<double>{1, 2, 5}) {
        const double value = mantissa * std::pow(10.0, exponent);
        const double position = std::log10(value);
        if (position >= low_ && position <= high_) values.push_back(value);
      }
    }
    return values;
  }

 private:
  double from_px_;
  double to_px_;
  double low_ = 0.0;
  double high_ = 1.0;
};

std::string tickText(double value) {
  if (value >= 1e6 || value < 1e-3) return fmt::format("{:.0e}", value);
  return fmt::format("{:g}", value);
}

// The plot area with the trade-off axes laid over it: where each plan's point lands.
struct PlotFrame {
  const SweepResult& sweep;
  TradeOffAxes axes;
  double x_scale;  // seconds -> days when x is the time to train
  LogAxis x_axis;
  LogAxis y_axis;

  [[nodiscard]] double x(std::size_t candidate) const { return x_axis(tradeOffX(sweep, axes, candidate) * x_scale); }
  [[nodiscard]] double y(std::size_t candidate) const { return y_axis(tradeOffY(sweep, axes, candidate)); }
};

// Axes that span the points (at least one).
PlotFrame plotFrame(const SweepResult& sweep, const TradeOffAxes& axes, const std::vector<std::size_t>& points) {
  const double x_scale = axes.time_to_train ? 1.0 / 86400.0 : 1.0;
  double x_low = std::numeric_limits<double>::infinity();
  double x_high = 0.0;
  double y_low = std::numeric_limits<double>::infinity();
  double y_high = 0.0;
  for (std::size_t candidate : points) {
    const double x = tradeOffX(sweep, axes, candidate) * x_scale;
    const double y = tradeOffY(sweep, axes, candidate);
    x_low = std::min(x_low, x);
    x_high = std::max(x_high, x);
    y_low = std::min(y_low, y);
    y_high = std::max(y_high, y);
  }
  return PlotFrame{sweep, axes, x_scale, LogAxis(x_low, x_high, kLeft, kWidth - kRight),
                   LogAxis(y_low, y_high, kHeight - kBottom, kTop)};
}

// The opening <svg> tag, the white background and the title.
void writeHeader(std::ostream& out, const std::string& title, const std::string& id) {
  out << fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg"{2} width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
                     R"(font-family="sans-serif" font-size="12">)"
                     "\n",
                     kWidth, kHeight, id.empty() ? std::string() : fmt::format(R"( id="{}")", escapeXml(id)));
  out << fmt::format(R"(<rect width="{}" height="{}" fill="white"/>)"
                     "\n",
                     kWidth, kHeight);
  out << fmt::format(R"(<text x="{}" y="24" text-anchor="middle" font-size="15">{}</text>)"
                     "\n",
                     kWidth / 2, escapeXml(title));
}

// Grid, ticks and axis labels.
void writeGrid(std::ostream& out, const PlotFrame& frame) {
  for (double tick : frame.x_axis.ticks()) {
    const double px = frame.x_axis(tick);
    out << fmt::format(R"(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="#e4e4e4"/>)"
                       R"(<text x="{0:.1f}" y="{3}" text-anchor="middle">{4}</text>)"
                       "\n",
                       px, kTop, kHeight - kBottom, kHeight - kBottom + 16, tickText(tick));
  }
  for (double tick : frame.y_axis.ticks()) {
    const double py = frame.y_axis(tick);
    out << fmt::format(R"(<line x1="{0}" y1="{1:.1f}" x2="{2}" y2="{1:.1f}" stroke="#e4e4e4"/>)"
                       R"(<text x="{3}" y="{4:.1f}" text-anchor="end">{5}</text>)"
                       "\n",
                       kLeft, py, kWidth - kRight, kLeft - 6, py + 4, tickText(tick));
  }
  out << fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#444"/>)"
                     "\n",
                     kLeft, kTop, kWidth - kLeft - kRight, kHeight - kTop - kBottom);
  out << fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{} (log scale)</text>)"
                     "\n",
                     (kLeft + kWidth - kRight) / 2, kHeight - 18, escapeXml(frame.axes.xLabel()));
  out << fmt::format(
      R"svg(<text transform="translate(20,{}) rotate(-90)" text-anchor="middle">{} (log scale)</text>)svg"
      "\n",
      (kTop + kHeight - kBottom) / 2, escapeXml(frame.axes.yLabel()));
}

// The deadline and the budget, where the axes measure them and they fall inside the plot.
void writeConstraintLines(std::ostream& out, const PlotFrame& frame, const Constraints& constraints) {
  if (frame.axes.time_to_train && constraints.deadline_s) {
    const double px = frame.x_axis(*constraints.deadline_s * frame.x_scale);
    if (px >= kLeft && px <= kWidth - kRight) {
      out << fmt::format(
          R"(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="#c0392b" stroke-dasharray="6 4"/>)"
          R"(<text x="{3:.1f}" y="{4}" fill="#c0392b">deadline</text>)"
          "\n",
          px, kTop, kHeight - kBottom, px + 4, kTop + 14);
    }
  }
  if (frame.axes.cost_usd && constraints.budget_usd) {
    const double py = frame.y_axis(*constraints.budget_usd);
    if (py >= kTop && py <= kHeight - kBottom) {
      out << fmt::format(
          R"(<line x1="{0}" y1="{1:.1f}" x2="{2}" y2="{1:.1f}" stroke="#c0392b" stroke-dasharray="6 4"/>)"
          R"(<text x="{3}" y="{4:.1f}" fill="#c0392b">budget</text>)"
          "\n",
          kLeft, py, kWidth - kRight, kWidth - kRight - 50, py - 4);
    }
  }
}

// The points: the others first, then the front on top, joined as a staircase and its first
// plans labelled. Returns how many plans the front has.
std::size_t writePoints(std::ostream& out, const PlotFrame& frame, const std::vector<std::size_t>& points) {
  std::vector<std::size_t> front;
  for (std::size_t candidate : points) {
    const PlanOutcome& outcome = frame.sweep.outcomes[candidate];
    if (outcome.pareto) {
      front.push_back(candidate);
      continue;
    }
    const bool dropped = outcome.status != PlanStatus::kSimulated;
    out << fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="{}" fill-opacity="0.6"/>)"
                       "\n",
                       frame.x(candidate), frame.y(candidate), dropped ? "#e6a59e" : "#8a9bb0");
  }
  std::sort(front.begin(), front.end(), [&](std::size_t a, std::size_t b) {
    return tradeOffX(frame.sweep, frame.axes, a) < tradeOffX(frame.sweep, frame.axes, b);
  });
  std::string path;
  for (std::size_t i = 0; i < front.size(); ++i) {
    const double px = frame.x(front[i]);
    const double py = frame.y(front[i]);
    if (i == 0) {
      path = fmt::format("M{:.1f},{:.1f}", px, py);
    } else {
      path += fmt::format(" H{:.1f} V{:.1f}", px, py);
    }
  }
  out << fmt::format(R"(<path d="{}" fill="none" stroke="#1f6fb2" stroke-width="1.5"/>)"
                     "\n",
                     path);
  for (std::size_t i = 0; i < front.size(); ++i) {
    const double px = frame.x(front[i]);
    const double py = frame.y(front[i]);
    out << fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="5" fill="#1f6fb2"/>)"
                       "\n",
                       px, py);
    if (i < kMaxFrontLabels) {
      out << fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="10" fill="#1f4f80">{}</text>)"
                         "\n",
                         px + 7, py - 6, escapeXml(shortPlanLabel(frame.sweep, front[i])));
    }
  }
  return front.size();
}

void writeLegend(std::ostream& out, std::size_t front_plans, const Constraints& constraints) {
  const double legend_x = kWidth - kRight - 230;
  const double legend_y = kTop + 24;
  out << fmt::format(
      R"(<circle cx="{0}" cy="{1}" r="5" fill="#1f6fb2"/><text x="{2}" y="{3}">Pareto front ({4} plans)</text>)"
      "\n",
      legend_x, legend_y, legend_x + 10, legend_y + 4, front_plans);
  out << fmt::format(
      R"(<circle cx="{0}" cy="{1}" r="3" fill="#8a9bb0"/><text x="{2}" y="{3}">other simulated plans</text>)"
      "\n",
      legend_x, legend_y + 18, legend_x + 10, legend_y + 22);
  if (constraints.deadline_s || constraints.budget_usd) {
    out << fmt::format(
        R"(<circle cx="{0}" cy="{1}" r="3" fill="#e6a59e"/><text x="{2}" y="{3}">over deadline / budget</text>)"
        "\n",
        legend_x, legend_y + 36, legend_x + 10, legend_y + 40);
  }
}

}  // namespace

std::string shortPlanLabel(const SweepResult& sweep, std::size_t candidate) {
  const PlanCandidate& plan_candidate = sweep.candidates[candidate];
  const auto& plan = plan_candidate.plan;
  std::string label;
  if (sweep.targets.size() > 1) {
    const SweepTarget& target = sweep.targets[plan_candidate.target];
    label = fmt::format("{} x{} ", target.cluster_label, target.gpus);
  }
  label += fmt::format("tp{} pp{} dp{}", plan.tp, plan.pp, plan.dp);
  if (plan.cp > 1) label += fmt::format(" cp{}", plan.cp);
  if (plan.ep > 1) label += fmt::format(" ep{}", plan.ep);
  if (plan.virtual_stages > 1) label += fmt::format(" v{}", plan.virtual_stages);
  label += fmt::format(" mb{}", plan_candidate.micro_batch_size);
  if (plan.sequence_parallel) label += " sp";
  if (plan.zero > 0) label += fmt::format(" z{}", plan.zero);
  if (plan.recompute == parallelism::Recompute::kSelective)
    label += plan.recomputesOtherModules() ? " sel_mod" : " sel";
  if (plan.recompute == parallelism::Recompute::kFull) label += " " + parallelism::recomputeLabel(plan);
  if (plan.recompute == parallelism::Recompute::kSelectiveOp) label += " sel_op";
  return label;
}

void writeTradeOffSvg(std::ostream& out, const SweepResult& sweep, const PlotOptions& options) {
  const TradeOffAxes axes = tradeOffAxes(sweep);
  std::vector<std::size_t> points;
  for (std::size_t i = 0; i < sweep.outcomes.size(); ++i) {
    if (eventSimulated(sweep.outcomes[i])) points.push_back(i);
  }
  writeHeader(out, options.title, options.id);
  if (points.empty()) {
    out << fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">no event-simulated plan</text>)"
                       "\n</svg>\n",
                       kWidth / 2, kHeight / 2);
    return;
  }
  const PlotFrame frame = plotFrame(sweep, axes, points);
  writeGrid(out, frame);
  writeConstraintLines(out, frame, options.constraints);
  const std::size_t front_plans = writePoints(out, frame, points);
  writeLegend(out, front_plans, options.constraints);
  out << "</svg>\n";
}

}  // namespace trainsim::sweep
