#include "strata/core/file_io.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace strata {

namespace {

Error CannotRead(const std::string& path, int err) {
  switch (err) {
    case ENOENT:
      return IoError("cannot read: no such file").InFile(path);
    case ELOOP:
      return IoError("cannot read: too many levels of symbolic links (a symlink loop?)")
          .InFile(path);
    default:
      return IoError(fmt::format("cannot read: {}", std::strerror(err))).InFile(path);
  }
}

// Only regular files are read: a FIFO blocks forever, a device such as /dev/zero never ends.
Status CheckRegular(const std::string& path, const struct stat& st, size_t max_bytes) {
  if (S_ISDIR(st.st_mode)) {
    return IoError("cannot read: is a directory, expected a file").InFile(path);
  }
  if (!S_ISREG(st.st_mode)) {
    return IoError("cannot read: not a regular file (a FIFO, socket or device), expected a file")
        .InFile(path);
  }
  if (static_cast<uintmax_t>(st.st_size) > max_bytes) {
    return IoError(fmt::format("file is {} bytes, larger than the {} byte limit; not read",
                               st.st_size, max_bytes))
        .InFile(path);
  }
  return OkStatus();
}

}  // namespace

Result<std::string> ReadFile(const std::string& path, size_t max_bytes) {
  // stat, then a non-blocking open, then fstat again: the file may be swapped between the two.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return CannotRead(path, errno);
  STRATA_RETURN_IF_ERROR(CheckRegular(path, st, max_bytes));
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return CannotRead(path, errno);
  struct Closer {
    int handle;
    ~Closer() { ::close(handle); }
  } closer{fd};
  if (::fstat(fd, &st) != 0) return CannotRead(path, errno);
  STRATA_RETURN_IF_ERROR(CheckRegular(path, st, max_bytes));
  std::string data;
  data.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(fmt::format("read failed: {}", std::strerror(errno))).InFile(path);
    }
    data.append(buffer, static_cast<size_t>(n));
    if (data.size() > max_bytes) {  // the file grew after fstat
      return IoError(fmt::format("file is larger than the {} byte limit", max_bytes)).InFile(path);
    }
  }
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
