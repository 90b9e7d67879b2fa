#include "base/text_file.h"

#include <gtest/gtest.h>

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
  const Expected<std::string> text = readTextFile(path, "a CSV");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, bytes);
}

TEST(ReadTextFile, AnEmptyFileIsEmptyTextNotAnError) {
  const auto path = (scratchDirectory() / "empty.txt").string();
  std::ofstream(path, std::ios::binary).close();
  const Expected<std::string> text = readTextFile(path, "a CSV");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "");
}

TEST(ReadTextFile, AMissingFileIsAnInputErrorNamingThePath) {
  const auto path = (scratchDirectory() / "no-such-file.log").string();
  const Expected<std::string> text = readTextFile(path, "an nccl-tests log file");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code, ExitCode::kInvalidInput);
  EXPECT_EQ(text.error().toString(), path + ": cannot read an nccl-tests log file");
}

TEST(ReadTextFile, ADirectoryIsAnInputErrorSayingWhatWasExpected) {
  const auto directory = scratchDirectory().string();
  const Expected<std::string> text = readTextFile(directory, "an nccl-tests log file");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code, ExitCode::kInvalidInput);
  EXPECT_EQ(text.error().toString(), directory + ": is a directory, expected an nccl-tests log file");
}

}  // namespace
}  // namespace trainsim
