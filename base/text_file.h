// Reading a whole user-given text file (logs, CSVs) for a parser that reports positions in it.
#pragma once

#include <string>
#include <string_view>

#include "base/expected.h"

namespace trainsim {

// The bytes of the file at `path`, or an invalid-input Error naming the path: a directory
// gives "is a directory, expected <what>", a missing or unreadable file "cannot read <what>".
// `what` names the kind of file with its article ("an nccl-tests log file").
Expected<std::string> readTextFile(const std::string& path, std::string_view what);

}  // namespace trainsim
