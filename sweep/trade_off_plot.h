// `trainsim sweep --plot FILE`: an SVG of the event-simulated plans, time against cost
// (pareto_front.h's axes, logarithmic), the Pareto front joined and labelled, plans over
// the deadline or budget in a lighter colour, the deadline and budget drawn as lines.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "sweep/sweep.h"

namespace trainsim::sweep {

struct PlotOptions {
  std::string title;
  Constraints constraints;
  std::string id;  // the <svg> element's id, for a page that embeds it ("": none)
};

void writeTradeOffSvg(std::ostream& out, const SweepResult& sweep, const PlotOptions& options);

// "tp8 pp16 dp8 mb1 v2 sp z1 sel" (cluster and GPU count prefixed when the sweep has several targets).
[[nodiscard]] std::string shortPlanLabel(const SweepResult& sweep, std::size_t candidate);

}  // namespace trainsim::sweep
