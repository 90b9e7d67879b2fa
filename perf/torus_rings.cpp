#include "perf/torus_rings.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace trainsim::perf {

std::vector<int> torusCoordinates(int64_t rank, const std::vector<int>& dims) {
  std::vector<int> coordinates;
  for (int size : dims) {
    coordinates.push_back(static_cast<int>(rank % size));
    rank /= size;
  }
  return coordinates;
}

std::vector<int> torusDimensionsSpanned(const std::vector<int64_t>& ranks, const std::vector<int>& dims) {
  std::vector<std::set<int>> values(dims.size());
  for (int64_t rank : ranks) {
    const std::vector<int> coordinates = torusCoordinates(rank, dims);
    for (std::size_t d = 0; d < dims.size(); ++d) values[d].insert(coordinates[d]);
  }
  std::vector<int> spanned;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (values[d].size() > 1) spanned.push_back(static_cast<int>(d));
  }
  return spanned;
}

int torusRingChannels(const std::vector<int64_t>& ranks, const std::vector<int>& dims) {
  return std::max(1, 2 * static_cast<int>(torusDimensionsSpanned(ranks, dims).size()));
}

std::vector<int64_t> torusRingOrder(const std::vector<int64_t>& ranks, const std::vector<int>& dims, int channel) {
  const std::vector<int> spanned = torusDimensionsSpanned(ranks, dims);
  if (spanned.empty()) return ranks;
  // Compressed coordinates: each spanned dimension's values in the group, in order.
  std::vector<std::map<int, int>> index(dims.size());
  for (int64_t rank : ranks) {
    const std::vector<int> coordinates = torusCoordinates(rank, dims);
    for (int d : spanned) index[static_cast<std::size_t>(d)].emplace(coordinates[static_cast<std::size_t>(d)], 0);
  }
  for (auto& values : index) {
    int next = 0;
    for (auto& [value, position] : values) position = next++;
  }
  // Dimensions from the slowest-changing to the fastest: the channel's fastest is spanned[k],
  // the others follow it in their cyclic order.
  const std::size_t k = static_cast<std::size_t>(channel / 2) % spanned.size();
  std::vector<int> outer_to_inner;
  for (std::size_t i = 1; i <= spanned.size(); ++i) outer_to_inner.push_back(spanned[(k + i) % spanned.size()]);
  // The reflected Gray code position: a digit runs backwards while the position of the
  // digits outside it is odd, so consecutive positions differ by one step of one coordinate.
  std::vector<std::pair<int64_t, int64_t>> keyed;
  for (int64_t rank : ranks) {
    const std::vector<int> coordinates = torusCoordinates(rank, dims);
    int64_t position = 0;
    for (int d : outer_to_inner) {
      const auto& values = index[static_cast<std::size_t>(d)];
      const auto size = static_cast<int64_t>(values.size());
      int64_t digit = values.at(coordinates[static_cast<std::size_t>(d)]);
      if (position % 2 == 1) digit = size - 1 - digit;
      position = position * size + digit;
    }
    keyed.emplace_back(position, rank);
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<int64_t> order;
  for (const auto& entry : keyed) order.push_back(entry.second);
  if (channel % 2 == 1) std::reverse(order.begin() + 1, order.end());
  return order;
}

}  // namespace trainsim::perf
