// A folder of its own for a test's files, under the system's temporary folder, removed when the
// test ends whether or not its assertions held (also after a failed ASSERT).
#ifndef STRATA_TESTS_SUPPORT_SCRATCH_DIR_H_
#define STRATA_TESTS_SUPPORT_SCRATCH_DIR_H_

#include <unistd.h>

#include <filesystem>
#include <string>

namespace strata::testing {

/// `tag` and the process id name the folder, so parallel test processes do not share one.
struct ScratchDir {
  explicit ScratchDir(const std::string& tag)
      : path(std::filesystem::temp_directory_path() / (tag + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::filesystem::path path;
};

}  // namespace strata::testing

#endif  // STRATA_TESTS_SUPPORT_SCRATCH_DIR_H_
