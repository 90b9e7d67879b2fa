// Writing a result to a file or to stdout ("-").
#pragma once

#include <fstream>
#include <iostream>
#include <string>

#include "base/error.h"

namespace trainsim::cli {

// Calls write(stream) on stdout when path is "-", else on the file; throws InputError
// (exit 2) when the file cannot be written.
template <class Writer>
void writeOutput(const std::string& path, Writer&& write) {
  if (path == "-") {
    write(std::cout);
    std::cout.flush();
    return;
  }
  std::ofstream stream(path);
  if (!stream) throwInputError(path, "", "cannot write the output file");
  write(stream);
}

}  // namespace trainsim::cli
