#include "strata/logs/log_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace strata {

namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;

std::string ReadError(const std::string& path, int err) {
  return "cannot read log '" + path + "': " + std::strerror(err);
}

class LineSplitter {
 public:
  LineSplitter(LogAnalyzer& analyzer, ReadStats& stats) : analyzer_(analyzer), stats_(stats) {}

  // Feeds the complete lines in data; keeps the partial tail for the next call.
  void Push(const char* data, size_t size) {
    stats_.bytes += static_cast<int64_t>(size);
    const char* p = data;
    const char* end = data + size;
    while (p < end) {
      const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
      if (nl == nullptr) {
        Carry(p, static_cast<size_t>(end - p));
        return;
      }
      const char* q = static_cast<const char*>(nl);
      if (carry_.empty() && !skipping_) {
        analyzer_.FeedLine(std::string_view(p, static_cast<size_t>(q - p)));
      } else {
        Carry(p, static_cast<size_t>(q - p));
        if (!skipping_) analyzer_.FeedLine(carry_);
        carry_.clear();
        skipping_ = false;
      }
      p = q + 1;
    }
  }
  bool HasPartial() const { return !carry_.empty(); }
  // The last line of a file without a final newline.
  void FlushPartial() {
    if (carry_.empty()) return;
    stats_.ends_mid_line = true;
    if (!skipping_) analyzer_.FeedLine(carry_);
    carry_.clear();
    skipping_ = false;
  }

 private:
  void Carry(const char* p, size_t n) {
    if (skipping_) return;
    if (carry_.size() + n > kMaxLogLineBytes) {
      carry_.append(p, kMaxLogLineBytes - carry_.size());
      analyzer_.FeedLine(carry_);
      ++stats_.long_lines;
      carry_.clear();
      skipping_ = true;  // drop the rest of this line
      return;
    }
    carry_.append(p, n);
  }

  LogAnalyzer& analyzer_;
  ReadStats& stats_;
  std::string carry_;
  bool skipping_ = false;
};

// A log is a regular file: a FIFO without a writer blocks open() forever and a device such as
// /dev/zero never ends. Checked before the (non-blocking) open and again on what was opened.
Status CheckLogFile(const std::string& path, const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return IoError("'" + path + "' is a directory, not a log file");
  if (!S_ISREG(st.st_mode)) {
    return IoError("cannot read log '" + path +
                   "': not a regular file (a FIFO, socket or device), expected a file");
  }
  return OkStatus();
}

Result<int> OpenLog(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return IoError(ReadError(path, errno));
  STRATA_RETURN_IF_ERROR(CheckLogFile(path, st));
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return IoError(ReadError(path, errno));
  }
  Status checked = OkStatus();
  if (::fstat(fd, &st) != 0) {
    checked = IoError(ReadError(path, errno));
  } else {
    checked = CheckLogFile(path, st);
  }
  if (!checked.ok()) {
    ::close(fd);
    return std::move(checked).error();
  }
  return fd;
}

}  // namespace

Result<ReadStats> ReadLogFile(const std::string& path, LogAnalyzer& analyzer) {
  STRATA_ASSIGN_OR_RETURN(const int fd, OpenLog(path));
  ReadStats stats;
  LineSplitter splitter(analyzer, stats);
  std::vector<char> buffer(kChunkBytes);
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return IoError(ReadError(path, err));
    }
    if (n == 0) break;
    splitter.Push(buffer.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  splitter.FlushPartial();
  return stats;
}

Result<ReadStats> FollowLogFile(const std::string& path, LogAnalyzer& analyzer,
                                const FollowOptions& options) {
  STRATA_ASSIGN_OR_RETURN(const int fd, OpenLog(path));
  ReadStats stats;
  LineSplitter splitter(analyzer, stats);
  std::vector<char> buffer(kChunkBytes);
  using Clock = std::chrono::steady_clock;
  auto last_data = Clock::now();
  for (;;) {
    if (options.stop && options.stop()) break;
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return IoError(ReadError(path, err));
    }
    if (n > 0) {
      splitter.Push(buffer.data(), static_cast<size_t>(n));
      last_data = Clock::now();
      continue;
    }
    const double idle = std::chrono::duration<double>(Clock::now() - last_data).count();
    analyzer.CheckIdle(idle, options.hang_min_idle_s);
    if (options.exit_after_idle_s > 0 && idle >= options.exit_after_idle_s) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(options.poll_s));
  }
  ::close(fd);
  splitter.FlushPartial();
  return stats;
}

}  // namespace strata
