#include "strata/core/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace strata {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(5);
constexpr auto kKillGrace = std::chrono::seconds(2);

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int ExitCode(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// fork/exec with stdin from /dev/null and stdout (and stderr, if asked) to the spec's file; the
// child gets its own process group so that a kill on timeout reaches whatever it spawned, and
// nothing else. -1 when the output cannot be opened or fork fails.
pid_t Start(const SubprocessSpec& spec) {
  const int out_fd = ::open(spec.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out_fd < 0) return -1;
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  // Built before fork: the child only calls async-signal-safe functions.
  std::vector<std::string> argv_copy = spec.argv;
  std::vector<std::string> envp_copy = spec.envp;
  std::vector<char*> argv = Pointers(argv_copy);
  std::vector<char*> envp = Pointers(envp_copy);
  const pid_t child = ::fork();
  if (child == 0) {
    ::setpgid(0, 0);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(out_fd, 1);
    if (spec.stderr_to_output) {
      ::dup2(out_fd, 2);
    } else if (null_fd >= 0) {
      ::dup2(null_fd, 2);
    }
    if (spec.envp.empty()) {
      ::execv(spec.exe.c_str(), argv.data());
    } else {
      ::execve(spec.exe.c_str(), argv.data(), envp.data());
    }
    ::_exit(127);
  }
  ::close(out_fd);
  if (null_fd >= 0) ::close(null_fd);
  return child;
}

}  // namespace

std::vector<SubprocessOutcome> RunSubprocesses(const std::vector<SubprocessSpec>& specs,
                                               Seconds timeout) {
  std::vector<SubprocessOutcome> outcomes(specs.size());
  std::vector<pid_t> children(specs.size(), -1);
  size_t running = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    children[i] = Start(specs[i]);
    if (children[i] > 0) {
      outcomes[i].started = true;
      ++running;
    }
  }
  std::vector<bool> done(specs.size(), false);
  for (size_t i = 0; i < specs.size(); ++i) done[i] = children[i] <= 0;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::microseconds(static_cast<int64_t>(timeout.us()));
  while (running > 0) {
    for (size_t i = 0; i < children.size(); ++i) {
      if (done[i]) continue;
      int status = 0;
      if (::waitpid(children[i], &status, WNOHANG) == children[i]) {
        outcomes[i].exit_code = ExitCode(status);
        done[i] = true;
        --running;
      }
    }
    if (running == 0) break;
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(kPollInterval);
  }
  if (running == 0) return outcomes;
  for (size_t i = 0; i < children.size(); ++i) {
    if (done[i]) continue;
    ::kill(-children[i], SIGKILL);  // the child's own process group, never anything else
    ::kill(children[i], SIGKILL);
    outcomes[i].timed_out = true;
  }
  // A child stuck in uninterruptible sleep (D) dies only when it leaves it: reap what exits
  // within the grace period and leave the rest.
  const auto grace_end = std::chrono::steady_clock::now() + kKillGrace;
  for (size_t i = 0; i < children.size(); ++i) {
    if (done[i]) continue;
    int status = 0;
    while (::waitpid(children[i], &status, WNOHANG) == 0 &&
           std::chrono::steady_clock::now() < grace_end) {
      std::this_thread::sleep_for(kPollInterval);
    }
  }
  return outcomes;
}

SubprocessOutcome RunSubprocess(const SubprocessSpec& spec, Seconds timeout) {
  return RunSubprocesses({spec}, timeout).front();
}

std::string FindExecutable(const std::string& name, const std::string& path) {
  const char* env_path = std::getenv("PATH");
  const std::string search = path.empty() ? (env_path ? env_path : "") : path;
  size_t start = 0;
  while (start <= search.size()) {
    size_t end = search.find(':', start);
    if (end == std::string::npos) end = search.size();
    const std::string dir = search.substr(start, end - start);
    if (!dir.empty()) {
      const std::string candidate = dir + "/" + name;
      std::error_code ec;
      if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate, ec))
        return candidate;
    }
    start = end + 1;
  }
  return "";
}

}  // namespace strata
