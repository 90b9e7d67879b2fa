// trainsim._native: runs one trainsim command line in-process (cli/command_line.h) with its
// output and messages captured, for the Python package (python/trainsim/). The package builds
// the command lines and reads their JSON, so that Python gets the keys, checks, messages and
// exit codes of the command-line tool (docs/SPEC.md) from the same code.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command_line.h"

namespace py = pybind11;

namespace {

// Points a standard stream at a string buffer until destroyed, then restores it (and clears
// any error state the command left on it).
class StreamCapture {
 public:
  explicit StreamCapture(std::ostream& stream) : stream_(stream), previous_(stream.rdbuf(buffer_.rdbuf())) {}
  ~StreamCapture() {
    stream_.flush();
    stream_.rdbuf(previous_);
    stream_.clear();
  }
  StreamCapture(const StreamCapture&) = delete;
  StreamCapture& operator=(const StreamCapture&) = delete;

  [[nodiscard]] std::string text() const { return buffer_.str(); }

 private:
  std::ostringstream buffer_;
  std::ostream& stream_;
  std::streambuf* previous_;
};

// One command line at a time: the streams and the logger are the process's.
std::mutex command_mutex;

// (exit code, stdout as bytes, stderr as text, the reported input error as a dict or None).
py::tuple run(const std::vector<std::string>& args) {
  trainsim::cli::CommandLineResult result;
  std::string out;
  std::string err;
  {
    // Other Python threads run while a sweep or a large simulation does.
    const py::gil_scoped_release release;
    const std::lock_guard lock(command_mutex);
    const StreamCapture captured_out(std::cout);
    const StreamCapture captured_err(std::cerr);
    std::vector<std::string> argv{"trainsim"};
    argv.insert(argv.end(), args.begin(), args.end());
    result = trainsim::cli::runCommandLine(argv);
    std::cout.flush();
    std::cerr.flush();
    out = captured_out.text();
    err = captured_err.text();
  }
  py::object error = py::none();
  if (result.error) {
    py::dict fields;
    fields["exit_code"] = static_cast<int>(result.error->code);
    fields["where"] = result.error->where;
    fields["key"] = result.error->key_path;
    fields["message"] = result.error->message;
    error = std::move(fields);
  }
  return py::make_tuple(result.exit_code, py::bytes(out), py::bytes(err), error);
}

}  // namespace

PYBIND11_MODULE(_native, module) {
  module.doc() = "trainsim's commands, run in-process (use the trainsim package, not this module)";
  module.def("run", &run, py::arg("args"),
             "Runs `trainsim ARGS...`; returns (exit_code, stdout bytes, stderr bytes, error dict or None).");
  module.attr("config_dir") = TRAINSIM_DEFAULT_CONFIG_DIR;
}
