// A configuration file parsed once per process: the shipped defaults are read by every
// simulation, and the commands that run simulations on threads (sweep, validate training)
// may ask for them from several threads at once.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "base/config_node.h"
#include "base/expected.h"

namespace trainsim {

// `read(loadConfigFile(path))`, parsed on the first call for `path` and kept, an error at
// file:line:col included, for every later call (one cache per result type, under a lock).
template <class T, class Read>
Expected<T> loadConfigFileOnce(const std::string& path, Read read) {
  static std::mutex mutex;
  static std::map<std::string, Expected<T>> cache;
  const std::scoped_lock lock(mutex);
  auto found = cache.find(path);
  if (found == cache.end()) {
    found = cache.emplace(path, catchInputErrors([&] { return read(loadConfigFile(path)); })).first;
  }
  return found->second;
}

}  // namespace trainsim
