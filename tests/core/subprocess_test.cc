#include "strata/core/subprocess.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace strata {
namespace {

namespace fs = std::filesystem;

class SubprocessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("strata-subprocess-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string File(const std::string& name) const { return (dir_ / name).string(); }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  SubprocessSpec Shell(const std::string& script, const std::string& out) const {
    return {"/bin/sh", {"sh", "-c", script}, {}, File(out), false};
  }

  fs::path dir_;
};

TEST_F(SubprocessTest, OutputAndExitCode) {
  const SubprocessOutcome ok =
      RunSubprocess(Shell("echo out; echo err >&2", "ok.txt"), Seconds::Of(10));
  EXPECT_TRUE(ok.started);
  EXPECT_FALSE(ok.timed_out);
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_EQ(Read(File("ok.txt")), "out\n");  // stderr discarded by default

  SubprocessSpec both = Shell("echo out; echo err >&2; exit 3", "both.txt");
  both.stderr_to_output = true;
  const SubprocessOutcome failed = RunSubprocess(both, Seconds::Of(10));
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_EQ(Read(File("both.txt")), "out\nerr\n");
}

TEST_F(SubprocessTest, EnvironmentStdinAndSignals) {
  SubprocessSpec env = Shell("echo \"$ONLY\"; echo \"${HOME:-unset}\"", "env.txt");
  env.envp = {"ONLY=this"};  // replaces the environment, HOME included
  EXPECT_EQ(RunSubprocess(env, Seconds::Of(10)).exit_code, 0);
  EXPECT_EQ(Read(File("env.txt")), "this\nunset\n");
  const char* home = std::getenv("HOME");  // no envp: inherited
  EXPECT_EQ(RunSubprocess(Shell("echo \"${HOME:-unset}\"", "home.txt"), Seconds::Of(10)).exit_code,
            0);
  EXPECT_EQ(Read(File("home.txt")), std::string(home && *home ? home : "unset") + "\n");
  // stdin is /dev/null: a program that reads it sees end of file instead of waiting.
  EXPECT_EQ(RunSubprocess(Shell("cat; echo read", "stdin.txt"), Seconds::Of(10)).exit_code, 0);
  EXPECT_EQ(Read(File("stdin.txt")), "read\n");
  // Killed by SIGTERM (15): 128 + 15.
  EXPECT_EQ(RunSubprocess(Shell("kill -TERM $$", "term.txt"), Seconds::Of(10)).exit_code, 143);
}

TEST_F(SubprocessTest, CannotStartOrExecute) {
  const SubprocessOutcome no_dir =
      RunSubprocess(Shell("true", "missing-dir/out.txt"), Seconds::Of(1));
  EXPECT_FALSE(no_dir.started);
  EXPECT_EQ(no_dir.exit_code, -1);
  const SubprocessOutcome no_exe =
      RunSubprocess({File("no-such-program"), {"x"}, {}, File("x.txt"), false}, Seconds::Of(10));
  EXPECT_TRUE(no_exe.started);
  EXPECT_EQ(no_exe.exit_code, 127);
}

// Three programs under one deadline: the quick ones finish, the one that would sleep 30 s and
// the child it forked are killed at 0.3 s, so the whole run takes the timeout, not 30 s.
TEST_F(SubprocessTest, OneDeadlineKillsTheProcessGroup) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<SubprocessOutcome> outcomes =
      RunSubprocesses({Shell("exit 0", "a.txt"), Shell("sleep 30 & sleep 30; true", "b.txt"),
                       Shell("exit 4", "c.txt")},
                      Seconds::Of(0.3));
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(outcomes.size(), 3u);
  EXPECT_EQ(outcomes[0].exit_code, 0);
  EXPECT_FALSE(outcomes[0].timed_out);
  EXPECT_TRUE(outcomes[1].timed_out);
  EXPECT_EQ(outcomes[1].exit_code, -1);
  EXPECT_EQ(outcomes[2].exit_code, 4);
  EXPECT_LT(elapsed_s, 10.0);  // 0.3 s, and a margin for a loaded machine
}

TEST_F(SubprocessTest, FindExecutable) {
  const std::string tool = File("tool");
  std::ofstream(tool) << "#!/bin/sh\n";
  fs::permissions(tool, fs::perms::owner_all);
  fs::create_directories(dir_ / "sub" / "tool");  // a directory of that name is not a program
  const std::string path = (dir_ / "sub").string() + "::" + dir_.string();
  EXPECT_EQ(FindExecutable("tool", path), tool);
  EXPECT_EQ(FindExecutable("absent", path), "");
  std::ofstream(File("plain")) << "not executable\n";
  EXPECT_EQ(FindExecutable("plain", dir_.string()), "");
}

}  // namespace
}  // namespace strata
