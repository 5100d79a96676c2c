#include "strata/preflight/run_command.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace strata::preflight {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(5);
constexpr auto kKillGrace = std::chrono::seconds(2);

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

CommandOutcome RunToFile(const std::string& exe, const std::vector<std::string>& argv_in,
                         const std::vector<std::string>& envp_in, const std::string& output,
                         Seconds timeout) {
  CommandOutcome outcome;
  const int out_fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out_fd < 0) return outcome;
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  std::vector<std::string> argv_copy = argv_in;
  std::vector<std::string> envp_copy = envp_in;
  std::vector<char*> argv = Pointers(argv_copy);
  std::vector<char*> envp = Pointers(envp_copy);
  const pid_t child = ::fork();
  if (child == 0) {
    ::setpgid(0, 0);
    ::dup2(null_fd, 0);
    ::dup2(out_fd, 1);
    ::dup2(null_fd, 2);
    if (envp_in.empty()) {
      ::execv(exe.c_str(), argv.data());
    } else {
      ::execve(exe.c_str(), argv.data(), envp.data());
    }
    ::_exit(127);
  }
  ::close(out_fd);
  if (null_fd >= 0) ::close(null_fd);
  if (child < 0) return outcome;
  outcome.started = true;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::microseconds(static_cast<int64_t>(timeout.us()));
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) {
      outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return outcome;
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(kPollInterval);
  }
  ::kill(-child, SIGKILL);  // the command's own process group, never anything else
  ::kill(child, SIGKILL);
  outcome.timed_out = true;
  const auto grace_end = std::chrono::steady_clock::now() + kKillGrace;
  while (::waitpid(child, &status, WNOHANG) == 0 && std::chrono::steady_clock::now() < grace_end) {
    std::this_thread::sleep_for(kPollInterval);
  }
  return outcome;
}

}  // namespace strata::preflight
