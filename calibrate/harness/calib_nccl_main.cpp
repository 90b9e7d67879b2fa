// trainsim-calib-nccl: NCCL collectives over a size sweep and over the group layouts training
// uses, one GPU per MPI rank; rank 0 writes the results file that `trainsim calibrate
// --harness` reads (docs/harness.md). Layouts, sizes, bus-bandwidth factors and the results
// file come from the trainsim::harness library (no GPU needed); this file only makes the
// MPI, CUDA and NCCL calls.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <mpi.h>
#include <nccl.h>

#include <cstring>
#include <exception>
#include <iostream>
#include <vector>

#include "calibrate/harness/collective_buffers.h"
#include "calibrate/harness/cuda_support.h"
#include "calibrate/harness/group_layouts.h"
#include "calibrate/harness/harness_options.h"
#include "calibrate/harness/harness_results_writer.h"
#include "calibrate/harness/size_sweep.h"

namespace {

using namespace trainsim;
using namespace trainsim::harness;

constexpr const char* kProgram = "trainsim-calib-nccl";

void checkMpi(int status, const char* call) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw HarnessFailure(fmt::format("{} failed: {}", call, text));
}
#define TRAINSIM_MPI_CHECK(call) checkMpi((call), #call)

void checkNccl(ncclResult_t status, const char* call) {
  if (status == ncclSuccess) return;
  const char* last = ncclGetLastError(nullptr);
  throw HarnessFailure(fmt::format("{} failed: {}{}{}", call, ncclGetErrorString(status),
                                   last != nullptr && last[0] != '\0' ? ": " : "", last != nullptr ? last : ""));
}
#define TRAINSIM_NCCL_CHECK(call) checkNccl((call), #call)

std::string ncclVersionString() {
  int version = 0;
  TRAINSIM_NCCL_CHECK(ncclGetVersion(&version));
  // NCCL >= 2.9 encodes major * 10000 + minor * 100 + patch, older ones major * 1000 + minor * 100 + patch.
  if (version >= 10000) return fmt::format("{}.{}.{}", version / 10000, (version % 10000) / 100, version % 100);
  return fmt::format("{}.{}.{}", version / 1000, (version % 1000) / 100, version % 100);
}

ncclDataType_t ncclType(topology::Precision dtype) {
  switch (dtype) {
    case topology::Precision::kFp32: return ncclFloat32;
    case topology::Precision::kFp16: return ncclFloat16;
    case topology::Precision::kBf16: return ncclBfloat16;
    default: throw HarnessFailure("unsupported NCCL element type");
  }
}

int64_t elementBytes(topology::Precision dtype) { return dtype == topology::Precision::kFp32 ? 4 : 2; }

struct World {
  int rank = 0;
  int size = 0;
  std::vector<RankPlace> places;  // index = world rank
};

// Node and local rank of every rank: ranks sharing memory are one node; node indices follow
// the world rank of each node's local rank 0.
World discoverWorld() {
  World world;
  TRAINSIM_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world.rank));
  TRAINSIM_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &world.size));
  MPI_Comm node_comm = MPI_COMM_NULL;
  TRAINSIM_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world.rank, MPI_INFO_NULL, &node_comm));
  int local_rank = 0;
  TRAINSIM_MPI_CHECK(MPI_Comm_rank(node_comm, &local_rank));
  MPI_Comm leaders = MPI_COMM_NULL;
  TRAINSIM_MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, local_rank == 0 ? 0 : MPI_UNDEFINED, world.rank, &leaders));
  int node = 0;
  if (leaders != MPI_COMM_NULL) {
    TRAINSIM_MPI_CHECK(MPI_Comm_rank(leaders, &node));
    TRAINSIM_MPI_CHECK(MPI_Comm_free(&leaders));
  }
  TRAINSIM_MPI_CHECK(MPI_Bcast(&node, 1, MPI_INT, 0, node_comm));
  TRAINSIM_MPI_CHECK(MPI_Comm_free(&node_comm));
  const int mine[2] = {node, local_rank};
  std::vector<int> all(2 * static_cast<std::size_t>(world.size));
  TRAINSIM_MPI_CHECK(MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, MPI_COMM_WORLD));
  for (int rank = 0; rank < world.size; ++rank) {
    world.places.push_back({all[2 * static_cast<std::size_t>(rank)], all[2 * static_cast<std::size_t>(rank) + 1]});
  }
  return world;
}

// Every rank checks its GPU; all agree before anything else runs. Returns the error this
// rank saw ("" when none) and whether any rank failed.
bool everyRankHasItsGpu(const World& world, std::string& error) {
  const int local_rank = world.places[static_cast<std::size_t>(world.rank)].local_rank;
  try {
    const int devices = cudaDeviceCountOrFail();
    if (local_rank >= devices) {
      throw HarnessFailure(fmt::format("local rank {} but only {} CUDA devices on this node: run one rank per GPU",
                                       local_rank, devices));
    }
    TRAINSIM_CUDA_CHECK(cudaSetDevice(local_rank));
  } catch (const HarnessFailure& failure) {
    error = failure.what();
  }
  int ok = error.empty() ? 1 : 0;
  int all_ok = 0;
  TRAINSIM_MPI_CHECK(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  return all_ok == 1;
}

// One layout's communicator on this rank (none when the rank is idle in the layout).
class LayoutCommunicator {
 public:
  LayoutCommunicator(const GroupLayout& layout, int world_rank) {
    const int group = layout.groupOf(world_rank);
    rank_ = layout.rankInGroup(world_rank);
    size_ = layout.group_size;
    TRAINSIM_MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, group >= 0 ? group : MPI_UNDEFINED, rank_, &mpi_));
    if (group < 0) return;
    ncclUniqueId id{};
    if (rank_ == 0) TRAINSIM_NCCL_CHECK(ncclGetUniqueId(&id));
    TRAINSIM_MPI_CHECK(MPI_Bcast(&id, static_cast<int>(sizeof(id)), MPI_BYTE, 0, mpi_));
    TRAINSIM_NCCL_CHECK(ncclCommInitRank(&nccl_, size_, id, rank_));
  }
  ~LayoutCommunicator() {
    if (nccl_ != nullptr) ncclCommDestroy(nccl_);
    if (mpi_ != MPI_COMM_NULL) MPI_Comm_free(&mpi_);
  }
  LayoutCommunicator(const LayoutCommunicator&) = delete;
  LayoutCommunicator& operator=(const LayoutCommunicator&) = delete;

  [[nodiscard]] bool member() const { return nccl_ != nullptr; }
  [[nodiscard]] ncclComm_t comm() const { return nccl_; }
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }

 private:
  MPI_Comm mpi_ = MPI_COMM_NULL;
  ncclComm_t nccl_ = nullptr;
  int rank_ = -1;
  int size_ = 0;
};

struct DeviceBuffers {
  void* send = nullptr;
  void* recv = nullptr;
};

// Enqueues one collective on `stream` (out of place, as nccl-tests' out-of-place columns).
void launch(perf::CollectiveOp op, const CollectiveBuffers& buffers, ncclDataType_t type, int64_t element_bytes,
            const LayoutCommunicator& communicator, const DeviceBuffers& memory, cudaStream_t stream) {
  const auto count = static_cast<std::size_t>(buffers.call_count);
  ncclComm_t comm = communicator.comm();
  const int rank = communicator.rank();
  const int size = communicator.size();
  switch (op) {
    case perf::CollectiveOp::kAllReduce:
      TRAINSIM_NCCL_CHECK(ncclAllReduce(memory.send, memory.recv, count, type, ncclSum, comm, stream));
      return;
    case perf::CollectiveOp::kAllGather:
      TRAINSIM_NCCL_CHECK(ncclAllGather(memory.send, memory.recv, count, type, comm, stream));
      return;
    case perf::CollectiveOp::kReduceScatter:
      TRAINSIM_NCCL_CHECK(ncclReduceScatter(memory.send, memory.recv, count, type, ncclSum, comm, stream));
      return;
    case perf::CollectiveOp::kAllToAll: {
      // As nccl-tests' alltoall: a grouped send and receive of `count` elements with every peer.
      const std::size_t block = count * static_cast<std::size_t>(element_bytes);
      TRAINSIM_NCCL_CHECK(ncclGroupStart());
      for (int peer = 0; peer < size; ++peer) {
        const std::size_t offset = static_cast<std::size_t>(peer) * block;
        TRAINSIM_NCCL_CHECK(ncclSend(static_cast<char*>(memory.send) + offset, count, type, peer, comm, stream));
        TRAINSIM_NCCL_CHECK(ncclRecv(static_cast<char*>(memory.recv) + offset, count, type, peer, comm, stream));
      }
      TRAINSIM_NCCL_CHECK(ncclGroupEnd());
      return;
    }
    case perf::CollectiveOp::kSendRecv:
      // As nccl-tests' sendrecv: every rank sends to the next and receives from the previous.
      TRAINSIM_NCCL_CHECK(ncclGroupStart());
      TRAINSIM_NCCL_CHECK(ncclSend(memory.send, count, type, (rank + 1) % size, comm, stream));
      TRAINSIM_NCCL_CHECK(ncclRecv(memory.recv, count, type, (rank + size - 1) % size, comm, stream));
      TRAINSIM_NCCL_CHECK(ncclGroupEnd());
      return;
    case perf::CollectiveOp::kBroadcast: break;
  }
  throw HarnessFailure("collective not measured by the harness");
}

// One (op, layout) sweep; every world rank takes part (idle ones contribute zero times), and
// each repetition's time is the slowest rank's, so concurrent groups count as training sees them.
CollectiveSeries measureSeries(perf::CollectiveOp op, const GroupLayout& layout, const NcclHarnessOptions& options,
                               const std::vector<int64_t>& sizes, const World& world,
                               const LayoutCommunicator& communicator, const DeviceBuffers& memory,
                               cudaStream_t stream) {
  CollectiveSeries series;
  series.op = op;
  series.layout = layout.kind;
  series.group_size = layout.group_size;
  series.nodes = layout.nodes;
  series.gpus_per_node = layout.gpus_per_node;
  series.dtype = options.dtype;
  series.warmup = options.warmup;
  series.iterations = options.iterations;
  const ncclDataType_t type = ncclType(options.dtype);
  const int64_t element_bytes = elementBytes(options.dtype);
  int64_t previous_bytes = 0;
  for (const int64_t requested : sizes) {
    const auto buffers = collectiveBuffers(op, requested, layout.group_size, element_bytes);
    if (!buffers || buffers->bytes == previous_bytes) continue;  // same decision on every rank
    previous_bytes = buffers->bytes;
    std::vector<double> durations(static_cast<std::size_t>(options.iterations), 0.0);
    TRAINSIM_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (communicator.member()) {
      for (int i = 0; i < options.warmup; ++i) launch(op, *buffers, type, element_bytes, communicator, memory, stream);
      EventSeries events(options.iterations);
      for (int i = 0; i < options.iterations; ++i) {
        events.mark(i, stream);
        launch(op, *buffers, type, element_bytes, communicator, memory, stream);
      }
      events.mark(options.iterations, stream);
      durations = events.durationsUs();
    }
    std::vector<double> slowest(durations.size(), 0.0);
    TRAINSIM_MPI_CHECK(MPI_Reduce(durations.data(), slowest.data(), static_cast<int>(durations.size()), MPI_DOUBLE,
                                  MPI_MAX, 0, MPI_COMM_WORLD));
    if (world.rank != 0) continue;
    series.results.push_back(collectiveSample(op, layout.group_size, buffers->bytes, median(slowest)));
    const CollectiveSample& sample = series.results.back();
    std::cerr << fmt::format("{}: {:>14} {:>12} x{:<5} {:>12} B {:>12.2f} us {:>9.2f} GB/s algbw {:>9.2f} GB/s busbw\n",
                             kProgram, perf::collectiveOpName(op), layoutName(layout.kind), layout.group_size,
                             sample.bytes, sample.time_us, sample.algbw_GBps, sample.busbw_GBps);
  }
  return series;
}

int run(const NcclHarnessOptions& options) {
  const World world = discoverWorld();
  const auto shape = jobShape(world.places);
  if (!shape.ok()) {
    if (world.rank == 0) std::cerr << kProgram << ": error: " << shape.error().toString() << "\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  std::string gpu_error;
  if (!everyRankHasItsGpu(world, gpu_error)) {
    if (!gpu_error.empty()) std::cerr << fmt::format("{}: error: rank {}: {}\n", kProgram, world.rank, gpu_error);
    return static_cast<int>(ExitCode::kInternal);
  }
  const auto sizes = sizeSweep(options.min_bytes, options.max_bytes, options.step_factor);
  if (!sizes.ok()) throw HarnessFailure(sizes.error().toString());  // checked when parsing

  NcclResults results;
  results.gpu = cudaDeviceName(world.places[static_cast<std::size_t>(world.rank)].local_rank);
  results.cuda_runtime = cudaRuntimeVersion();
  results.nccl_version = ncclVersionString();
  results.ranks = shape->ranks;
  results.nodes = shape->nodes;
  results.gpus_per_node = shape->gpus_per_node;
  if (world.rank == 0) {
    std::cerr << fmt::format("{}: {} ranks on {} nodes x {} GPUs ({}), NCCL {}, {} sizes {}..{} B\n", kProgram,
                             results.ranks, results.nodes, results.gpus_per_node, results.gpu, results.nccl_version,
                             sizes->size(), options.min_bytes, options.max_bytes);
  }

  // Every op's send and receive buffers fit in max_bytes (sizes are rounded down, never up).
  DeviceBuffers memory;
  TRAINSIM_CUDA_CHECK(cudaMalloc(&memory.send, static_cast<std::size_t>(options.max_bytes)));
  TRAINSIM_CUDA_CHECK(cudaMalloc(&memory.recv, static_cast<std::size_t>(options.max_bytes)));
  TRAINSIM_CUDA_CHECK(cudaMemset(memory.send, 0, static_cast<std::size_t>(options.max_bytes)));
  TRAINSIM_CUDA_CHECK(cudaMemset(memory.recv, 0, static_cast<std::size_t>(options.max_bytes)));
  cudaStream_t stream = nullptr;
  TRAINSIM_CUDA_CHECK(cudaStreamCreate(&stream));

  for (const LayoutKind kind : options.layouts) {
    const GroupLayout layout = buildGroupLayout(kind, world.places, options.tp);
    if (layout.skipped) {
      if (world.rank == 0) {
        std::cerr << fmt::format("{}: layout {} skipped: {}\n", kProgram, layoutName(kind), *layout.skipped);
      }
      continue;
    }
    const LayoutCommunicator communicator(layout, world.rank);
    for (const perf::CollectiveOp op : options.ops) {
      CollectiveSeries series = measureSeries(op, layout, options, *sizes, world, communicator, memory, stream);
      if (world.rank != 0) continue;
      if (series.results.empty()) {
        std::cerr << fmt::format("{}: {} on {} skipped: no size from {} to {} B gives every rank a whole element\n",
                                 kProgram, perf::collectiveOpName(op), layoutName(kind), options.min_bytes,
                                 options.max_bytes);
        continue;
      }
      results.collectives.push_back(std::move(series));
    }
    TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  TRAINSIM_CUDA_CHECK(cudaStreamDestroy(stream));
  TRAINSIM_CUDA_CHECK(cudaFree(memory.send));
  TRAINSIM_CUDA_CHECK(cudaFree(memory.recv));

  if (world.rank != 0) return 0;
  if (results.collectives.empty()) {
    std::cerr << kProgram << ": error: nothing measured (every layout skipped): no results file written\n";
    return static_cast<int>(ExitCode::kInternal);
  }
  if (auto error = writeResultsFile(options.out, ncclResultsYaml(results))) {
    std::cerr << kProgram << ": error: " << error->toString() << "\n";
    return static_cast<int>(error->code);
  }
  if (options.out != "-") std::cerr << fmt::format("{}: wrote {}\n", kProgram, options.out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Options first: --help and bad options need neither MPI nor a GPU.
  auto command_line = parseNcclHarnessArguments(argumentList(argc, argv));
  if (!command_line.ok()) {
    std::cerr << kProgram << ": error: " << command_line.error().toString() << "\n";
    return static_cast<int>(command_line.error().code);
  }
  if (command_line->help) {
    std::cout << *command_line->help;
    return 0;
  }
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    std::cerr << kProgram << ": error: MPI_Init failed\n";
    return static_cast<int>(ExitCode::kInternal);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int code = 0;
  try {
    code = run(command_line->options);
  } catch (const std::exception& error) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::cerr << fmt::format("{}: error: rank {}: {}\n", kProgram, rank, error.what());
    // The other ranks may be waiting in a collective: take the whole job down.
    MPI_Abort(MPI_COMM_WORLD, static_cast<int>(ExitCode::kInternal));
    return static_cast<int>(ExitCode::kInternal);
  }
  MPI_Finalize();
  return code;
}
