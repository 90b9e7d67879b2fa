#include "base/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace trainsim {

void setupLogging(LogLevel level) {
  auto logger = spdlog::stderr_color_mt("trainsim");
  logger->set_pattern("%^%l%$: %v");
  switch (level) {
    case LogLevel::kQuiet: logger->set_level(spdlog::level::err); break;
    case LogLevel::kNormal: logger->set_level(spdlog::level::warn); break;
    case LogLevel::kVerbose: logger->set_level(spdlog::level::debug); break;
  }
  spdlog::set_default_logger(logger);
}

}  // namespace trainsim
