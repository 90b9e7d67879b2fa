#include "sweep/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace trainsim::sweep {

void parallelFor(std::size_t count, int threads, const std::function<void(std::size_t index, int worker)>& body,
                 const std::function<void(std::size_t done)>& progress) {
  const int workers =
      static_cast<int>(std::clamp<std::size_t>(count, 1, static_cast<std::size_t>(std::max(threads, 1))));
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::mutex mutex;
  std::condition_variable finished;
  int running = workers;
  std::exception_ptr failure;

  auto work = [&](int worker) {
    while (true) {
      const std::size_t index = next.fetch_add(1);
      if (index >= count) break;
      try {
        body(index, worker);
      } catch (...) {
        const std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
        next.store(count);  // no new indices for anyone
      }
      done.fetch_add(1);
    }
    const std::lock_guard lock(mutex);
    --running;
    finished.notify_all();
  };

  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(workers));
  for (int worker = 0; worker < workers; ++worker) pool.emplace_back(work, worker);
  {
    std::unique_lock lock(mutex);
    while (!finished.wait_for(lock, std::chrono::milliseconds(200), [&] { return running == 0; })) {
      if (progress) {
        lock.unlock();
        progress(done.load());
        lock.lock();
      }
    }
  }
  for (auto& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
  if (progress) progress(done.load());
}

}  // namespace trainsim::sweep
