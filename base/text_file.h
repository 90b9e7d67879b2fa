// Reading a whole user-given text file (YAML, JSON, logs, CSVs) for a parser that reports
// positions in it, bounded in size and refusing what is not a regular file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/expected.h"

namespace trainsim {

// The largest input files read (docs/SPEC.md, "Input files"). YAML and JSON are parsed into a
// tree that takes about 250 times the text (a 4 MiB flow list: 1 GB, 11 s), so their bound
// is the tighter one; it is still 100x the largest shipped file (configs/gpus.yaml, 30 KB)
// and holds harness results of thousands of rows. Logs and CSVs are read line by line in
// about their own size, and may be whole job logs (NCCL_DEBUG=INFO output between rows).
inline constexpr std::uintmax_t kMaxConfigFileBytes = std::uintmax_t{4} << 20;
inline constexpr std::uintmax_t kMaxMeasurementFileBytes = std::uintmax_t{64} << 20;

// How a byte count reads in a message: "4 MiB", "64 MiB", "512 KiB", "100 bytes".
[[nodiscard]] std::string formatByteSize(std::uintmax_t bytes);

// The bytes of the file at `path`, or an invalid-input Error naming the path: a directory
// gives "is a directory, expected <what>", something that is not a regular file (a device
// such as /dev/zero, a FIFO, a socket) "is not a regular file (a character device),
// expected <what>", a file over `max_bytes` "is larger than the N MiB limit ...", a missing
// or unreadable file "cannot read <what>". The bound holds while reading too (a file that
// grows, or that reports no size as those of /proc do). `what` names the kind of file with
// its article ("an nccl-tests log file").
Expected<std::string> readTextFile(const std::string& path, std::string_view what, std::uintmax_t max_bytes);

}  // namespace trainsim
