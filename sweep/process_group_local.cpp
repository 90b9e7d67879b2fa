// ProcessGroup without MPI (TRAINSIM_WITH_MPI off or MPI not found): always this process alone.
#include "sweep/process_group.h"

namespace trainsim::sweep {

std::unique_ptr<ProcessGroup> joinProcessGroup() { return singleProcess(); }

bool builtWithMpi() { return false; }

}  // namespace trainsim::sweep
