#include "base/text_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

namespace trainsim {
namespace {

std::filesystem::path scratchDirectory() {
  const auto directory = std::filesystem::temp_directory_path() / "trainsim_text_file_test";
  std::filesystem::create_directories(directory);
  return directory;
}

TEST(ReadTextFile, ReturnsEveryByteIncludingCarriageReturnsAndNul) {
  const auto path = (scratchDirectory() / "bytes.txt").string();
  const std::string bytes("a,b\r\n1,2\n\0tail", 14);
  std::ofstream(path, std::ios::binary) << bytes;
  const Expected<std::string> text = readTextFile(path, "a CSV", kMaxMeasurementFileBytes);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, bytes);
}

TEST(ReadTextFile, AnEmptyFileIsEmptyTextNotAnError) {
  const auto path = (scratchDirectory() / "empty.txt").string();
  std::ofstream(path, std::ios::binary).close();
  const Expected<std::string> text = readTextFile(path, "a CSV", kMaxMeasurementFileBytes);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "");
}

TEST(ReadTextFile, AMissingFileIsAnInputErrorNamingThePath) {
  const auto path = (scratchDirectory() / "no-such-file.log").string();
  const Expected<std::string> text = readTextFile(path, "an nccl-tests log file", kMaxMeasurementFileBytes);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code, ExitCode::kInvalidInput);
  EXPECT_EQ(text.error().toString(), path + ": cannot read an nccl-tests log file");
}

TEST(ReadTextFile, ADirectoryIsAnInputErrorSayingWhatWasExpected) {
  const auto directory = scratchDirectory().string();
  const Expected<std::string> text = readTextFile(directory, "an nccl-tests log file", kMaxMeasurementFileBytes);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code, ExitCode::kInvalidInput);
  EXPECT_EQ(text.error().toString(), directory + ": is a directory, expected an nccl-tests log file");
}

// Regression test for issue 40: `simulate /dev/zero` read 8.6 GB before failing.
TEST(ReadTextFile, ACharacterDeviceIsRefusedWithoutReadingIt) {
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  const auto start = std::chrono::steady_clock::now();
  const Expected<std::string> text = readTextFile("/dev/zero", "a YAML file", kMaxConfigFileBytes);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code, ExitCode::kInvalidInput);
  EXPECT_EQ(text.error().toString(), "/dev/zero: is not a regular file (a character device), expected a YAML file");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(ReadTextFile, AFifoIsRefusedWithoutWaitingForAWriter) {
  const auto path = (scratchDirectory() / "fifo").string();
  std::filesystem::remove(path);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  const Expected<std::string> text = readTextFile(path, "an nccl-tests log file", kMaxMeasurementFileBytes);
  std::filesystem::remove(path);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().toString(), path + ": is not a regular file (a FIFO), expected an nccl-tests log file");
}

TEST(ReadTextFile, AFileOverTheLimitIsRefusedAndOneAtTheLimitIsRead) {
  const auto path = (scratchDirectory() / "sized.txt").string();
  std::ofstream(path, std::ios::binary) << std::string(1024, 'x');
  const Expected<std::string> at_limit = readTextFile(path, "a CSV", 1024);
  ASSERT_TRUE(at_limit.ok()) << at_limit.error().toString();
  EXPECT_EQ(at_limit->size(), 1024u);
  const Expected<std::string> over = readTextFile(path, "a CSV", 1023);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, ExitCode::kInvalidInput);
  EXPECT_EQ(over.error().toString(), path + ": is larger than the 1023 bytes limit on a CSV");
}

// A file of /proc reports size 0 and has content: the bound holds while reading.
TEST(ReadTextFile, TheLimitHoldsForAFileThatReportsNoSize) {
  if (!std::filesystem::exists("/proc/self/status")) GTEST_SKIP() << "no /proc";
  const Expected<std::string> small = readTextFile("/proc/self/status", "a YAML file", 16);
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.error().toString(), "/proc/self/status: is larger than the 16 bytes limit on a YAML file");
  const Expected<std::string> whole = readTextFile("/proc/self/status", "a YAML file", kMaxConfigFileBytes);
  ASSERT_TRUE(whole.ok());
  EXPECT_NE(whole->find("Name:"), std::string::npos);
}

TEST(ReadTextFile, TheLimitsLeaveRoomOverTheLargestShippedFiles) {
  std::uintmax_t largest = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(TRAINSIM_CONFIG_DIR_FOR_TESTS)) {
    if (entry.is_regular_file()) largest = std::max(largest, entry.file_size());
  }
  EXPECT_GT(largest, 0u);
  EXPECT_LT(largest * 50, kMaxConfigFileBytes) << largest;
  EXPECT_LT(kMaxConfigFileBytes, kMaxMeasurementFileBytes);
}

TEST(FormatByteSize, WholeUnitsReadAsSuch) {
  EXPECT_EQ(formatByteSize(kMaxConfigFileBytes), "4 MiB");
  EXPECT_EQ(formatByteSize(kMaxMeasurementFileBytes), "64 MiB");
  EXPECT_EQ(formatByteSize(512 * 1024), "512 KiB");
  EXPECT_EQ(formatByteSize(1023), "1023 bytes");
}

}  // namespace
}  // namespace trainsim
