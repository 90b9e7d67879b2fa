// `trainsim sweep` end to end: exit codes, the JSON/CSV/SVG outputs, and the same bytes
// whatever the thread count or the number of MPI ranks (mpirun -np 2 on localhost).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "sweep_test_support.h"

namespace {

namespace fs = std::filesystem;
using trainsim::sweep::testing::ExperimentFile;

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string readFile(const fs::path& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

fs::path scratchPath(const std::string& name) {
  return fs::temp_directory_path() / ("trainsim_sweep_cli_" + std::to_string(::getpid()) + "_" + name);
}

// Runs `PREFIX trainsim --config-dir ... ARGS` (PREFIX: "" or an mpirun command line).
Result run(const std::vector<std::string>& args, const std::string& prefix = "") {
  std::string command =
      "timeout 300 " + prefix + quote(TRAINSIM_EXECUTABLE) + " --config-dir " + quote(TRAINSIM_CONFIG_DIR_FOR_TESTS);
  for (const auto& arg : args) command += " " + quote(arg);
  const fs::path out = scratchPath("stdout");
  const fs::path err = scratchPath("stderr");
  command += " >" + quote(out.string()) + " 2>" + quote(err.string()) + " </dev/null";
  const int status = std::system(command.c_str());
  Result result;
  if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.out = readFile(out);
  result.err = readFile(err);
  fs::remove(out);
  fs::remove(err);
  return result;
}

TEST(SweepCommandTest, JsonHasEveryPlanWithItsStatusBestFirst) {
  const ExperimentFile file;
  const fs::path json_path = scratchPath("plans.json");
  const Result result = run({"sweep", file.path(), "--threads", "2", "--json", json_path.string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("rank"), std::string::npos) << result.out;
  const auto json = nlohmann::json::parse(readFile(json_path));
  fs::remove(json_path);
  EXPECT_EQ(json["experiment"], "small-sweep");
  EXPECT_EQ(json["objective"], "time");
  EXPECT_EQ(json["simulation_mode"], "symmetric");
  const auto& plans = json["plans"];
  EXPECT_EQ(plans.size(), json["counts"]["enumerated"].get<std::size_t>());
  std::map<std::string, std::size_t> statuses;
  double previous = 0.0;
  for (const auto& plan : plans) {
    const std::string status = plan["status"];
    ++statuses[status];
    for (const char* key : {"dp", "tp", "pp", "cp", "ep", "virtual_stages", "microbatches"}) {
      EXPECT_TRUE(plan["parallelism"].contains(key)) << key;
    }
    if (status == "simulated") {
      for (const char* key : {"iteration_time_s", "mfu", "memory", "time_to_train_s", "cost_usd", "breakdown_s"}) {
        EXPECT_TRUE(plan.contains(key)) << key;
      }
      EXPECT_GE(plan["iteration_time_s"].get<double>(), previous);
      previous = plan["iteration_time_s"];
    } else {
      EXPECT_TRUE(plan.contains("reason")) << plan.dump();
    }
  }
  EXPECT_GT(statuses["simulated"], 0u);
  EXPECT_GT(statuses["pruned_memory"], 0u);
  EXPECT_GT(statuses["invalid"], 0u);
  EXPECT_GT(statuses["screened_out"], 0u);
  EXPECT_EQ(plans[0]["rank"], 1);
}

TEST(SweepCommandTest, PrunedPlanIsOneTheMemoryCommandRejects) {
  const ExperimentFile file;
  const Result sweep = run({"sweep", file.path(), "--max-simulations", "1", "--json", "-"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  const auto json = nlohmann::json::parse(sweep.out);
  int checked = 0;
  for (const auto& plan : json["plans"]) {
    const std::string status = plan["status"];
    if (status != "pruned_memory" && status != "screened_out") continue;
    const auto& p = plan["parallelism"];
    const Result memory = run({"memory", file.path(),
                               "--json", "-",
                               "--set",  "parallelism.tp=" + p["tp"].dump(),
                               "--set",  "parallelism.pp=" + p["pp"].dump(),
                               "--set",  "parallelism.cp=" + p["cp"].dump(),
                               "--set",  "parallelism.dp=" + p["dp"].dump(),
                               "--set",  "parallelism.virtual_stages=" + p["virtual_stages"].dump(),
                               "--set",  "parallelism.sequence_parallel=" + p["sequence_parallel"].dump(),
                               "--set",  "parallelism.zero=" + p["zero"].dump(),
                               "--set",  "parallelism.recompute=" + p["recompute"].get<std::string>(),
                               "--set",  "training.micro_batch_size=" + p["micro_batch_size"].dump()});
    EXPECT_EQ(memory.exit_code, status == "pruned_memory" ? 3 : 0) << plan.dump() << memory.err;
    const auto report = nlohmann::json::parse(memory.out);
    EXPECT_EQ(report["memory"], plan["memory"]);
    if (++checked == 6) break;
  }
  EXPECT_EQ(checked, 6);
}

TEST(SweepCommandTest, OutputDoesNotDependOnTheThreadCount) {
  const ExperimentFile file;
  const Result one = run({"sweep", file.path(), "--threads", "1", "--csv", "-"});
  const Result two = run({"sweep", file.path(), "--threads", "2", "--csv", "-"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(one.out, two.out);
  EXPECT_EQ(one.out.rfind("rank,status,cluster,gpus,tp,pp,dp,", 0), 0u) << one.out.substr(0, 200);
}

TEST(SweepCommandTest, MpirunGivesTheBytesOfTheSingleProcessRun) {
  if (!TRAINSIM_SWEEP_WITH_MPI) GTEST_SKIP() << "built without MPI (TRAINSIM_WITH_MPI)";
  const ExperimentFile file;
  const fs::path single = scratchPath("single.json");
  const fs::path distributed = scratchPath("mpi.json");
  const Result one = run({"sweep", file.path(), "--threads", "2", "--json", single.string()});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  // Root in CI containers: OpenMPI refuses to run as root unless told; two ranks on the
  // two cores of one host.
  const std::string mpirun =
      "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --allow-run-as-root --oversubscribe -np 2 ";
  const Result two = run({"sweep", file.path(), "--threads", "1", "--json", distributed.string()}, mpirun);
  ASSERT_EQ(two.exit_code, 0) << two.err << two.out;
  const std::string expected = readFile(single);
  EXPECT_FALSE(expected.empty());
  EXPECT_EQ(readFile(distributed), expected);
  EXPECT_EQ(two.out, one.out);  // rank 0 prints, once
  fs::remove(single);
  fs::remove(distributed);
}

TEST(SweepCommandTest, PlotIsAnSvgWithTheParetoFront) {
  const ExperimentFile file;
  const Result result = run({"sweep", file.path(), "--plot", "-"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.rfind("<svg", 0), 0u);
  EXPECT_NE(result.out.find("Pareto front"), std::string::npos);
  EXPECT_NE(result.out.find("</svg>"), std::string::npos);
}

TEST(SweepCommandTest, BadOptionsExitTwoWithAMessage) {
  const ExperimentFile file;
  const std::vector<std::vector<std::string>> cases = {
      {"--vary", "tq=1,2"},     {"--vary", "tp=1,x"},          {"--fix", "tp=3"},
      {"--objective", "speed"}, {"--objective", "cost"},       {"--deadline-days", "-1"},
      {"--fix", "dp=3"},        {"--clusters", "no-such-one"}, {"--set", "training.tokens=~", "--deadline-days", "30"},
  };
  for (const auto& extra : cases) {
    std::vector<std::string> args = {"sweep", file.path()};
    args.insert(args.end(), extra.begin(), extra.end());
    const Result result = run(args);
    EXPECT_EQ(result.exit_code, 2) << extra[0] << " " << extra[1] << ": " << result.err;
    EXPECT_NE(result.err.find("error"), std::string::npos) << result.err;
    EXPECT_TRUE(result.out.empty()) << result.out;
  }
}

TEST(SweepCommandTest, ComparesClustersAndGpuCountsByCost) {
  const ExperimentFile file;
  const Result result = run({"sweep", file.path(), "--clusters", "aws-p5,azure-nd-a100-v4", "--gpus", "8,16",
                             "--objective", "cost", "--vary", "tp=1,2,4,8", "--fix", "cp=1", "--json", "-"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["targets"].size(), 4u);
  double previous = 0.0;
  std::set<std::string> clusters;
  for (const auto& plan : json["plans"]) {
    if (plan["status"] != "simulated") continue;
    clusters.insert(plan["cluster"].get<std::string>());
    EXPECT_GE(plan["cost_usd"].get<double>(), previous);
    previous = plan["cost_usd"];
  }
  EXPECT_FALSE(clusters.empty());
}

}  // namespace
