#include "cli/command_line.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <exception>
#include <iostream>
#include <string>

#include "base/logging.h"
#include "cli/calibrate_command.h"
#include "cli/collective_command.h"
#include "cli/command_context.h"
#include "cli/memory_command.h"
#include "cli/output_file.h"
#include "cli/simulate_command.h"
#include "cli/sweep_command.h"
#include "cli/topology_command.h"
#include "cli/validate_command.h"

namespace trainsim::cli {
namespace {

// The options of every command; CLI11 fills those of the one given.
struct AllOptions {
  TopologyOptions topology;
  CollectiveOptions collective;
  MemoryOptions memory;
  SimulateOptions simulate;
  ValidateOptions validate;
  SweepOptions sweep;
  CalibrateOptions calibrate;
};

// Runs the command given; an exception no command turned into an error is exit 1.
int dispatch(const CLI::App& app, const AllOptions& options, const CommandContext& context) {
  try {
    if (app.got_subcommand("topology")) return runTopology(options.topology, context);
    if (app.got_subcommand("collective")) return runCollective(options.collective, context);
    if (app.got_subcommand("memory")) return runMemory(options.memory, context);
    if (app.got_subcommand("simulate")) return runSimulate(options.simulate, context);
    if (app.got_subcommand("validate")) return runValidate(options.validate, context);
    if (app.got_subcommand("sweep")) return runSweep(options.sweep, context);
    if (app.got_subcommand("calibrate")) return runCalibrate(options.calibrate, context);
  } catch (const std::exception& error) {
    std::cerr << "trainsim: internal error: " << error.what() << "\n";
    return static_cast<int>(ExitCode::kInternal);
  }
  return static_cast<int>(ExitCode::kInternal);
}

// Text printed on stdout (a report, --help) is buffered: a write error (a full disk,
// `> /dev/full`) shows only when it is flushed. Flushes, and turns a failure into exit 1
// with a message unless the command has already failed with a message of its own.
int checkStdout(int exit_code) {
  errno = 0;
  std::cout.flush();
  if (std::cout) return exit_code;
  if (exit_code == static_cast<int>(ExitCode::kSuccess) || exit_code == static_cast<int>(ExitCode::kDoesNotFit)) {
    std::cerr << "trainsim: error: stdout: cannot write the output: " << systemReason() << "\n";
    return static_cast<int>(ExitCode::kInternal);
  }
  return exit_code;
}

}  // namespace

CommandLineResult runCommandLine(const std::vector<std::string>& args) {
  CLI::App app{"trainsim: a discrete-event simulator of distributed LLM training"};
  // Command-line errors read like every other error ("trainsim: error: ..."). Set before
  // the subcommands are added: each copies its parent's.
  app.failure_message([](const CLI::App* failed, const CLI::Error& error) {
    return "trainsim: error: " + CLI::FailureMessage::simple(failed, error);
  });
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("trainsim ") + TRAINSIM_VERSION);
  std::string config_dir;
  bool verbose = false;
  app.add_option("--config-dir", config_dir, "Directory of presets (gpus.yaml, models/, clusters/, experiments/)")
      ->envname("TRAINSIM_CONFIG_DIR");
  app.add_flag("-v,--verbose", verbose, "Log details on stderr");

  AllOptions options;
  addTopologyCommand(app, options.topology);
  addCollectiveCommand(app, options.collective);
  addMemoryCommand(app, options.memory);
  addSimulateCommand(app, options.simulate);
  addValidateCommand(app, options.validate);
  addSweepCommand(app, options.sweep);
  addCalibrateCommand(app, options.calibrate);

  // CLI11 parses argv's layout; the strings outlive the parse.
  std::vector<const char*> argv;
  argv.reserve(args.size());
  for (const auto& arg : args) argv.push_back(arg.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::Success& success) {
    return {checkStdout(app.exit(success)), std::nullopt};  // --help, --version
  } catch (const CLI::ParseError& error) {
    app.exit(error);
    return {static_cast<int>(ExitCode::kInvalidInput), std::nullopt};
  }

  setupLogging(verbose ? LogLevel::kVerbose : LogLevel::kNormal);
  const CommandContext context{config_dir.empty() ? ConfigPaths{TRAINSIM_DEFAULT_CONFIG_DIR} : ConfigPaths{config_dir},
                               std::nullopt};
  const int exit_code = checkStdout(dispatch(app, options, context));
  return {exit_code, context.reported_error};
}

}  // namespace trainsim::cli
