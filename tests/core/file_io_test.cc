#include "strata/core/file_io.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace strata {
namespace {

namespace fs = std::filesystem;

class ReadFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "strata-file-io-" + std::to_string(::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(ReadFileTest, ReadsARegularFileWhole) {
  const std::string path = dir_ + "/a.txt";
  std::ofstream(path, std::ios::binary) << std::string("ab\0c", 4);
  EXPECT_EQ(ReadFile(path).value(), std::string("ab\0c", 4));
}

TEST_F(ReadFileTest, RefusesWhatIsNotARegularFileWithoutOpeningIt) {
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);  // opening it for reading would block forever
  EXPECT_EQ(ReadFile(fifo).error().Format(),
            fifo + ": cannot read: not a regular file (a FIFO, socket or device), expected a file");
  EXPECT_EQ(
      ReadFile("/dev/zero").error().Format(),
      "/dev/zero: cannot read: not a regular file (a FIFO, socket or device), expected a file");
  EXPECT_EQ(ReadFile(dir_).error().Format(),
            dir_ + ": cannot read: is a directory, expected a file");
  const std::string loop = dir_ + "/loop";
  fs::create_symlink("loop", loop);
  EXPECT_EQ(ReadFile(loop).error().Format(),
            loop + ": cannot read: too many levels of symbolic links (a symlink loop?)");
  EXPECT_EQ(ReadFile(dir_ + "/none").error().Format(), dir_ + "/none: cannot read: no such file");
}

TEST_F(ReadFileTest, SizeIsCheckedBeforeReading) {
  // A sparse file of 2 GiB + 1 byte: refused from its size alone (reading it would take 2 GiB).
  const std::string big = dir_ + "/big";
  { std::ofstream out(big); }
  fs::resize_file(big, (uintmax_t{2} << 30) + 1);
  EXPECT_EQ(ReadFile(big).error().Format(),
            big + ": file is 2147483649 bytes, larger than the 1073741824 byte limit; not read");
  std::ofstream(dir_ + "/five") << "12345";
  EXPECT_FALSE(ReadFile(dir_ + "/five", 4).ok());
  EXPECT_TRUE(ReadFile(dir_ + "/five", 5).ok());
}

}  // namespace
}  // namespace strata
