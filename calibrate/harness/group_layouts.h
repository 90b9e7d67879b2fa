// The communicator groups the NCCL harness measures, built from where each MPI rank runs
// (its node and its local rank on that node), the way training jobs lay their groups out:
//  - world:        every rank in one group;
//  - intra_node:   one group per node, all of its GPUs (NVLink / NVSwitch only);
//  - one_per_node: one group of local rank 0 of every node, the other ranks idle (one NIC
//                  per node busy: the inter-node path on its own);
//  - tp_like:      groups of `tp` consecutive local ranks of a node (tp <= gpus per node), or
//                  of tp / gpus_per_node consecutive whole nodes; every group at once;
//  - dp_like:      one group per local rank index, holding that local rank of every node
//                  (stride gpus_per_node, as data-parallel groups sit when tp fills a node);
//                  every group at once, so all NICs of a node are busy.
// All groups of a layout run their collective at the same time, as a training step does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.h"

namespace trainsim::harness {

enum class LayoutKind : uint8_t { kWorld, kIntraNode, kOnePerNode, kTpLike, kDpLike };
inline constexpr LayoutKind kAllLayouts[] = {LayoutKind::kIntraNode, LayoutKind::kOnePerNode, LayoutKind::kTpLike,
                                             LayoutKind::kDpLike, LayoutKind::kWorld};
[[nodiscard]] std::string_view layoutName(LayoutKind kind);
[[nodiscard]] std::optional<LayoutKind> parseLayout(std::string_view name);

// Where one MPI rank runs: node index (0-based, dense) and local rank on that node.
struct RankPlace {
  int node = 0;
  int local_rank = 0;
};

// The shape of the job: `nodes` nodes of `gpus_per_node` ranks each.
struct JobShape {
  int ranks = 0;
  int nodes = 0;
  int gpus_per_node = 0;
};

// Checks that `places` (index = world rank) cover nodes 0..N-1 with the same number of
// ranks each, local ranks 0..k-1 on every node; an error saying what is uneven otherwise.
[[nodiscard]] Expected<JobShape> jobShape(const std::vector<RankPlace>& places);

// The groups of one layout.
struct GroupLayout {
  LayoutKind kind = LayoutKind::kWorld;
  // Each group's world ranks, in the order of their rank inside the group (node, then local rank).
  std::vector<std::vector<int>> groups;
  int group_size = 0;
  int nodes = 0;          // nodes one group spans
  int gpus_per_node = 0;  // members of one group per node
  // Set when the layout cannot be measured on this job (one_per_node on one node, groups of
  // one rank, tp that does not divide the job): why; `groups` is then empty.
  std::optional<std::string> skipped;

  // The group `world_rank` belongs to (index into `groups`), or -1 when it is idle.
  [[nodiscard]] int groupOf(int world_rank) const;
  // world_rank's rank inside its group, or -1 when it is idle.
  [[nodiscard]] int rankInGroup(int world_rank) const;
};

// `tp` is the tp_like group size (0 = gpus_per_node); other layouts ignore it.
// World rank 0 is a member of a group in every layout that is not skipped.
[[nodiscard]] GroupLayout buildGroupLayout(LayoutKind kind, const std::vector<RankPlace>& places, int tp);

}  // namespace trainsim::harness
