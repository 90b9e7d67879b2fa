// Writing a result to a file or to stdout ("-"), and the checks on the output options.
#pragma once

#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <iostream>
#include <string>
#include <string_view>
#include <utility>

#include "base/atomic_file.h"
#include "base/error.h"

namespace trainsim::cli {

// The reason of the last failed system call, for a message ("No space left on device").
inline std::string systemReason() {
  const int code = errno;
  return code != 0 ? std::string(std::strerror(code)) : std::string("write error");
}

// A write that failed once the output was open (a full disk, /dev/full, a closed stdout):
// the input was fine, so it is the runtime-error exit code of SPEC.md (1), not 2.
[[noreturn]] inline void throwWriteError(const std::string& where) {
  throw InputError(Error{ExitCode::kInternal, where, "", "cannot write the output: " + systemReason()});
}

// Calls write(stream) on stdout when path is "-", else on the file, which is replaced only
// once all of it is written (base/atomic_file.h): an interrupted run or a failed write never
// leaves a truncated file nor destroys the one that was there. Throws InputError with exit
// code 1 (SPEC.md: the output, not the input, is at fault) naming the file or stdout when it
// cannot be created or written. The stream is flushed (stdout) or synced (a file) and
// checked, so that a full disk is an error and not a truncated file with exit 0.
template <class Writer>
void writeOutput(const std::string& path, Writer&& write) {
  if (path == "-") {
    errno = 0;
    write(std::cout);
    std::cout.flush();
    if (!std::cout) throwWriteError("stdout");
    return;
  }
  if (auto error = writeFileAtomically(path, [&](std::ostream& out) { write(out); })) throw InputError(*error);
}

// Checks every output file given before the command computes anything: a path whose
// directory is missing, that is a directory, or that cannot be created is exit 1 naming it
// at once, not after a sweep. Empty values (the option not given) and "-" pass.
inline void requireWritableOutputs(std::initializer_list<const std::string*> outputs) {
  for (const std::string* path : outputs) {
    if (auto error = checkOutputPath(*path)) throw InputError(*error);
  }
}

// At most one output may go to stdout ("-"): two would interleave into text neither a JSON
// reader nor a CSV reader can parse. `outputs` pairs an option name with its value.
inline void requireOneStdoutOutput(std::initializer_list<std::pair<std::string_view, const std::string*>> outputs) {
  std::string_view first;
  for (const auto& [option, value] : outputs) {
    if (*value != "-") continue;
    if (first.empty()) {
      first = option;
      continue;
    }
    throwInputError(std::string(first) + " - " + std::string(option) + " -", "",
                    "only one output can go to stdout (-); write the other to a file");
  }
}

// Whether any of the outputs goes to stdout, which then carries nothing else (SPEC.md).
inline bool anyOnStdout(std::initializer_list<const std::string*> outputs) {
  for (const std::string* value : outputs) {
    if (*value == "-") return true;
  }
  return false;
}

}  // namespace trainsim::cli
