// The processes a sweep is split over: the MPI world when trainsim runs under mpirun and
// was built with MPI (TRAINSIM_WITH_MPI), else this process alone. The rest of the sweep
// sees only this interface; the MPI calls live in process_group_mpi.cpp.
#pragma once

#include <memory>
#include <vector>

namespace trainsim::sweep {

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  // Every process's `local` values, concatenated in rank order, on every process.
  [[nodiscard]] virtual std::vector<double> allGather(const std::vector<double>& local) = 0;
};

// This process alone.
[[nodiscard]] std::unique_ptr<ProcessGroup> singleProcess();

// The MPI world when started by mpirun in an MPI build (MPI is initialised here and
// finalised when the group is destroyed), else singleProcess().
[[nodiscard]] std::unique_ptr<ProcessGroup> joinProcessGroup();

// Whether this build can run distributed.
[[nodiscard]] bool builtWithMpi();

}  // namespace trainsim::sweep
