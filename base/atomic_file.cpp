#include "base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace trainsim {
namespace {

namespace fs = std::filesystem;

std::string reason(int code) { return code != 0 ? std::string(std::strerror(code)) : std::string("write error"); }

Error outputError(const std::string& path, const std::string& what, int code) {
  return Error{ExitCode::kInternal, path, "", what + ": " + reason(code)};
}

Error cannotCreate(const std::string& path, int code) {
  return outputError(path, "cannot write the output file", code);
}

// Where the content goes: the file to replace (symbolic links followed), or, for what cannot
// be replaced by a rename, the path itself written in place.
struct Target {
  fs::path file;
  bool in_place = false;
  bool exists = false;
};

Target targetOf(const std::string& path) {
  Target target{fs::path(path), false, false};
  std::error_code error;
  const fs::path absolute = fs::absolute(target.file, error);
  // /dev/stdout and /proc/self/fd/N name a descriptor another program holds open: replacing
  // the file they lead to would leave that program writing to a deleted one. /dev/shm is an
  // ordinary (memory) file system.
  const std::string text = error ? path : absolute.lexically_normal().string();
  const bool special_tree = (text.starts_with("/dev/") && !text.starts_with("/dev/shm/")) || text.starts_with("/proc/");
  const fs::file_status status = fs::status(target.file, error);
  target.exists = !error && fs::exists(status);
  if (special_tree || (target.exists && !fs::is_regular_file(status) && !fs::is_directory(status))) {
    target.in_place = true;
    return target;
  }
  if (target.exists && fs::is_symlink(fs::symlink_status(target.file, error))) {
    const fs::path resolved = fs::canonical(target.file, error);
    if (!error) target.file = resolved;
  }
  return target;
}

fs::path directoryOf(const fs::path& file) { return file.has_parent_path() ? file.parent_path() : fs::path("."); }

// A temporary file beside `file`, created (never an existing one) with the mode a new file
// gets (0666 less the umask); its descriptor is closed again. Empty, with errno, on failure.
std::string createTemporary(const fs::path& file) {
  static std::atomic<unsigned> counter{0};
  const fs::path directory = directoryOf(file);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string name = "." + file.filename().string() + ".trainsim-" + std::to_string(::getpid()) + "-" +
                             std::to_string(counter.fetch_add(1)) + ".tmp";
    const std::string temporary = (directory / name).string();
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      return temporary;
    }
    if (errno != EEXIST) return {};
  }
  return {};
}

// Removes the temporary file on every way out that did not rename it.
class TemporaryFile {
 public:
  explicit TemporaryFile(std::string path) : path_(std::move(path)) {}
  ~TemporaryFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }
  void release() { path_.clear(); }

 private:
  std::string path_;
};

// Why `target` cannot be replaced or created, as an errno value; 0 when it can be.
int replaceProblem(const Target& target) {
  std::error_code error;
  if (target.exists && fs::is_directory(target.file, error)) return EISDIR;
  // A file made read-only is not overwritten: the rename would replace it regardless.
  if (target.exists && ::access(target.file.c_str(), W_OK) != 0) return errno;
  const fs::path directory = directoryOf(target.file);
  if (!fs::exists(directory, error)) return ENOENT;
  if (!fs::is_directory(directory, error)) return ENOTDIR;
  return 0;
}

std::optional<Error> writeInPlace(const std::string& path, const std::function<void(std::ostream&)>& write) {
  errno = 0;
  std::ofstream stream(path, std::ios::binary);
  if (!stream) return cannotCreate(path, errno);
  write(stream);
  stream.close();
  if (!stream) return outputError(path, "cannot write the output", errno);
  return std::nullopt;
}

}  // namespace

std::optional<Error> writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const Target target = targetOf(path);
  if (target.in_place) return writeInPlace(path, write);
  if (const int problem = replaceProblem(target)) return cannotCreate(path, problem);
  TemporaryFile temporary(createTemporary(target.file));
  if (temporary.path().empty()) return cannotCreate(path, errno);
  struct stat old_status {};
  if (target.exists && ::stat(target.file.c_str(), &old_status) == 0) {
    ::chmod(temporary.path().c_str(), old_status.st_mode & 07777);
  }
  errno = 0;
  std::ofstream stream(temporary.path(), std::ios::binary | std::ios::trunc);
  if (!stream) return cannotCreate(path, errno);
  write(stream);
  stream.close();
  if (!stream) return outputError(path, "cannot write the output", errno);
  // On disk before it takes the target's name, so that a crash cannot leave an empty file
  // under it (the rename may reach the disk before the data otherwise).
  const int fd = ::open(temporary.path().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int code = errno;
    if (fd >= 0) ::close(fd);
    return outputError(path, "cannot write the output", code);
  }
  ::close(fd);
  if (::rename(temporary.path().c_str(), target.file.c_str()) != 0) {
    return outputError(path, "cannot write the output", errno);
  }
  temporary.release();
  return std::nullopt;
}

std::optional<Error> checkOutputPath(const std::string& path) {
  if (path.empty() || path == "-") return std::nullopt;
  const Target target = targetOf(path);
  if (target.in_place) {
    // Written as a plain open would: the device, or a new file in its directory.
    const std::string checked = target.exists ? path : directoryOf(target.file).string();
    if (::access(checked.c_str(), W_OK) != 0) return cannotCreate(path, errno);
    return std::nullopt;
  }
  if (const int problem = replaceProblem(target)) return cannotCreate(path, problem);
  const TemporaryFile temporary(createTemporary(target.file));
  if (temporary.path().empty()) return cannotCreate(path, errno);
  return std::nullopt;
}

}  // namespace trainsim
