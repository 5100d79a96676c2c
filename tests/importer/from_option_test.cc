// `--from FILE` on every command that takes a job (cli/job_options.h): the job imported from a
// launch command must be the job the command sees. The course's ms-swift command imports to the
// reference job (tests/golden/cli_import/course_ms_swift; the loss kernel is set as the reference
// job assumes it), so each command run with
// `--from` on it must print what the same command prints for the reference job, and bad input
// must be refused with exit 2 naming the file.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/golden.h"

namespace strata {
namespace {

constexpr const char* kReferenceJob = "qwen3.6-35b-a3b-sft-h20x40";

const std::string& CourseCommand() {
  static const std::string path =
      testing::TestPath("golden/cli_import/course_ms_swift/course_sft.sh");
  return path;
}

// What the launch command does not say (the GPU, the cluster file with its network, the
// measured throughput) and the mean sample length of the course's data, all as --set, as a
// user would add them: the reference job file holds exactly these besides the launch's fields,
// and one assumption: the fused loss kernel (the command's --cross_entropy_loss_fusion imports as
// its native implementation, which keeps an fp32 softmax and cannot fit at 49K tokens).
std::vector<std::string> FromCourse(const std::string& command) {
  return {command,
          "--from",
          CourseCommand(),
          "--set",
          "cluster.gpu=H20",
          "--set",
          "sequence.mean_tokens=29000",
          "--set",
          "cluster=h20-5x8",
          "--set",
          "throughput.tokens_per_step=2.31M",
          "--set",
          "throughput.step_time=120s",
          "--set",
          "loss.cross_entropy=fused"};
}

// The line naming where the job came from ("job: ... from X") and the command lines a view
// suggests ("strata memory --set ...") repeat how the job was given; all else must be equal.
std::string WithoutProvenance(const std::string& text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    const bool provenance = line.rfind("job: ", 0) == 0 ||
                            line.find("strata ") != std::string::npos ||
                            line.find("\"file\"") != std::string::npos;
    if (!provenance) out += line + "\n";
    pos = end + 1;
  }
  return out;
}

TEST(FromOptionTest, EveryJobCommandSeesTheReferenceJob) {
  for (const char* command : {"memory", "mfu", "map", "step", "plan", "checkpoint"}) {
    SCOPED_TRACE(command);
    // The reference job named as a job file (not chosen by default, which adds the course's
    // measured comparison to some views).
    const auto reference = testing::RunCli({command, kReferenceJob});
    const auto imported = testing::RunCli(FromCourse(command));
    ASSERT_EQ(reference.exit_code, 0) << reference.err;
    ASSERT_EQ(imported.exit_code, 0) << imported.err;
    EXPECT_EQ(WithoutProvenance(imported.out), WithoutProvenance(reference.out));
  }
}

TEST(FromOptionTest, JsonOutputCarriesTheSchemaVersion) {
  std::vector<std::string> args = FromCourse("memory");
  args.push_back("--json");
  const auto r = testing::RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"schema_version\""), std::string::npos);
}

TEST(FromOptionTest, SetStillOverridesTheImportedJob) {
  // EP 8 -> 4 on the imported job: the same as on the reference job.
  std::vector<std::string> args = FromCourse("memory");
  args.insert(args.end(), {"--set", "parallel.ep=4"});
  const auto imported = testing::RunCli(args);
  const auto reference = testing::RunCli({"memory", kReferenceJob, "--set", "parallel.ep=4"});
  ASSERT_EQ(imported.exit_code, reference.exit_code) << imported.err << reference.err;
  EXPECT_EQ(WithoutProvenance(imported.out), WithoutProvenance(reference.out));
}

TEST(FromOptionTest, JobFileAndFromExcludeEachOther) {
  const auto r = testing::RunCli({"memory", "job.yaml", "--from", CourseCommand()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("excludes"), std::string::npos) << r.err;
}

TEST(FromOptionTest, BadInputIsRefusedWithExitTwo) {
  // A file that does not exist.
  const auto missing = testing::RunCli({"mfu", "--from", "no-such-launch.sh"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no-such-launch.sh"), std::string::npos) << missing.err;
  // A file in which no launcher is recognised.
  const std::string not_launch = testing::TestPath("golden/cli_import/not_a_launch/run.sh");
  const auto unknown = testing::RunCli({"map", "--from", not_launch, "--set", "cluster.gpu=H20"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("run.sh"), std::string::npos) << unknown.err;
  // A launch that does not say the GPU: the hint names the way to give it.
  const auto no_gpu = testing::RunCli({"step", "--from", CourseCommand()});
  EXPECT_EQ(no_gpu.exit_code, 2);
  EXPECT_NE(no_gpu.err.find("GPU"), std::string::npos) << no_gpu.err;
  // A malformed --set of the cluster size.
  const auto bad_nodes = testing::RunCli(
      {"plan", "--from", CourseCommand(), "--set", "cluster.gpu=H20", "--set", "cluster.nodes=x"});
  EXPECT_EQ(bad_nodes.exit_code, 2);
  EXPECT_NE(bad_nodes.err.find("cluster.nodes"), std::string::npos) << bad_nodes.err;
}

TEST(FromOptionTest, EveryJobCommandListsFromInItsHelp) {
  for (const char* command : {"memory", "mfu", "map", "step", "plan", "checkpoint"}) {
    SCOPED_TRACE(command);
    const auto help = testing::RunCli({command, "--help"});
    EXPECT_NE(help.out.find("--from"), std::string::npos) << help.out;
  }
}

}  // namespace
}  // namespace strata
