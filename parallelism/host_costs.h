// What the host spends launching a pass's work when it is modelled (training.dispatch;
// withHostDispatch in iteration_simulation.cpp). All 0: the host is not modelled.
#pragma once

namespace trainsim::parallelism {

struct HostCosts {
  // Per kernel the framework dispatches: an op's kernels (kernelsOf) and each collective call.
  double per_kernel_s = 0.0;
  // Per library call beyond those kernels (Op::library_calls_*).
  double per_library_call_s = 0.0;
  // Per kernel the framework's C++ launches inside one op (Op::native_kernels_*).
  double per_native_kernel_s = 0.0;
  // Per framework op issued from Python outside the passes' kernels, at the bare rate of one
  // op (compute dispatch_eager_us, without the in-step factor): DeepSpeed's per-rank views of a
  // list-form collective (ShardedDataParallel::list_collectives).
  double per_bare_op_s = 0.0;

  [[nodiscard]] bool modelled() const { return per_kernel_s > 0.0; }
};

}  // namespace trainsim::parallelism
