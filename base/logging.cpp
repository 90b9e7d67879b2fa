#include "base/logging.h"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <iostream>

namespace trainsim {

void setupLogging(LogLevel level) {
  // Through std::cerr rather than the C stream: a caller that redirects std::cerr (the Python
  // module, python/) receives the warnings with the rest of the command's messages.
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(std::cerr, /*force_flush=*/true);
  auto logger = std::make_shared<spdlog::logger>("trainsim", std::move(sink));
  logger->set_pattern("%l: %v");
  switch (level) {
    case LogLevel::kQuiet: logger->set_level(spdlog::level::err); break;
    case LogLevel::kNormal: logger->set_level(spdlog::level::warn); break;
    case LogLevel::kVerbose: logger->set_level(spdlog::level::debug); break;
  }
  // Called once per command line; an in-process caller runs several.
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace trainsim
