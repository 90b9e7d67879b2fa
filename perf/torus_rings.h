// Ring orders on a chip-level torus (topology: torus; TPU slices): NCCL's rank-order ring
// would load one direction of one dimension's links, while each chip has two directions on
// every dimension. XLA's collectives on a TPU torus use all of a chip's links (Cloud TPU
// "System architecture": ICI links in each torus direction; Jouppi et al., "TPU v4", ISCA
// 2023, section 3: all-reduce over the 3D torus). Here the ring channels do the same: channel
// c walks the group's chips in a boustrophedon (reflected Gray code) whose fastest-changing
// dimension is the (c / 2)-th the group spans, forward for even c and backward for odd c. A
// boustrophedon reverses its direction along that dimension on every line, so the forward and
// the backward channel together load both directions of every line's links once, and the
// 2 x (dimensions spanned) channels spread a collective over all of a chip's links. The
// turns between lines run on links another channel runs along, so on short lines the busiest
// links carry two or three channels: an all-gather over a 16 x 16 v5e slice reaches 3.6 links'
// worth of bus bandwidth, over a 4 x 4 x 4 v4 cube 1.6 (a ring in rank order: at most one).
#pragma once

#include <cstdint>
#include <vector>

namespace trainsim::perf {

// A chip's coordinates on a torus of `dims`, x fastest in rank order (rank = x + dims[0] *
// (y + dims[1] * z)).
[[nodiscard]] std::vector<int> torusCoordinates(int64_t rank, const std::vector<int>& dims);

// The dimensions of `dims` (x fastest in rank order: rank = x + dims[0] * (y + dims[1] * z))
// along which the chips `ranks` take more than one coordinate.
[[nodiscard]] std::vector<int> torusDimensionsSpanned(const std::vector<int64_t>& ranks, const std::vector<int>& dims);

// Ring channels over a torus group: two per dimension spanned (at least one).
[[nodiscard]] int torusRingChannels(const std::vector<int64_t>& ranks, const std::vector<int>& dims);

// The order channel `channel` visits `ranks` in (see the file comment). Coordinates are
// compressed to the group's own values, so a strided group (every 8th chip) is walked as the
// grid it forms. Deterministic.
[[nodiscard]] std::vector<int64_t> torusRingOrder(const std::vector<int64_t>& ranks, const std::vector<int>& dims,
                                                  int channel);

}  // namespace trainsim::perf
