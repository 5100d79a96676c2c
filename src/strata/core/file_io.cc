#include "strata/core/file_io.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace strata {

Result<std::string> ReadFile(const std::string& path, size_t max_bytes) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    return IoError("cannot read: no such file").InFile(path);
  }
  if (std::filesystem::is_directory(status)) {
    return IoError("cannot read: is a directory, expected a file").InFile(path);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(fmt::format("cannot open: {}", std::strerror(errno))).InFile(path);
  std::string data;
  char buffer[1 << 16];
  while (in) {
    in.read(buffer, sizeof buffer);
    data.append(buffer, static_cast<size_t>(in.gcount()));
    if (data.size() > max_bytes) {
      return IoError(fmt::format("file is larger than the {} byte limit", max_bytes)).InFile(path);
    }
  }
  if (in.bad()) return IoError("read failed").InFile(path);
  return data;
}

Status WriteFileAtomic(const std::string& path, const std::string& contents) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return IoError(fmt::format("cannot create: {}", std::strerror(errno))).InFile(tmp);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return IoError("write failed (disk full?)").InFile(tmp);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return IoError(fmt::format("cannot rename into place: {}", std::strerror(err))).InFile(path);
  }
  return OkStatus();
}

std::string DataDir() {
  if (const char* env = std::getenv("STRATA_DATA_DIR"); env && *env) return env;
  return STRATA_SOURCE_DATA_DIR;
}

}  // namespace strata
