// trainsim: the command-line entry point. Parses the command line (CLI11), dispatches to
// one command, and is the single place where errors become exit codes (SPEC.md).
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

namespace {

using namespace trainsim;

// The options of every command; CLI11 fills those of the one given.
struct AllOptions {
  cli::TopologyOptions topology;
  cli::CollectiveOptions collective;
  cli::MemoryOptions memory;
  cli::SimulateOptions simulate;
  cli::ValidateOptions validate;
  cli::SweepOptions sweep;
  cli::CalibrateOptions calibrate;
};

// Runs the command given; an exception no command turned into an error is exit 1.
int dispatch(const CLI::App& app, const AllOptions& options, const cli::CommandContext& context) {
  try {
    if (app.got_subcommand("topology")) return cli::runTopology(options.topology, context);
    if (app.got_subcommand("collective")) return cli::runCollective(options.collective, context);
    if (app.got_subcommand("memory")) return cli::runMemory(options.memory, context);
    if (app.got_subcommand("simulate")) return cli::runSimulate(options.simulate, context);
    if (app.got_subcommand("validate")) return cli::runValidate(options.validate, context);
    if (app.got_subcommand("sweep")) return cli::runSweep(options.sweep, context);
    if (app.got_subcommand("calibrate")) return cli::runCalibrate(options.calibrate, context);
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
    std::cerr << "trainsim: error: stdout: cannot write the output: " << cli::systemReason() << "\n";
    return static_cast<int>(ExitCode::kInternal);
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
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
  cli::addTopologyCommand(app, options.topology);
  cli::addCollectiveCommand(app, options.collective);
  cli::addMemoryCommand(app, options.memory);
  cli::addSimulateCommand(app, options.simulate);
  cli::addValidateCommand(app, options.validate);
  cli::addSweepCommand(app, options.sweep);
  cli::addCalibrateCommand(app, options.calibrate);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& success) {
    return checkStdout(app.exit(success));  // --help, --version
  } catch (const CLI::ParseError& error) {
    app.exit(error);
    return static_cast<int>(ExitCode::kInvalidInput);
  }

  setupLogging(verbose ? LogLevel::kVerbose : LogLevel::kNormal);
  const cli::CommandContext context{config_dir.empty() ? ConfigPaths{TRAINSIM_DEFAULT_CONFIG_DIR}
                                                       : ConfigPaths{config_dir}};
  return checkStdout(dispatch(app, options, context));
}
