#include "validation/expected_error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/config_node.h"

namespace trainsim::validation {
namespace {

ExpectedErrorTable readTable(const ConfigNode& root) {
  if (!root.isMap()) root.failExpected("a mapping with command and groups");
  root.allowKeys({"command", "default_stacks", "groups"});
  ExpectedErrorTable table;
  table.command = root.child("command").asString();
  for (const ConfigNode& name : root.child("default_stacks").elements())
    table.default_stacks.push_back(name.asString());
  for (const ConfigNode& entry : root.child("groups").elements()) {
    entry.allowKeys({"stack", "gpu", "moe", "sources", "rows", "held_out_mape", "held_out_bias"});
    HeldOutAccuracy group;
    group.stack = entry.string("stack", "");
    group.moe = entry.boolean("moe", false);
    if (group.moe && !group.stack.empty()) entry.child("stack").fail("a mixture-of-experts group covers every stack");
    group.gpu = entry.child("gpu").asString();
    group.sources = static_cast<int>(entry.child("sources").asIntegerIn(1, 1000));
    group.rows = static_cast<int>(entry.child("rows").asIntegerIn(1, 100000));
    group.mape = entry.child("held_out_mape").asNumberIn(0.0, 10.0);
    group.bias = entry.child("held_out_bias").asNumber();
    if (std::abs(group.bias) > group.mape + 1e-12) {
      entry.child("held_out_bias").fail("a mean signed error cannot exceed the mean absolute error");
    }
    for (const HeldOutAccuracy& other : table.groups) {
      if (other.moe == group.moe && other.stack == group.stack && other.gpu == group.gpu) {
        entry.child("gpu").fail("a second group for the same stack (or moe) and gpu");
      }
    }
    table.groups.push_back(group);
  }
  return table;
}

ExpectedError fromGroup(const HeldOutAccuracy& group, std::string basis) {
  return {group.mape, group.bias, group.sources, group.rows, std::move(basis), group.moe};
}

// Whether the suite has a dense group on `gpu` for `stack` ("" = the defaults') or the defaults.
bool denseGroupOn(const ExpectedErrorTable& table, const std::string& stack, const std::string& gpu) {
  return std::any_of(table.groups.begin(), table.groups.end(), [&](const HeldOutAccuracy& group) {
    return !group.moe && group.gpu == gpu && (group.stack.empty() || group.stack == stack);
  });
}

}  // namespace

Expected<ExpectedErrorTable> loadExpectedErrorTable(const ConfigPaths& paths) {
  return catchInputErrors([&] { return readTable(loadConfigFile(presetPath(paths, "validation", "expected_error"))); });
}

namespace {

// The MoE group on `gpu`, or with `elsewhere` the worst MoE group on another GPU.
std::optional<ExpectedError> mixtureOfExpertsError(const ExpectedErrorTable& table, const std::string& gpu,
                                                   bool elsewhere) {
  const HeldOutAccuracy* worst_elsewhere = nullptr;
  for (const HeldOutAccuracy& group : table.groups) {
    if (!group.moe) continue;
    if (group.gpu == gpu)
      return fromGroup(group, fmt::format("published mixture-of-experts runs on {}, never fitted to", gpu));
    if (!worst_elsewhere || group.mape > worst_elsewhere->mape) worst_elsewhere = &group;
  }
  if (!elsewhere || !worst_elsewhere) return std::nullopt;
  return fromGroup(*worst_elsewhere,
                   fmt::format("published mixture-of-experts runs on {} (none on {})", worst_elsewhere->gpu, gpu));
}

std::optional<ExpectedError> denseModelError(const ExpectedErrorTable& table, const std::string& named_stack,
                                             const std::string& gpu) {
  const bool default_stack =
      std::find(table.default_stacks.begin(), table.default_stacks.end(), named_stack) != table.default_stacks.end();
  const std::string stack = default_stack ? std::string() : named_stack;
  const HeldOutAccuracy* worst_elsewhere = nullptr;
  const HeldOutAccuracy* defaults_here = nullptr;
  for (const HeldOutAccuracy& group : table.groups) {
    if (group.moe) continue;
    if (group.stack == stack && group.gpu == gpu) {
      return fromGroup(
          group, stack.empty() ? fmt::format("published runs of {} on {}", fmt::join(table.default_stacks, ", "), gpu)
                               : fmt::format("published runs of {} on {}", stack, gpu));
    }
    if (!stack.empty() && group.stack == stack && (!worst_elsewhere || group.mape > worst_elsewhere->mape)) {
      worst_elsewhere = &group;
    }
    if (group.stack.empty() && group.gpu == gpu) defaults_here = &group;
  }
  if (worst_elsewhere) {
    return fromGroup(*worst_elsewhere,
                     fmt::format("published runs of {} on {} (none on {})", stack, worst_elsewhere->gpu, gpu));
  }
  if (defaults_here) {
    return fromGroup(*defaults_here, fmt::format("no published run of {}: the error of {} on {}, a floor", stack,
                                                 fmt::join(table.default_stacks, ", "), gpu));
  }
  return std::nullopt;
}

}  // namespace

std::optional<ExpectedError> expectedError(const ExpectedErrorTable& table, const std::string& stack,
                                           const std::string& gpu, bool moe) {
  if (!moe) return denseModelError(table, stack, gpu);
  if (auto error = mixtureOfExpertsError(table, gpu, false)) return error;
  // Figures from other GPUs only for a GPU the suite knows: one it has no published run of
  // either kind on stays unknown.
  if (!denseGroupOn(table, stack, gpu)) return std::nullopt;
  if (auto error = mixtureOfExpertsError(table, gpu, true)) return error;
  auto dense = denseModelError(table, stack, gpu);
  if (dense) dense->basis = "no published mixture-of-experts run: " + dense->basis;
  return dense;
}

}  // namespace trainsim::validation
