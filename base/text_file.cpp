#include "base/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

namespace trainsim {
namespace {

std::string_view fileKind(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

// Closes the descriptor on every path out of readTextFile.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::string formatByteSize(std::uintmax_t bytes) {
  if (bytes >= (std::uintmax_t{1} << 20) && bytes % (std::uintmax_t{1} << 20) == 0) {
    return fmt::format("{} MiB", bytes >> 20);
  }
  if (bytes >= (std::uintmax_t{1} << 10) && bytes % (std::uintmax_t{1} << 10) == 0) {
    return fmt::format("{} KiB", bytes >> 10);
  }
  return fmt::format("{} bytes", bytes);
}

Expected<std::string> readTextFile(const std::string& path, std::string_view what, std::uintmax_t max_bytes) {
  auto error = [&](std::string message) { return Error{ExitCode::kInvalidInput, path, "", std::move(message)}; };
  const std::string unreadable = fmt::format("cannot read {}", what);
  // Opened before it is looked at, so that what is checked is what is read. O_NONBLOCK: opening
  // a FIFO must not wait for a writer; it is refused just below.
  const Descriptor file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (file.get() < 0) {
    struct stat status {};
    if (::stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode)) {
      return error(fmt::format("is a directory, expected {}", what));
    }
    return error(unreadable);
  }
  struct stat status {};
  if (::fstat(file.get(), &status) != 0) return error(unreadable);
  if (S_ISDIR(status.st_mode)) return error(fmt::format("is a directory, expected {}", what));
  if (!S_ISREG(status.st_mode)) {
    return error(fmt::format("is not a regular file ({}), expected {}", fileKind(status.st_mode), what));
  }
  const std::string too_large = fmt::format("is larger than the {} limit on {}", formatByteSize(max_bytes), what);
  if (static_cast<std::uintmax_t>(status.st_size) > max_bytes) return error(too_large);
  std::string text;
  text.reserve(static_cast<std::size_t>(status.st_size));
  char buffer[1 << 16];
  while (true) {
    const ssize_t count = ::read(file.get(), buffer, sizeof buffer);
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) return error(unreadable);
    if (count == 0) break;
    if (text.size() + static_cast<std::size_t>(count) > max_bytes) return error(too_large);
    text.append(buffer, static_cast<std::size_t>(count));
  }
  return text;
}

}  // namespace trainsim
