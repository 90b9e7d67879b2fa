#include "goodput/stragglers.h"

#include <random>

namespace trainsim::goodput {

StragglerDraw drawStragglers(int64_t gpus, const topology::Stragglers& stragglers, uint64_t seed) {
  StragglerDraw draw;
  draw.rank_compute_scale.assign(static_cast<std::size_t>(gpus), 1.0);
  // A generator of its own, so that the draw does not depend on what else uses the seed;
  // the top 53 bits make a uniform in [0, 1) the same on every standard library.
  std::mt19937_64 engine(seed ^ 0x5354524147474C52ull);  // "STRAGGLR"
  for (double& scale : draw.rank_compute_scale) {
    const double uniform = static_cast<double>(engine() >> 11) * 0x1.0p-53;
    if (uniform < stragglers.fraction) {
      scale = stragglers.slowdown;
      ++draw.slow_gpus;
    }
  }
  return draw;
}

}  // namespace trainsim::goodput
