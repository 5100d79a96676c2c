// The CLI against files a cluster can hand it that are not what they claim: a FIFO, a directory,
// a symlink loop, a 2 GB sparse file, a YAML alias bomb, JSON nested 100,000 deep and a pickle
// string bomb. Each must end quickly with exit 2 and a message naming the file and the reason;
// none may block, read gigabytes, crash or print a verdict. (Issue: fuzzing round one.)
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/golden.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int exit_code = -1;
  std::string err;
};

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

// Runs strata with a hang guard (SIGALRM after 60 s, which a blocked read would hit: exit 142)
// and, outside AddressSanitizer (whose shadow memory needs a huge address space), 1 GiB of
// address space: reading a 2 GB file or expanding a bomb would fail with a crash, not pass.
CliRun RunGuarded(const std::vector<std::string>& args) {
  // One stderr file per test process: ctest runs the tests of this file in parallel.
  const std::string err_path =
      ::testing::TempDir() + "strata-hostile-stderr-" + std::to_string(::getpid());
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    const int null_fd = ::open("/dev/null", O_WRONLY);
    dup2(null_fd, 1);
    alarm(60);
    if (!kAddressSanitizer) {
      const rlimit limit{rlim_t{1} << 30, rlim_t{1} << 30};
      setrlimit(RLIMIT_AS, &limit);
    }
    std::vector<std::string> copy = args;
    std::string binary = strata::testing::StrataBinary();
    std::vector<char*> argv{binary.data()};
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CliRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(err_path);
  run.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return run;
}

class HostileFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "strata-hostile-" + std::to_string(::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  /// The reference job with its mean length replaced by a histogram file (a job may give one or
  /// the other), written next to the test's files; returns its path.
  std::string JobWithHistogram(const std::string& histogram) const {
    std::ifstream in(strata::testing::TestPath("../data/jobs/qwen3.6-35b-a3b-sft-h20x40.yaml"));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = text.find("mean_tokens:");
    text.replace(at, text.find('\n', at) - at, "histogram: " + histogram);
    const std::string job = Path("job-with-histogram.yaml");
    std::ofstream(job) << text;
    return job;
  }
  std::string Write(const std::string& name, const std::string& bytes) const {
    std::ofstream(Path(name), std::ios::binary) << bytes;
    return Path(name);
  }
  std::string dir_;
};

// Exit 2 and a message naming the file and containing `reason`.
void ExpectRefused(const CliRun& run, const std::string& file, const std::string& reason) {
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find(file), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(reason), std::string::npos) << run.err;
}

TEST_F(HostileFiles, FifoIsRefusedNotOpenedByEveryFileOption) {
  // Before the fix each of these blocked forever in open() waiting for a writer.
  const std::string fifo = Path("input.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string kReason = "not a regular file (a FIFO, socket or device)";
  ExpectRefused(RunGuarded({"model", fifo}), fifo, kReason);
  ExpectRefused(RunGuarded({"memory", fifo}), fifo, kReason);
  ExpectRefused(RunGuarded({"map", "--cluster", fifo}), fifo, kReason);
  ExpectRefused(RunGuarded({"mfu", JobWithHistogram(fifo)}), fifo, kReason);
}

TEST_F(HostileFiles, FifoIsRefusedByImportLogsAndPreflight) {
  // The commands added after round one. `logs` has its own streaming reader: before its fix it
  // blocked in open() on a FIFO without a writer (the guard's exit 142).
  const std::string fifo = Path("input.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string kReason = "not a regular file (a FIFO, socket or device)";
  ExpectRefused(RunGuarded({"import", "--gpu", "H20", fifo}), fifo, kReason);
  ExpectRefused(RunGuarded({"logs", fifo}), fifo, kReason);
  // A node-state bundle whose gpus.csv is a FIFO.
  const std::string node = Path("node1");
  fs::create_directory(node);
  const std::string gpus = node + "/gpus.csv";
  ASSERT_EQ(::mkfifo(gpus.c_str(), 0600), 0);
  ExpectRefused(RunGuarded({"preflight", node}), gpus, kReason);
}

TEST_F(HostileFiles, LogsRefusesADeviceThatNeverEnds) {
  // /dev/zero never reaches end of file: before the fix `strata logs` read it until the guard's
  // alarm (exit 142), cutting a "line" every MiB. A log is a regular file.
  ExpectRefused(RunGuarded({"logs", "/dev/zero"}), "/dev/zero",
                "not a regular file (a FIFO, socket or device)");
}

TEST_F(HostileFiles, DirectoryWhereAFileIsExpected) {
  const std::string dir = Path("config.json");
  fs::create_directory(dir);
  ExpectRefused(RunGuarded({"model", dir}), dir, "is a directory, expected a file");
  ExpectRefused(RunGuarded({"memory", dir}), dir, "is a directory, expected a file");
  ExpectRefused(RunGuarded({"import", "--gpu", "H20", dir}), dir,
                "is a directory, expected a file");
}

TEST_F(HostileFiles, SymlinkLoop) {
  const std::string loop = Path("loop.yaml");
  fs::create_symlink("loop.yaml", loop);
  ExpectRefused(RunGuarded({"memory", loop}), loop, "symbolic links");
  ExpectRefused(RunGuarded({"map", "--cluster", loop}), loop, "symbolic links");
}

TEST_F(HostileFiles, TwoGigabyteSparseFileIsRefusedBeforeReading) {
  // 2 GB of holes: no disk used. Before the fix it was read in full (2 GB of memory, 10 s)
  // before the 1 GiB limit refused it; under the 1 GiB address-space cap that is a crash.
  const std::string big = Path("config.json");
  { std::ofstream(big, std::ios::binary); }
  fs::resize_file(big, uintmax_t{2} << 30);
  const std::string kReason =
      "file is 2147483648 bytes, larger than the 1073741824 byte limit; not read";
  ExpectRefused(RunGuarded({"model", big}), big, kReason);
  ExpectRefused(RunGuarded({"mfu", JobWithHistogram(big)}), big, kReason);
}

TEST_F(HostileFiles, YamlAliasBomb) {
  // "Billion laughs" in YAML: nine levels of nine aliases, 9^9 (387 million) strings if every
  // alias were expanded. yaml-cpp shares aliased nodes; nothing may walk the expansion.
  std::string yaml = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i <= 9; ++i) {
    const std::string p = "*a" + std::to_string(i - 1);
    yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + p + ", " + p + ", " + p +
            ", " + p + ", " + p + ", " + p + ", " + p + ", " + p + ", " + p + "]\n";
  }
  const std::string job = Write("job.yaml", yaml + "model: *a9\n");
  const CliRun memory = RunGuarded({"memory", job});
  EXPECT_EQ(memory.exit_code, 2) << memory.err;
  EXPECT_NE(memory.err.find(job), std::string::npos) << memory.err;
  const std::string cluster = Write("cluster.yaml", yaml + "name: *a9\n");
  const CliRun map = RunGuarded({"map", "--cluster", cluster});
  EXPECT_EQ(map.exit_code, 2) << map.err;
  EXPECT_NE(map.err.find(cluster), std::string::npos) << map.err;
}

TEST_F(HostileFiles, JsonNestedOneHundredThousandDeep) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string config = Write("config.json", deep);
  const CliRun model = RunGuarded({"model", config});
  EXPECT_EQ(model.exit_code, 2) << model.err;
  EXPECT_NE(model.err.find(config), std::string::npos) << model.err;
  // As a Flight Recorder dump (sniffed by its "entries" key) `hang` refuses the depth before
  // parsing; nothing readable is left: exit 2.
  const std::string dump = Write("rank0.json", "{\"entries\": " + deep + "}");
  const CliRun hang = RunGuarded({"hang", dump});
  EXPECT_EQ(hang.exit_code, 2) << hang.err;
  EXPECT_NE(hang.err.find("deeper than"), std::string::npos) << hang.err;
}

TEST_F(HostileFiles, PickleStringBombIsRefusedWithTheLimitItHit) {
  // A 16 KiB string memoized once and reused through 16 doubling levels: 1 GiB of decoded text
  // from a 16.5 KB file. Before the fix every reuse copied the string (bad_alloc, or seconds and
  // gigabytes); now the decoded size is measured first against a budget linear in the input.
  std::string pickle = "\x80\x02X";
  pickle += std::string("\x00\x40\x00\x00", 4) + std::string(16384, 'a') + std::string("q\x00", 2);
  for (int k = 0; k < 16; ++k) {
    pickle += std::string{'(', 'h', static_cast<char>(k),    'h', static_cast<char>(k),
                          'l', 'q', static_cast<char>(k + 1)};
  }
  pickle += ".";
  const std::string file = Write("fr_trace_rank_0", pickle);
  const CliRun hang = RunGuarded({"hang", file});
  EXPECT_EQ(hang.exit_code, 2) << hang.err;
  EXPECT_NE(hang.err.find(file), std::string::npos) << hang.err;
  // The budget: 64 bytes per byte of the 16,522-byte pickle = 1,057,408 bytes.
  EXPECT_NE(hang.err.find("over the limit of 1057408 bytes"), std::string::npos) << hang.err;
}

}  // namespace
}  // namespace strata
