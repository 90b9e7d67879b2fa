// The sweep's thread pool: plain std::thread workers pulling indices from an atomic
// counter. Callers store each result at its index, so the output does not depend on the
// number of threads or on which thread ran what.
#pragma once

#include <cstddef>
#include <functional>

namespace trainsim::sweep {

// Calls body(index, worker) for every index in [0, count) on `threads` workers (worker in
// [0, threads)); `progress(done)` runs on the calling thread about every 200 ms and once at
// the end. The first exception a body throws stops the other workers from taking new
// indices and is rethrown here after all have joined.
void parallelFor(std::size_t count, int threads, const std::function<void(std::size_t index, int worker)>& body,
                 const std::function<void(std::size_t done)>& progress = {});

}  // namespace trainsim::sweep
