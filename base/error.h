// Error values for user-input problems, and the process exit codes of SPEC.md.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace trainsim {

// Exit codes fixed by SPEC.md ("Command line").
enum class ExitCode : int {
  kSuccess = 0,
  kInternal = 1,      // internal error, or a command that is not built yet
  kInvalidInput = 2,  // bad YAML, unknown key, impossible parallelism
  kDoesNotFit = 3,    // the configuration does not fit in GPU memory
};

// A problem with something the user gave us. `where` is "file:line:col" (1-based) or
// "--set key=value" for command-line overrides, empty when there is no position (a
// missing file); `key_path` is the dotted key ("inter_node.nic_bandwidth_Gbps").
struct Error {
  ExitCode code = ExitCode::kInvalidInput;
  std::string where;
  std::string key_path;
  std::string message;

  // "cluster.yaml:14:5: inter_node.nic_bandwidth_Gbps: expected a positive number, found \"fast\""
  [[nodiscard]] std::string toString() const;
};

// Thrown inside a module while loading user input; converted into an Error value at the
// module's API (see Expected / catchInputErrors), never thrown across it.
class InputError : public std::runtime_error {
 public:
  explicit InputError(Error error);
  [[nodiscard]] const Error& error() const { return error_; }

 private:
  Error error_;
};

[[noreturn]] void throwInputError(std::string where, std::string key_path, std::string message);

}  // namespace trainsim
