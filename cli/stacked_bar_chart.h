// A horizontal stacked bar chart drawn as SVG text, for the HTML report (html_report.h): one
// bar per row, one segment per series in the series' fixed colour, a legend, a linear axis
// in the values' unit, and optionally a reference line across the bars (a GPU's memory
// capacity). Every segment carries a <title>, which a browser shows on hover without script.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace trainsim::cli {

struct ChartSeries {
  std::string label;
  std::string colour;  // "#rrggbb"
};

struct ChartRow {
  std::string label;
  std::vector<double> values;  // one per series, in the axis' unit; negative counts as 0
};

struct ChartReference {
  double value = 0.0;
  std::string label;
  std::string colour;
};

struct StackedBarChart {
  std::string id;     // the <svg> element's id
  std::string title;  // above the chart
  std::string unit;   // under the axis ("seconds", "GiB")
  std::vector<ChartSeries> series;
  std::vector<ChartRow> rows;
  std::optional<ChartReference> reference;
};

// The chart as one <svg> element (no XML declaration), the same bytes for the same chart.
// Text (labels, title, unit) is escaped here.
[[nodiscard]] std::string stackedBarChartSvg(const StackedBarChart& chart);

}  // namespace trainsim::cli
