#include "sweep/plan_space.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "base/config_node.h"
#include "base/error.h"
#include "parallelism/parallel_plan.h"

namespace trainsim::sweep {
namespace {

constexpr std::array<std::string_view, kDimensionCount> kNames = {"tp",
                                                                  "pp",
                                                                  "dp",
                                                                  "cp",
                                                                  "ep",
                                                                  "virtual_stages",
                                                                  "micro_batch_size",
                                                                  "recompute",
                                                                  "zero",
                                                                  "sequence_parallel",
                                                                  "etp",
                                                                  "recompute_num_layers",
                                                                  "schedule"};
// In parallelism::Recompute's order; the enumeration's default is the first three.
constexpr std::array<std::string_view, 4> kRecomputeNames = {"none", "selective", "full", "selective_op"};
// In parallelism::PipelineSchedule's order.
constexpr std::array<parallelism::PipelineSchedule, 6> kSchedules = {
    parallelism::PipelineSchedule::kGpipe,      parallelism::PipelineSchedule::kOneFOneB,
    parallelism::PipelineSchedule::kZeroBubble, parallelism::PipelineSchedule::kZeroBubbleV,
    parallelism::PipelineSchedule::kDualPipeV,  parallelism::PipelineSchedule::kDualPipe};

std::string knownNames() {
  std::string text;
  for (std::size_t i = 0; i < kNames.size(); ++i) text += (i == 0 ? "" : ", ") + std::string(kNames[i]);
  return text;
}

Dimension parseDimension(std::string_view name, const std::string& option_text) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<Dimension>(i);
  }
  std::string message = "unknown dimension '" + std::string(name) + "'";
  std::size_t best = std::numeric_limits<std::size_t>::max();
  std::string_view suggestion;
  for (auto candidate : kNames) {
    const std::size_t distance = editDistance(name, candidate);
    if (distance < best) {
      best = distance;
      suggestion = candidate;
    }
  }
  if (best <= std::max<std::size_t>(2, name.size() / 3))
    message += " (did you mean '" + std::string(suggestion) + "'?)";
  throwInputError(option_text, "", message + "; the dimensions are " + knownNames());
}

int64_t parseValue(Dimension dimension, std::string_view text, const std::string& option_text) {
  auto fail = [&](const std::string& expected) -> int64_t {
    throwInputError(
        option_text, "",
        std::string(dimensionName(dimension)) + ": expected " + expected + ", found \"" + std::string(text) + "\"");
  };
  switch (dimension) {
    case Dimension::kRecompute:
      for (std::size_t i = 0; i < kRecomputeNames.size(); ++i) {
        if (kRecomputeNames[i] == text) return static_cast<int64_t>(i);
      }
      return fail("none, selective, full or selective_op");
    case Dimension::kSchedule:
      for (const parallelism::PipelineSchedule schedule : kSchedules) {
        if (parallelism::scheduleName(schedule) == text) return static_cast<int64_t>(schedule);
      }
      return fail("gpipe, 1f1b, zero_bubble, zbv, dualpipev or dualpipe");
    case Dimension::kSequenceParallel:
      if (text == "true" || text == "on" || text == "1") return 1;
      if (text == "false" || text == "off" || text == "0") return 0;
      return fail("true or false");
    default: break;
  }
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (dimension == Dimension::kZero) {
    if (error != std::errc() || end != text.data() + text.size() || value < 0 || value > 3) {
      return fail("0, 1, 2 or 3");
    }
    return value;
  }
  if (error != std::errc() || end != text.data() + text.size() || value < 1) return fail("a positive integer");
  return value;
}

void parseOption(PlanSpace& space, const std::string& text, const std::string& option, bool single) {
  const std::string option_text = option + " " + text;
  const std::size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    throwInputError(
        option_text, "",
        "expected NAME=" + std::string(single ? "VALUE" : "V1,V2,...") + ", e.g. " + (single ? "pp=8" : "tp=1,2,4,8"));
  }
  const Dimension dimension = parseDimension(std::string_view(text).substr(0, equals), option_text);
  std::vector<int64_t> values;
  std::string_view rest = std::string_view(text).substr(equals + 1);
  while (true) {
    const std::size_t comma = rest.find(',');
    values.push_back(parseValue(dimension, rest.substr(0, comma), option_text));
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  if (single && values.size() != 1) {
    throwInputError(option_text, "", "--fix takes one value; use --vary for a list");
  }
  space.restrict(dimension, std::move(values), option_text);
}

}  // namespace

std::string_view dimensionName(Dimension dimension) { return kNames[static_cast<std::size_t>(dimension)]; }

std::string dimensionValueText(Dimension dimension, int64_t value) {
  if (dimension == Dimension::kRecompute && value >= 0 && static_cast<std::size_t>(value) < kRecomputeNames.size()) {
    return std::string(kRecomputeNames[static_cast<std::size_t>(value)]);
  }
  if (dimension == Dimension::kSequenceParallel) return value != 0 ? "true" : "false";
  if (dimension == Dimension::kSchedule && value >= 0 && static_cast<std::size_t>(value) < kSchedules.size()) {
    return std::string(parallelism::scheduleName(kSchedules[static_cast<std::size_t>(value)]));
  }
  return std::to_string(value);
}

bool PlanSpace::allows(Dimension dimension, int64_t value) const {
  const auto& values = allowed(dimension);
  return !values || std::find(values->begin(), values->end(), value) != values->end();
}

void PlanSpace::restrict(Dimension dimension, std::vector<int64_t> values, const std::string& option_text) {
  auto& slot = allowed_[static_cast<std::size_t>(dimension)];
  if (slot) {
    throwInputError(option_text, "",
                    std::string(dimensionName(dimension)) + " is already restricted by another --vary or --fix");
  }
  // Sorted and unique: the enumeration order (and so the output) does not depend on how
  // the user ordered the list.
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  slot = std::move(values);
}

PlanSpace parsePlanSpace(const std::vector<std::string>& vary, const std::vector<std::string>& fix) {
  PlanSpace space;
  for (const auto& text : vary) parseOption(space, text, "--vary", false);
  for (const auto& text : fix) parseOption(space, text, "--fix", true);
  // Layer counts apply to full recomputation only: listed without it they would do nothing.
  const auto& recompute = space.allowed(Dimension::kRecompute);
  const auto full = static_cast<int64_t>(parallelism::Recompute::kFull);
  if (space.allowed(Dimension::kRecomputeNumLayers) && recompute &&
      std::find(recompute->begin(), recompute->end(), full) == recompute->end()) {
    throwInputError("--vary/--fix recompute_num_layers", "",
                    "recompute_num_layers applies to full recomputation, which the recompute values listed leave out");
  }
  return space;
}

}  // namespace trainsim::sweep
