#include "calibrate/harness/group_layouts.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace trainsim::harness {

namespace {

constexpr std::pair<LayoutKind, std::string_view> kLayoutNames[] = {
    {LayoutKind::kWorld, "world"},    {LayoutKind::kIntraNode, "intra_node"}, {LayoutKind::kOnePerNode, "one_per_node"},
    {LayoutKind::kTpLike, "tp_like"}, {LayoutKind::kDpLike, "dp_like"},
};

// World rank of (node, local rank), for a placement jobShape() accepted.
std::vector<std::vector<int>> rankTable(const std::vector<RankPlace>& places, const JobShape& shape) {
  std::vector<std::vector<int>> table(static_cast<std::size_t>(shape.nodes),
                                      std::vector<int>(static_cast<std::size_t>(shape.gpus_per_node), -1));
  for (std::size_t rank = 0; rank < places.size(); ++rank) {
    table[static_cast<std::size_t>(places[rank].node)][static_cast<std::size_t>(places[rank].local_rank)] =
        static_cast<int>(rank);
  }
  return table;
}

GroupLayout skip(GroupLayout layout, std::string reason) {
  layout.groups.clear();
  layout.group_size = 0;
  layout.nodes = 0;
  layout.gpus_per_node = 0;
  layout.skipped = std::move(reason);
  return layout;
}

}  // namespace

std::string_view layoutName(LayoutKind kind) {
  for (const auto& [value, name] : kLayoutNames) {
    if (value == kind) return name;
  }
  return "unknown";
}

std::optional<LayoutKind> parseLayout(std::string_view name) {
  for (const auto& [value, layout_name] : kLayoutNames) {
    if (layout_name == name) return value;
  }
  return std::nullopt;
}

Expected<JobShape> jobShape(const std::vector<RankPlace>& places) {
  auto error = [](std::string message) { return Error{ExitCode::kInvalidInput, "", "", std::move(message)}; };
  if (places.empty()) return error("no MPI ranks");
  std::map<int, std::set<int>> locals_by_node;
  for (std::size_t rank = 0; rank < places.size(); ++rank) {
    const RankPlace& place = places[rank];
    if (place.node < 0 || place.local_rank < 0) return error(fmt::format("rank {}: negative node or local rank", rank));
    if (!locals_by_node[place.node].insert(place.local_rank).second) {
      return error(fmt::format("rank {}: local rank {} of node {} taken twice", rank, place.local_rank, place.node));
    }
  }
  JobShape shape;
  shape.ranks = static_cast<int>(places.size());
  shape.nodes = static_cast<int>(locals_by_node.size());
  shape.gpus_per_node = static_cast<int>(locals_by_node.begin()->second.size());
  int expected_node = 0;
  for (const auto& [node, locals] : locals_by_node) {
    if (node != expected_node) return error(fmt::format("node indices are not 0..{}", shape.nodes - 1));
    ++expected_node;
    if (static_cast<int>(locals.size()) != shape.gpus_per_node) {
      return error(
          fmt::format("uneven job: node 0 has {} ranks, node {} has {}; run the same number of ranks (one "
                      "per GPU) on every node",
                      shape.gpus_per_node, node, locals.size()));
    }
    if (*locals.rbegin() != shape.gpus_per_node - 1) {
      return error(fmt::format("node {}: local ranks are not 0..{}", node, shape.gpus_per_node - 1));
    }
  }
  return shape;
}

int GroupLayout::groupOf(int world_rank) const {
  for (std::size_t group = 0; group < groups.size(); ++group) {
    if (std::find(groups[group].begin(), groups[group].end(), world_rank) != groups[group].end()) {
      return static_cast<int>(group);
    }
  }
  return -1;
}

int GroupLayout::rankInGroup(int world_rank) const {
  for (const auto& group : groups) {
    const auto found = std::find(group.begin(), group.end(), world_rank);
    if (found != group.end()) return static_cast<int>(found - group.begin());
  }
  return -1;
}

GroupLayout buildGroupLayout(LayoutKind kind, const std::vector<RankPlace>& places, int tp) {
  GroupLayout layout;
  layout.kind = kind;
  const auto shape = jobShape(places);
  if (!shape.ok()) return skip(layout, shape.error().message);
  const int nodes = shape->nodes;
  const int gpn = shape->gpus_per_node;
  const auto table = rankTable(places, *shape);
  auto at = [&](int node, int local) { return table[static_cast<std::size_t>(node)][static_cast<std::size_t>(local)]; };

  switch (kind) {
    case LayoutKind::kWorld: {
      std::vector<int> group;
      for (int node = 0; node < nodes; ++node) {
        for (int local = 0; local < gpn; ++local) group.push_back(at(node, local));
      }
      layout.groups.push_back(std::move(group));
      layout.nodes = nodes;
      layout.gpus_per_node = gpn;
      break;
    }
    case LayoutKind::kIntraNode:
      for (int node = 0; node < nodes; ++node) {
        std::vector<int> group;
        for (int local = 0; local < gpn; ++local) group.push_back(at(node, local));
        layout.groups.push_back(std::move(group));
      }
      layout.nodes = 1;
      layout.gpus_per_node = gpn;
      break;
    case LayoutKind::kOnePerNode: {
      if (nodes < 2) return skip(layout, "needs at least 2 nodes");
      std::vector<int> group;
      for (int node = 0; node < nodes; ++node) group.push_back(at(node, 0));
      layout.groups.push_back(std::move(group));
      layout.nodes = nodes;
      layout.gpus_per_node = 1;
      break;
    }
    case LayoutKind::kTpLike: {
      const int size = tp == 0 ? gpn : tp;
      if (size < 1) return skip(layout, fmt::format("tp must be positive, found {}", size));
      if (size <= gpn) {
        if (gpn % size != 0) return skip(layout, fmt::format("tp {} does not divide {} GPUs per node", size, gpn));
        for (int node = 0; node < nodes; ++node) {
          for (int first = 0; first < gpn; first += size) {
            std::vector<int> group;
            for (int local = first; local < first + size; ++local) group.push_back(at(node, local));
            layout.groups.push_back(std::move(group));
          }
        }
        layout.nodes = 1;
        layout.gpus_per_node = size;
      } else {
        if (size % gpn != 0 || nodes % (size / gpn) != 0) {
          return skip(layout, fmt::format("tp {} is not a whole number of nodes of {} GPUs dividing the {} nodes", size,
                                          gpn, nodes));
        }
        const int span = size / gpn;
        for (int first = 0; first < nodes; first += span) {
          std::vector<int> group;
          for (int node = first; node < first + span; ++node) {
            for (int local = 0; local < gpn; ++local) group.push_back(at(node, local));
          }
          layout.groups.push_back(std::move(group));
        }
        layout.nodes = span;
        layout.gpus_per_node = gpn;
      }
      break;
    }
    case LayoutKind::kDpLike:
      if (nodes < 2) return skip(layout, "needs at least 2 nodes");
      for (int local = 0; local < gpn; ++local) {
        std::vector<int> group;
        for (int node = 0; node < nodes; ++node) group.push_back(at(node, local));
        layout.groups.push_back(std::move(group));
      }
      layout.nodes = nodes;
      layout.gpus_per_node = 1;
      break;
  }
  layout.group_size = static_cast<int>(layout.groups.front().size());
  if (layout.group_size < 2) return skip(layout, "groups of one rank do not communicate");
  return layout;
}

}  // namespace trainsim::harness
