// trainsim: the command-line entry point. Parses the command line (CLI11), dispatches to
// one command, and is the single place where errors become exit codes (SPEC.md).
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <map>
#include <string>

#include "base/logging.h"
#include "cli/calibrate_command.h"
#include "cli/collective_command.h"
#include "cli/command_context.h"
#include "cli/memory_command.h"
#include "cli/simulate_command.h"
#include "cli/sweep_command.h"
#include "cli/topology_command.h"
#include "cli/validate_command.h"

int main(int argc, char** argv) {
  using namespace trainsim;
  CLI::App app{"trainsim: a discrete-event simulator of distributed LLM training"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("trainsim ") + TRAINSIM_VERSION);
  std::string config_dir;
  bool verbose = false;
  app.add_option("--config-dir", config_dir, "Directory of presets (gpus.yaml, models/, clusters/, experiments/)")
      ->envname("TRAINSIM_CONFIG_DIR");
  app.add_flag("-v,--verbose", verbose, "Log details on stderr");

  cli::TopologyOptions topology_options;
  cli::addTopologyCommand(app, topology_options);
  cli::CollectiveOptions collective_options;
  cli::addCollectiveCommand(app, collective_options);
  cli::MemoryOptions memory_options;
  cli::addMemoryCommand(app, memory_options);
  cli::SimulateOptions simulate_options;
  cli::addSimulateCommand(app, simulate_options);
  cli::ValidateOptions validate_options;
  cli::addValidateCommand(app, validate_options);
  cli::SweepOptions sweep_options;
  cli::addSweepCommand(app, sweep_options);
  cli::CalibrateOptions calibrate_options;
  cli::addCalibrateCommand(app, calibrate_options);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& success) {
    return app.exit(success);  // --help, --version
  } catch (const CLI::ParseError& error) {
    app.exit(error);
    return static_cast<int>(ExitCode::kInvalidInput);
  }

  setupLogging(verbose ? LogLevel::kVerbose : LogLevel::kNormal);
  cli::CommandContext context{config_dir.empty() ? ConfigPaths{TRAINSIM_DEFAULT_CONFIG_DIR} : ConfigPaths{config_dir}};
  try {
    if (app.got_subcommand("topology")) return cli::runTopology(topology_options, context);
    if (app.got_subcommand("collective")) return cli::runCollective(collective_options, context);
    if (app.got_subcommand("memory")) return cli::runMemory(memory_options, context);
    if (app.got_subcommand("simulate")) return cli::runSimulate(simulate_options, context);
    if (app.got_subcommand("validate")) return cli::runValidate(validate_options, context);
    if (app.got_subcommand("sweep")) return cli::runSweep(sweep_options, context);
    if (app.got_subcommand("calibrate")) return cli::runCalibrate(calibrate_options, context);
  } catch (const std::exception& error) {
    std::cerr << "trainsim: internal error: " << error.what() << "\n";
    return static_cast<int>(ExitCode::kInternal);
  }
  return static_cast<int>(ExitCode::kInternal);
}
