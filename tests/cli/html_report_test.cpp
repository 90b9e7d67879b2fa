// `simulate --html` and `sweep --html` end to end (issue 39): one self-contained document with
// its charts, user text escaped, the same bytes run to run; and the per-stage "stages" of
// `simulate --json` the time chart draws. tests/report/render_report_test.py renders the
// pages in a browser.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trainsim_run.h"

namespace trainsim::cli_testing {
namespace {

// Llama 3 8B on one DGX H100 over four pipeline stages (tp 2, dp 1): quick, several bars.
const std::vector<std::string> kFourStages = {"--set", "parallelism.pp=4", "--set", "parallelism.tp=2",
                                              "--set", "parallelism.cp=1", "--set", "parallelism.dp=1"};

std::vector<std::string> simulateArgs(const std::string& experiment, std::vector<std::string> more) {
  std::vector<std::string> args = {"simulate", experiment};
  args.insert(args.end(), kFourStages.begin(), kFourStages.end());
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::vector<std::string> sweepArgs(const std::string& experiment, std::vector<std::string> more) {
  std::vector<std::string> args = {"sweep", experiment, "--gpus", "8,16", "--fix", "cp=1", "--threads", "2"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++count;
  return count;
}

// One HTML document that needs nothing from outside: no script, no stylesheet, font, image
// or frame to fetch, no URL but the SVG namespace (a name, never fetched).
void expectSelfContainedDocument(const std::string& html) {
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n<html lang=\"en\">\n", 0), 0U) << html.substr(0, 200);
  EXPECT_EQ(occurrences(html, "<html"), 1U);
  EXPECT_EQ(occurrences(html, "<body>"), 1U);
  ASSERT_GE(html.size(), 8U);
  EXPECT_EQ(html.substr(html.size() - 8), "</html>\n");
  EXPECT_EQ(occurrences(html, "<meta charset=\"utf-8\">"), 1U);
  EXPECT_EQ(occurrences(html, "<svg"), occurrences(html, "</svg>"));
  std::string rest = html;
  const std::string svg_namespace = "xmlns=\"http://www.w3.org/2000/svg\"";
  for (std::size_t at = rest.find(svg_namespace); at != std::string::npos; at = rest.find(svg_namespace)) {
    rest.erase(at, svg_namespace.size());
  }
  for (const char* outside :
       {"<script", "http:", "https:", "//", "src=", "href=", "url(", "@import", "<link", "<iframe", "<img"}) {
    EXPECT_EQ(rest.find(outside), std::string::npos) << outside;
  }
}

TEST(HtmlReport, SimulateWritesOneSelfContainedPageWithBothCharts) {
  const ScratchDir dir;
  const TrainsimRun run =
      runTrainsim(simulateArgs("llama3-8b-dgx-h100", {"--html", dir / "report.html", "--json", dir / "r.json"}));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string html = fileText(dir / "report.html");
  expectSelfContainedDocument(html);
  EXPECT_EQ(occurrences(html, "<svg"), 2U);
  EXPECT_EQ(occurrences(html, "id=\"chart-time\""), 1U);
  EXPECT_EQ(occurrences(html, "id=\"chart-memory\""), 1U);
  // A bar per stage in each chart, in the series' fixed colours (cli/html_report.h).
  for (const char* colour : {"#4c78a8", "#f58518", "#e45756", "#17becf", "#2f4b7c", "#bcbd22", "#ff9da6", "#9d755d"}) {
    EXPECT_GE(occurrences(html, std::string("fill=\"") + colour + "\""), 2U) << colour;
  }
  // Each stage has a bar in both charts, every part of a bar a tooltip.
  for (int stage = 0; stage < 4; ++stage) {
    EXPECT_GE(occurrences(html, fmt::format("<title>stage {}", stage)), 2U + 5U) << stage;
  }
  for (const char* heading : {"Where the time goes", "Memory per GPU", "iteration time", "tokens/s", "TFLOP/s", "MFU",
                              "time to train", "GPU-hours", "expected error", "goodput"}) {
    EXPECT_NE(html.find(heading), std::string::npos) << heading;
  }
  // The table holds the JSON's numbers: the critical stage's compute, to 4 decimals.
  const auto json = nlohmann::json::parse(fileText(dir / "r.json"));
  const double compute = json["breakdown_s"]["compute"].get<double>();
  EXPECT_NE(html.find(fmt::format("<td>{:.4f}</td>", compute)), std::string::npos);
}

TEST(HtmlReport, SimulateJsonHasEveryStage) {
  const TrainsimRun run = runTrainsim(simulateArgs("llama3-8b-dgx-h100", {"--json", "-"}));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  const auto& stages = json["stages"];
  ASSERT_EQ(stages.size(), 4U);
  const double iteration = json["iteration_time_s"].get<double>();
  bool critical_found = false;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const auto& stage = stages[s];
    EXPECT_EQ(stage["stage"], s);
    double sum = 0.0;
    for (const char* part : {"compute", "tp_comm_exposed", "dp_comm_exposed", "pp_comm_exposed", "pipeline_bubble",
                             "host_dispatch_exposed"}) {
      sum += stage[part].get<double>();
    }
    EXPECT_NEAR(sum, iteration, 1e-9 * iteration) << "stage " << s;
    // dp 1: no stage waits on a data-parallel collective (a stage that ends early idles).
    EXPECT_EQ(stage["dp_comm_exposed"].get<double>(), 0.0) << "stage " << s;
    EXPECT_GT(stage["memory_bytes"].get<double>(), 0.0);
    EXPECT_LE(stage["memory_bytes"].get<double>(), json["memory"]["peak_bytes_per_gpu"].get<double>());
    bool same = true;
    for (const auto& [key, value] : json["breakdown_s"].items()) same = same && stage[key] == value;
    critical_found = critical_found || same;
  }
  EXPECT_TRUE(critical_found) << "breakdown_s is no stage's";
}

TEST(HtmlReport, TheSameRunGivesTheSameBytes) {
  const ScratchDir dir;
  for (const char* name : {"a.html", "b.html"}) {
    ASSERT_EQ(runTrainsim(simulateArgs("llama3-8b-dgx-h100", {"--html", dir / name})).exit_code, 0);
    ASSERT_EQ(runTrainsim(sweepArgs("llama3-8b-dgx-h100", {"--html", dir / (std::string("sweep-") + name)})).exit_code,
              0);
  }
  EXPECT_EQ(fileText(dir / "a.html"), fileText(dir / "b.html"));
  EXPECT_EQ(fileText(dir / "sweep-a.html"), fileText(dir / "sweep-b.html"));
  // Threads do not change a sweep's bytes.
  ASSERT_EQ(runTrainsim({"sweep", "llama3-8b-dgx-h100", "--gpus", "8,16", "--fix", "cp=1", "--threads", "1", "--html",
                         dir / "sweep-c.html"})
                .exit_code,
            0);
  EXPECT_EQ(fileText(dir / "sweep-a.html"), fileText(dir / "sweep-c.html"));
}

// Names come from files: a name with markup in it is text on the page, never markup.
TEST(HtmlReport, NamesFromFilesAreEscaped) {
  const ScratchDir dir;
  const std::string experiment = dir / "experiment.yaml";
  std::ofstream(experiment) << "name: 'x<script>&\"y'\n"
                               "model: llama3-8b\n"
                               "cluster: {name: '<b>c&\"</b>', gpu: h100-sxm, nodes: 1, gpus_per_node: 8}\n"
                               "training: {seq_len: 4096, global_batch_size: 16, tokens: 1e9}\n"
                               "parallelism: {tp: 2, pp: 2}\n";
  ASSERT_EQ(runTrainsim({"simulate", experiment, "--html", dir / "simulate.html"}).exit_code, 0);
  ASSERT_EQ(
      runTrainsim({"sweep", experiment, "--fix", "tp=2", "--html", dir / "sweep.html", "--threads", "2"}).exit_code, 0);
  for (const char* page : {"simulate.html", "sweep.html"}) {
    const std::string html = fileText(dir / page);
    expectSelfContainedDocument(html);
    EXPECT_NE(html.find("x&lt;script&gt;&amp;&quot;y"), std::string::npos) << page;
    EXPECT_EQ(html.find("x<script>"), std::string::npos) << page;
    EXPECT_EQ(html.find("&\"y"), std::string::npos) << page;
  }
  const std::string simulate = fileText(dir / "simulate.html");
  EXPECT_NE(simulate.find("&lt;b&gt;c&amp;&quot;&lt;/b&gt;"), std::string::npos);
  EXPECT_EQ(simulate.find("<b>c"), std::string::npos);
}

TEST(HtmlReport, SweepWritesTheTradeOffAndTheRankedPlans) {
  const ScratchDir dir;
  const TrainsimRun run = runTrainsim(sweepArgs("llama3-8b-dgx-h100", {"--html", dir / "sweep.html", "--top", "5"}));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string html = fileText(dir / "sweep.html");
  expectSelfContainedDocument(html);
  EXPECT_EQ(occurrences(html, "<svg"), 1U);
  EXPECT_EQ(occurrences(html, "id=\"chart-tradeoff\""), 1U);
  EXPECT_NE(html.find("Pareto front"), std::string::npos);
  EXPECT_NE(html.find("plans: "), std::string::npos);  // the summary
  EXPECT_EQ(occurrences(html, "<tr><td>"), 5U);        // the top 5, ranked
  EXPECT_NE(html.find("<tr><td>1</td><td>dgx-h100</td>"), std::string::npos) << "two targets: the cluster is shown";
  // The plot of --plot is the same drawing, less its id.
  ASSERT_EQ(runTrainsim(sweepArgs("llama3-8b-dgx-h100", {"--plot", dir / "plot.svg", "--top", "5"})).exit_code, 0);
  std::string plot = fileText(dir / "plot.svg");
  plot.insert(plot.find(" width="), " id=\"chart-tradeoff\"");
  EXPECT_NE(html.find(plot), std::string::npos);
}

TEST(HtmlReport, ThePageMayGoToStdoutAloneWithNothingElseOnIt) {
  const TrainsimRun run = runTrainsim(simulateArgs("llama3-8b-dgx-h100", {"--html", "-"}));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  expectSelfContainedDocument(run.out);
  const TrainsimRun sweep = runTrainsim(sweepArgs("llama3-8b-dgx-h100", {"--html", "-"}));
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  expectSelfContainedDocument(sweep.out);
  for (const auto& args : {simulateArgs("llama3-8b-dgx-h100", {"--html", "-", "--json", "-"}),
                           sweepArgs("llama3-8b-dgx-h100", {"--csv", "-", "--html", "-"})}) {
    const TrainsimRun both = runTrainsim(args);
    EXPECT_EQ(both.exit_code, 2);
    EXPECT_NE(both.err.find("only one output can go to stdout"), std::string::npos) << both.err;
  }
}

}  // namespace
}  // namespace trainsim::cli_testing
