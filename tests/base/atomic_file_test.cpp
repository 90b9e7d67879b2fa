// Output files written whole or not at all, and output paths checked before any work
// (issue 40: an interrupted or failed write left a truncated file and destroyed the old one).
#include "base/atomic_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainsim {
namespace {

namespace fs = std::filesystem;

// A scratch directory for one test, removed at the end.
class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() / ("trainsim_atomic_file_test_" + std::to_string(::getpid()) + "_" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(directory_, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(directory_, ignored);
  }
  [[nodiscard]] std::string path(const std::string& name) const { return (directory_ / name).string(); }
  [[nodiscard]] std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(directory_)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  static std::string read(const std::string& file) {
    std::ifstream stream(file, std::ios::binary);
    std::ostringstream text;
    text << stream.rdbuf();
    return text.str();
  }
  static void write(const std::string& file, const std::string& text) { std::ofstream(file, std::ios::binary) << text; }

  fs::path directory_;
};

TEST_F(AtomicFileTest, WritesANewFileAndLeavesNothingElse) {
  const std::string file = path("out.json");
  EXPECT_FALSE(writeFileAtomically(file, [](std::ostream& out) { out << "{}\n"; }));
  EXPECT_EQ(read(file), "{}\n");
  EXPECT_EQ(entries(), std::vector<std::string>{"out.json"});
  // A new file gets the mode an ordinary one would (0666 less the umask), not mkstemp's 0600.
  const mode_t mask = ::umask(022);
  ::umask(mask);
  EXPECT_EQ(static_cast<mode_t>(fs::status(file).permissions()), 0666 & ~mask);
}

TEST_F(AtomicFileTest, ReplacesAnExistingFileKeepingItsPermissions) {
  const std::string file = path("out.csv");
  write(file, "old content that is longer than the new one\n");
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_FALSE(writeFileAtomically(file, [](std::ostream& out) { out << "new\n"; }));
  EXPECT_EQ(read(file), "new\n");
  EXPECT_EQ(fs::status(file).permissions(), fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_EQ(entries(), std::vector<std::string>{"out.csv"});
}

TEST_F(AtomicFileTest, AWriterThatFailsLeavesTheOldFileAndNoTemporary) {
  const std::string file = path("out.json");
  write(file, "previous\n");
  EXPECT_THROW((void)writeFileAtomically(file,
                                         [](std::ostream& out) {
                                           out << std::string(1 << 20, 'x');
                                           throw std::runtime_error("the writer failed half-way");
                                         }),
               std::runtime_error);
  EXPECT_EQ(read(file), "previous\n");
  EXPECT_EQ(entries(), std::vector<std::string>{"out.json"});
}

// A process killed in the middle of writing (an interrupt, the OOM killer) leaves the previous
// file as it was: the partial content is in a temporary file that never took its name.
TEST_F(AtomicFileTest, AProcessKilledWhileWritingLeavesTheOldFile) {
  const std::string file = path("trace.json");
  write(file, "previous\n");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    (void)writeFileAtomically(file, [](std::ostream& out) {
      out << std::string(1 << 20, 'x');
      out.flush();
      ::kill(::getpid(), SIGKILL);
    });
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(read(file), "previous\n");
}

TEST_F(AtomicFileTest, ASymbolicLinkIsFollowedAndKept) {
  const std::string target = path("run42.json");
  const std::string link = path("latest.json");
  write(target, "old\n");
  fs::create_symlink("run42.json", link);
  EXPECT_FALSE(writeFileAtomically(link, [](std::ostream& out) { out << "new\n"; }));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read(target), "new\n");
  EXPECT_EQ(entries(), (std::vector<std::string>{"latest.json", "run42.json"}));
}

TEST_F(AtomicFileTest, DevicesAreWrittenInPlace) {
  if (!fs::exists("/dev/null")) GTEST_SKIP() << "no /dev/null";
  EXPECT_FALSE(writeFileAtomically("/dev/null", [](std::ostream& out) { out << "discarded\n"; }));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_FALSE(checkOutputPath("/dev/null"));
  if (!fs::exists("/dev/full")) return;
  const auto full = writeFileAtomically("/dev/full", [](std::ostream& out) { out << std::string(1 << 16, 'x'); });
  ASSERT_TRUE(full);
  EXPECT_EQ(full->code, ExitCode::kInternal);
  EXPECT_EQ(full->toString(), "/dev/full: cannot write the output: No space left on device");
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
}

// /dev/shm is a file system like any other, not a device: its files are replaced whole too.
TEST_F(AtomicFileTest, AFileUnderDevShmIsNotWrittenInPlace) {
  if (!fs::is_directory("/dev/shm") || ::access("/dev/shm", W_OK) != 0) GTEST_SKIP() << "no writable /dev/shm";
  const std::string file = "/dev/shm/trainsim_atomic_file_test_" + std::to_string(::getpid());
  write(file, "previous\n");
  EXPECT_THROW((void)writeFileAtomically(file,
                                         [](std::ostream& out) {
                                           out << "partial";
                                           throw std::runtime_error("failed");
                                         }),
               std::runtime_error);
  EXPECT_EQ(read(file), "previous\n");
  fs::remove(file);
}

TEST_F(AtomicFileTest, PathsThatCannotBeWrittenAreRuntimeErrorsNamingThem) {
  const std::string missing = path("no-such-directory/out.json");
  for (const auto& error : {checkOutputPath(missing), writeFileAtomically(missing, [](std::ostream&) {})}) {
    ASSERT_TRUE(error);
    EXPECT_EQ(error->code, ExitCode::kInternal);
    EXPECT_EQ(error->toString(), missing + ": cannot write the output file: No such file or directory");
  }
  const std::string directory = directory_.string();
  for (const auto& error : {checkOutputPath(directory), writeFileAtomically(directory, [](std::ostream&) {})}) {
    ASSERT_TRUE(error);
    EXPECT_EQ(error->toString(), directory + ": cannot write the output file: Is a directory");
  }
  write(path("plain"), "x");
  const std::string under_file = path("plain/out.json");
  const auto not_directory = checkOutputPath(under_file);
  ASSERT_TRUE(not_directory);
  EXPECT_EQ(not_directory->toString(), under_file + ": cannot write the output file: Not a directory");
  // Nothing was created by the checks.
  EXPECT_EQ(entries(), std::vector<std::string>{"plain"});
  EXPECT_FALSE(checkOutputPath(path("fine.json")));
  EXPECT_FALSE(checkOutputPath("-"));
  EXPECT_FALSE(checkOutputPath(""));
  EXPECT_EQ(entries(), std::vector<std::string>{"plain"});
}

TEST_F(AtomicFileTest, AReadOnlyFileOrDirectoryIsNotWritten) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes regardless of permissions";
  const std::string file = path("kept.json");
  write(file, "kept\n");
  fs::permissions(file, fs::perms::owner_read);
  const auto read_only = checkOutputPath(file);
  ASSERT_TRUE(read_only);
  EXPECT_EQ(read_only->toString(), file + ": cannot write the output file: Permission denied");
  EXPECT_TRUE(writeFileAtomically(file, [](std::ostream& out) { out << "new\n"; }));
  EXPECT_EQ(read(file), "kept\n");
  fs::permissions(directory_, fs::perms::owner_read | fs::perms::owner_exec);
  const auto locked = checkOutputPath(path("new.json"));
  ASSERT_TRUE(locked);
  EXPECT_EQ(locked->toString(), path("new.json") + ": cannot write the output file: Permission denied");
}

}  // namespace
}  // namespace trainsim
