// MPI (OpenMPI) behind ProcessGroup; compiled only when TRAINSIM_WITH_MPI is on.
#include <mpi.h>

#include <cstdlib>
#include <numeric>
#include <stdexcept>

#include "sweep/process_group.h"

namespace trainsim::sweep {
namespace {

void check(int status, const char* call) {
  if (status != MPI_SUCCESS) throw std::runtime_error(std::string("MPI call failed: ") + call);
}

class MpiWorld final : public ProcessGroup {
 public:
  MpiWorld() {
    int initialized = 0;
    check(MPI_Initialized(&initialized), "MPI_Initialized");
    if (!initialized) check(MPI_Init(nullptr, nullptr), "MPI_Init");
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  }
  ~MpiWorld() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }

  [[nodiscard]] std::vector<double> allGather(const std::vector<double>& local) override {
    const int count = static_cast<int>(local.size());
    std::vector<int> counts(static_cast<std::size_t>(size_));
    check(MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
    std::vector<int> offsets(counts.size(), 0);
    std::exclusive_scan(counts.begin(), counts.end(), offsets.begin(), 0);
    std::vector<double> all(static_cast<std::size_t>(offsets.back() + counts.back()));
    check(MPI_Allgatherv(local.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE,
                         MPI_COMM_WORLD),
          "MPI_Allgatherv");
    return all;
  }

 private:
  int rank_ = 0;
  int size_ = 1;
};

// Launched by mpirun (OpenMPI sets OMPI_COMM_WORLD_SIZE, PMIx launchers PMIX_RANK): a
// plain run never initialises MPI, so it starts as fast as a build without MPI.
bool launchedByMpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
         std::getenv("PMI_RANK") != nullptr;
}

}  // namespace

std::unique_ptr<ProcessGroup> joinProcessGroup() {
  if (!launchedByMpirun()) return singleProcess();
  return std::make_unique<MpiWorld>();
}

bool builtWithMpi() { return true; }

}  // namespace trainsim::sweep
