#include "cli/stacked_bar_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cli/html_escape.h"

namespace trainsim::cli {
namespace {

constexpr double kWidth = 900.0;
constexpr double kLeft = 120.0;  // row labels
constexpr double kRight = 30.0;
constexpr double kTitleHeight = 30.0;
constexpr double kLegendRowHeight = 20.0;
constexpr double kLegendItemWidth = 190.0;
constexpr double kBarHeight = 22.0;
constexpr double kBarGap = 8.0;
constexpr double kAxisHeight = 46.0;  // ticks and the unit under the bars

// A step of 1, 2 or 5 x 10^k that cuts [0, high] into at most `most` intervals.
double tickStep(double high, int most) {
  const double rough = high / most;
  const double decade = std::pow(10.0, std::floor(std::log10(rough)));
  for (double mantissa : {1.0, 2.0, 5.0, 10.0}) {
    if (mantissa * decade >= rough) return mantissa * decade;
  }
  return 10.0 * decade;
}

std::string tickText(double value, double step) {
  if (step >= 1.0) return fmt::format("{:.0f}", value);
  const int decimals = static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return fmt::format("{:.{}f}", value, decimals);
}

std::string valueText(double value) { return fmt::format("{:.4g}", value); }

double rowTotal(const ChartRow& row) {
  double total = 0.0;
  for (double value : row.values) total += std::max(0.0, value);
  return total;
}

}  // namespace

std::string stackedBarChartSvg(const StackedBarChart& chart) {
  const auto legend_per_row = static_cast<std::size_t>((kWidth - kLeft - kRight) / kLegendItemWidth);
  const std::size_t legend_rows = (chart.series.size() + legend_per_row - 1) / legend_per_row;
  const double legend_top = kTitleHeight;
  const double bars_top = legend_top + static_cast<double>(legend_rows) * kLegendRowHeight + 16.0;
  const double bars_height = static_cast<double>(chart.rows.size()) * (kBarHeight + kBarGap);
  const double height = bars_top + bars_height + kAxisHeight;
  const double plot_width = kWidth - kLeft - kRight;

  double high = 0.0;
  for (const auto& row : chart.rows) high = std::max(high, rowTotal(row));
  if (chart.reference) high = std::max(high, chart.reference->value);
  if (!(high > 0.0)) high = 1.0;
  const double step = tickStep(high * 1.02, 8);
  const double axis_high = std::ceil(high * 1.02 / step) * step;
  auto x = [&](double value) { return kLeft + value / axis_high * plot_width; };

  std::string svg =
      fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" id="{0}" width="{1}" height="{2}" viewBox="0 0 {1} {2}" )"
                  R"(font-family="sans-serif" font-size="12" role="img" aria-label="{3}">)"
                  "\n",
                  escapeHtml(chart.id), kWidth, height, escapeHtml(chart.title));
  svg += fmt::format(R"(<rect width="{}" height="{}" fill="white"/>)"
                     "\n",
                     kWidth, height);
  svg += fmt::format(R"(<text x="{}" y="20" font-size="15" font-weight="bold">{}</text>)"
                     "\n",
                     kLeft, escapeHtml(chart.title));
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const double lx = kLeft + static_cast<double>(i % legend_per_row) * kLegendItemWidth;
    const double ly = legend_top + static_cast<double>(i / legend_per_row) * kLegendRowHeight;
    svg += fmt::format(R"(<rect x="{}" y="{}" width="12" height="12" fill="{}"/>)"
                       R"(<text x="{}" y="{}">{}</text>)"
                       "\n",
                       lx, ly, chart.series[i].colour, lx + 17, ly + 10, escapeHtml(chart.series[i].label));
  }
  // Grid and axis first, so that the bars lie over the grid lines.
  const auto ticks = std::llround(axis_high / step);
  for (long long i = 0; i <= ticks; ++i) {
    const double tick = static_cast<double>(i) * step;
    const double px = x(tick);
    svg += fmt::format(R"(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="#e4e4e4"/>)"
                       R"(<text x="{0:.1f}" y="{3}" text-anchor="middle">{4}</text>)"
                       "\n",
                       px, bars_top - 4, bars_top + bars_height, bars_top + bars_height + 16, tickText(tick, step));
  }
  svg += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)"
                     "\n",
                     kLeft + plot_width / 2, height - 8, escapeHtml(chart.unit));
  for (std::size_t r = 0; r < chart.rows.size(); ++r) {
    const ChartRow& row = chart.rows[r];
    const double y = bars_top + static_cast<double>(r) * (kBarHeight + kBarGap);
    svg += fmt::format(R"(<text x="{}" y="{:.1f}" text-anchor="end">{}</text>)"
                       "\n",
                       kLeft - 8, y + kBarHeight / 2 + 4, escapeHtml(row.label));
    double start = 0.0;
    for (std::size_t s = 0; s < chart.series.size() && s < row.values.size(); ++s) {
      const double value = std::max(0.0, row.values[s]);
      if (value <= 0.0) continue;
      svg += fmt::format(R"(<rect x="{:.2f}" y="{:.1f}" width="{:.2f}" height="{}" fill="{}">)"
                         R"(<title>{}: {} {} {}</title></rect>)"
                         "\n",
                         x(start), y, x(start + value) - x(start), kBarHeight, chart.series[s].colour,
                         escapeHtml(row.label), escapeHtml(chart.series[s].label), valueText(value),
                         escapeHtml(chart.unit));
      start += value;
    }
  }
  if (chart.reference) {
    const double px = x(chart.reference->value);
    svg += fmt::format(
        R"(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="{3}" stroke-width="2" stroke-dasharray="6 4"/>)"
        R"(<text x="{4:.1f}" y="{5}" fill="{3}" text-anchor="end">{6}</text>)"
        "\n",
        px, bars_top - 6, bars_top + bars_height, chart.reference->colour, px - 4, bars_top - 8,
        escapeHtml(chart.reference->label));
  }
  svg += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#444"/>)"
                     "\n",
                     kLeft, bars_top - 4, bars_top + bars_height);
  svg += "</svg>\n";
  return svg;
}

}  // namespace trainsim::cli
