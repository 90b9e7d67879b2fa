// Logging setup: spdlog to stderr, so that stdout stays clean for tables and JSON.
#pragma once

namespace trainsim {

enum class LogLevel { kQuiet, kNormal, kVerbose };
void setupLogging(LogLevel level);

}  // namespace trainsim
