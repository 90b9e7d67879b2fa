// Writing an output file whole or not at all. The content goes to a temporary file beside the
// target (same directory, so same file system), which is synced and then renamed over the
// target: a reader, an interrupted run or a full disk sees the previous file or the complete
// new one, never a truncated one. Devices and FIFOs (/dev/null, /dev/stdout, /dev/full) have
// no content to keep and cannot be replaced: they are written in place.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "base/error.h"

namespace trainsim {

// Calls write(stream) on a temporary file beside `path` and renames it over `path` once the
// whole content is on disk; a symbolic link is followed, so the file it names is replaced
// and the link kept; a replaced file keeps its permission bits. Returns an Error with exit
// code 1 (ExitCode::kInternal: the output, not the input, is at fault) naming `path` when the
// file cannot be created ("cannot write the output file: REASON") or written ("cannot write
// the output: REASON"); `path` is then untouched. An exception from `write` propagates after
// the temporary file is removed.
[[nodiscard]] std::optional<Error> writeFileAtomically(const std::string& path,
                                                       const std::function<void(std::ostream&)>& write);

// Whether an output can be written at `path`, checked before the work whose result it is: a
// missing directory, a directory, a read-only file or a directory where no file can be
// created is an Error as writeFileAtomically would give it ("cannot write the output file:
// REASON"), found in a fraction of a second instead of after a sweep. It creates (and
// removes) the temporary file a write would create; nothing else is touched.
[[nodiscard]] std::optional<Error> checkOutputPath(const std::string& path);

}  // namespace trainsim
