// Logging setup: spdlog to std::cerr, so that stdout stays clean for tables and JSON.
#pragma once

namespace trainsim {

enum class LogLevel { kQuiet, kNormal, kVerbose };

// Replaces the default logger; may be called again (each in-process command line does).
void setupLogging(LogLevel level);

}  // namespace trainsim
