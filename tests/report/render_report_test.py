#!/usr/bin/python3
"""The HTML report in a real browser (docs/report.md).

Runs `trainsim simulate --html` and `trainsim sweep --html` on shipped presets, has headless
Chromium take a screenshot of each page, and counts the pixels of each chart's series
colours (the constants of cli/html_report.h, read from the header so that the two cannot
drift apart). A chart that is missing, empty or not drawn (broken SVG) leaves too few of
them and fails the test. Exit 77 (ctest: skipped) where Chromium or PIL is not installed.

usage: render_report_test.py --trainsim BIN --config-dir DIR --colours cli/html_report.h [--keep DIR]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
WINDOW = (1280, 3000)
# cli/stacked_bar_chart.cpp: the bars' height and the width of the plot area.
BAR_HEIGHT = 22
PLOT_WIDTH = 900 - 120 - 30
# sweep/trade_off_plot.cpp: the Pareto front's colour (points, staircase, legend).
PARETO_FRONT = "#1f6fb2"

# Llama 3 8B on one DGX H100 over four pipeline stages: quick, and both charts have four bars.
SIMULATE = ["simulate", "llama3-8b-dgx-h100", "--set", "parallelism.pp=4", "--set", "parallelism.tp=2",
            "--set", "parallelism.cp=1", "--set", "parallelism.dp=1"]
# One and two nodes of H100 (AWS P5) and of the cheaper, slower A100 (Azure ND A100 v4), every
# plan simulated: 324 plans, a front of several.
SWEEP = ["sweep", "llama3-8b-dgx-h100", "--gpus", "8,16", "--clusters", "aws-p5,azure-nd-a100-v4",
         "--fix", "cp=1", "--fix", "recompute=none", "--fix", "sequence_parallel=false", "--simulate-all",
         "--threads", "2"]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def colours_of(header):
    """{"kCompute": (r, g, b), ...} from the report_colour constants of cli/html_report.h."""
    with open(header, encoding="utf-8") as f:
        text = f.read()
    found = {}
    for name, hex_colour in re.findall(r'inline constexpr const char\* (k\w+) = "#([0-9a-fA-F]{6})"', text):
        found[name] = tuple(int(hex_colour[i:i + 2], 16) for i in (0, 2, 4))
    return found


def rgb(hex_colour):
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def run_trainsim(args, trainsim, config_dir):
    command = [trainsim, "--config-dir", config_dir] + args
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        fail("{} exited {}: {}".format(" ".join(command), done.returncode, done.stderr.strip()))


def screenshot(chromium, page, png, profile):
    command = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--force-device-scale-factor=1", "--user-data-dir=" + profile, "--no-first-run",
               "--screenshot=" + png, "--window-size={},{}".format(*WINDOW), "file://" + page]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=90)
    except subprocess.TimeoutExpired:
        fail("chromium took over 90 s on " + page)
    if done.returncode != 0 or not os.path.exists(png):
        fail("chromium exited {} without a screenshot of {}: {}".format(done.returncode, page, done.stderr[-2000:]))


def pixel_counts(png):
    from PIL import Image  # checked in main
    with Image.open(png) as image:
        counts = image.convert("RGB").getcolors(maxcolors=WINDOW[0] * WINDOW[1])
    return {colour: count for count, colour in counts}


def expect_at_least(counts, colours, minimum, what):
    found = sum(counts.get(colour, 0) for colour in colours)
    print("{}: {} pixels (at least {})".format(what, found, minimum))
    if found < minimum:
        fail("{}: {} pixels of its colours, expected at least {}: the chart did not render".format(
            what, found, minimum))


def check_simulate_page(counts, colours, result):
    stages = result["stages"]
    if len(stages) != result["parallelism"]["pp"]:
        fail("simulate --json has {} stages for pp {}".format(len(stages), result["parallelism"]["pp"]))
    # Time: each stage's bar spans the whole iteration, most of the axis (which ends at a round
    # number at most about twice the longest bar); a legend swatch is 12 x 12.
    time_series = [colours[k] for k in ("kCompute", "kTensorComm", "kDataComm", "kPipelineComm", "kBubble",
                                        "kHostDispatch")]
    expect_at_least(counts, time_series, len(stages) * BAR_HEIGHT * PLOT_WIDTH // 3, "chart-time, all series")
    compute_share = min(s["compute"] for s in stages) / result["iteration_time_s"]
    expect_at_least(counts, [colours["kCompute"]], int(len(stages) * BAR_HEIGHT * PLOT_WIDTH * compute_share / 3),
                    "chart-time, compute")
    # Memory: each bar in proportion to the stage's memory on an axis up to the capacity (or
    # the largest stage beyond it).
    memory_series = [colours[k] for k in ("kWeights", "kGradients", "kOptimizer", "kActivations", "kOtherMemory")]
    capacity = result["memory"]["capacity_bytes"]
    axis = max([capacity] + [s["memory_bytes"] for s in stages])
    expected = sum(BAR_HEIGHT * PLOT_WIDTH * s["memory_bytes"] / axis for s in stages)
    expect_at_least(counts, memory_series, int(expected / 3), "chart-memory, all series")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trainsim", required=True)
    parser.add_argument("--config-dir", required=True)
    parser.add_argument("--colours", required=True, help="cli/html_report.h")
    parser.add_argument("--keep", help="write the pages and screenshots here instead of a temporary directory")
    args = parser.parse_args()

    chromium = browser()
    if chromium is None:
        print("SKIP: no chromium on PATH")
        return SKIP
    try:
        import PIL.Image  # noqa: F401
    except ImportError:
        print("SKIP: no PIL (python3-pil)")
        return SKIP
    colours = colours_of(args.colours)
    if len(colours) < 12:
        fail("found {} report colours in {}".format(len(colours), args.colours))

    scratch = args.keep or tempfile.mkdtemp(prefix="trainsim_report_")
    os.makedirs(scratch, exist_ok=True)
    try:
        page = os.path.join(scratch, "simulate.html")
        result_json = os.path.join(scratch, "simulate.json")
        run_trainsim(SIMULATE + ["--html", page, "--json", result_json], args.trainsim, args.config_dir)
        with open(result_json, encoding="utf-8") as f:
            result = json.load(f)
        png = os.path.join(scratch, "simulate.png")
        screenshot(chromium, page, png, os.path.join(scratch, "profile"))
        check_simulate_page(pixel_counts(png), colours, result)

        page = os.path.join(scratch, "sweep.html")
        run_trainsim(SWEEP + ["--html", page], args.trainsim, args.config_dir)
        png = os.path.join(scratch, "sweep.png")
        screenshot(chromium, page, png, os.path.join(scratch, "profile"))
        # The front's points (r = 5) and its staircase; the legend's one point alone is under 80.
        expect_at_least(pixel_counts(png), [rgb(PARETO_FRONT)], 300, "chart-tradeoff, Pareto front")
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
