// The streaming trace reader on small hand-written traces (what each figure must be is worked
// out by hand beside it) and on broken ones: cut, malformed, not JSON, not a trace, gzip.
#include "strata/profile/trace_reader.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "strata/profile/breakdown.h"

namespace strata::profile::trace_reader_test {
namespace {

// One step (CPU 1000-1100 us) launching a GEMM (GPU 1100-1140 us) and an NCCL all-reduce
// (1120-1170 us) on another stream; a kernel whose launch is not in the trace (900-910 us).
const char kTrace[] =
    R"json({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
 "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
 "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 1, "tid": 1, "ts": 1000, "dur": 100},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1010, "dur": 5, "args": {"correlation": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1020, "dur": 5, "args": {"correlation": 2}},
  {"ph": "X", "cat": "kernel", "name": "volta_sgemm_64x64_nn", "pid": 0, "tid": 7, "ts": 1100, "dur": 40, "args": {"correlation": 1, "stream": 7, "grid": [8, 1, 1]}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "pid": 0, "tid": 20, "ts": 1120, "dur": 50, "args": {"correlation": 2, "stream": 20, "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1]"}},
  {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>()", "pid": 0, "tid": 7, "ts": 900, "dur": 10, "args": {"correlation": 99, "stream": 7}}
 ]})json";

KernelClassifier& Rules() {
  static KernelClassifier* rules = [] {
    auto loaded = KernelClassifier::Load();
    EXPECT_TRUE(loaded.ok()) << loaded.error().Format();
    return new KernelClassifier(std::move(loaded).value());
  }();
  return *rules;
}

Result<RankTrace> ReadText(const std::string& text) {
  std::istringstream in(text);
  return ReadTraceStream(in, "trace.json", Rules());
}

constexpr int64_t kUs = 1000;  // ns

TEST(TraceReader, ReadsRankStepsKernelsAndLaunches) {
  auto trace = ReadText(kTrace);
  ASSERT_TRUE(trace.ok()) << trace.error().Format();
  EXPECT_EQ(trace->rank, 3);
  EXPECT_EQ(trace->world_size, 8);
  EXPECT_EQ(trace->device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(trace->events, 6);
  EXPECT_TRUE(trace->cut.empty());
  ASSERT_EQ(trace->steps.size(), 1u);
  EXPECT_EQ(trace->steps[0].step, 7);
  ASSERT_EQ(trace->gpu.size(), 3u);
  EXPECT_EQ(trace->gpu[1].component, Component::kNccl);
  EXPECT_EQ(trace->gpu[1].stream, 20);
  const Collective& c = trace->collectives[trace->gpu[1].collective];
  EXPECT_EQ(c.kind, "AllReduce");
  EXPECT_EQ(c.process_group, "0");
  EXPECT_EQ(c.process_group_desc, "default_pg");
  EXPECT_EQ(c.process_group_ranks, "[0, 1]");

  const RankProfile p = AnalyzeRank(*trace);
  ASSERT_EQ(p.steps.size(), 1u);
  const Figures& s = p.steps[0].figures;
  // Step 7 holds the GEMM [1100, 1140] and the all-reduce [1120, 1170]: span 70 us, busy 70 us
  // (no gap), NCCL 50 us of which 20 us under the GEMM, so 30 us exposed.
  EXPECT_EQ(s.span_ns, 70 * kUs);
  EXPECT_EQ(s.busy_ns, 70 * kUs);
  EXPECT_EQ(s.idle_ns(), 0);
  EXPECT_EQ(s.of(Component::kGemm), 40 * kUs);
  EXPECT_EQ(s.of(Component::kNccl), 50 * kUs);
  EXPECT_EQ(s.nccl_exposed_ns, 30 * kUs);
  // The whole trace adds the unlaunched elementwise kernel [900, 910]: span 900-1170 = 270 us,
  // busy 70 + 10 = 80 us, idle 190 us.
  EXPECT_EQ(p.whole_trace.span_ns, 270 * kUs);
  EXPECT_EQ(p.whole_trace.busy_ns, 80 * kUs);
  EXPECT_EQ(p.whole_trace.of(Component::kMemoryBound), 10 * kUs);
  EXPECT_EQ(p.unlaunched_events, 1);
}

// torch <= 1.9 wrote capitalised categories, the step as an Operator and "stream 7" tids
// (kineto-resnet50-torch1.9-v100's format); nanosecond fractions come from newer versions.
TEST(TraceReader, ReadsTheOldFormatAndNanosecondFractions) {
  const char old_format[] = R"json({"traceEvents": [
  {"ph": "X", "cat": "Operator", "name": "ProfilerStep#5", "pid": 1, "tid": "1", "ts": 100, "dur": 50},
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": "1", "ts": 110, "dur": 2, "args": {"correlation": 5, "external id": 3}},
  {"ph": "X", "cat": "Kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": "stream 7", "ts": 120.5, "dur": 2.25, "args": {"correlation": 5, "stream": 7}},
  {"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": "stream 7", "ts": 130.125, "dur": 1, "args": {"stream": 7}}
 ]})json";
  auto trace = ReadText(old_format);
  ASSERT_TRUE(trace.ok()) << trace.error().Format();
  const RankProfile p = AnalyzeRank(*trace);
  EXPECT_FALSE(p.rank.has_value());
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].step, 5);
  // The GEMM 120.5-122.75 us is in step 5; the memset has no correlation: whole trace only.
  EXPECT_EQ(p.steps[0].figures.of(Component::kGemm), 2250);
  EXPECT_EQ(p.whole_trace.span_ns, 131125 - 120500);
  EXPECT_EQ(p.whole_trace.of(Component::kMemset), 1000);
  EXPECT_EQ(p.unlaunched_events, 1);
}

TEST(TraceReader, ACutTraceKeepsWhatCameBeforeTheCut) {
  // Cut inside the all-reduce event, as a profiler killed mid-write leaves it.
  const std::string text(kTrace);
  const size_t cut_at = text.find("\"ncclKernel") + 20;
  auto trace = ReadText(text.substr(0, cut_at));
  ASSERT_TRUE(trace.ok()) << trace.error().Format();
  EXPECT_EQ(trace->cut, "the trace ends early at byte " + std::to_string(cut_at) +
                            " (a profiler stopped while writing?): the 4 events before the cut "
                            "were read");
  const RankProfile p = AnalyzeRank(*trace);
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].figures.busy_ns, 40 * kUs);  // the GEMM alone
  EXPECT_EQ(p.steps[0].figures.of(Component::kNccl), 0);
}

TEST(TraceReader, MalformedJsonInTheMiddleIsReportedWithItsByte) {
  std::string text(kTrace);
  const size_t at = text.find("\"dur\": 40");
  text.replace(at, 9, "\"dur\": 4x");
  auto trace = ReadText(text);
  ASSERT_TRUE(trace.ok()) << trace.error().Format();
  EXPECT_NE(trace->cut.find("malformed JSON at byte "), std::string::npos) << trace->cut;
  EXPECT_NE(trace->cut.find("the 3 events before it were read, the rest of the file was not"),
            std::string::npos)
      << trace->cut;
}

TEST(TraceReader, NotATraceIsAnErrorNamingTheFile) {
  const struct {
    const char* name;
    std::string text;
    const char* error;
  } cases[] = {
      {"empty", "",
       "trace.json: not JSON: byte 0: expected a value (object, array, string, number, true, "
       "false or null), found the end of the input\n  hint: expected a PyTorch profiler trace "
       "(Chrome-trace JSON, plain or .gz) as written by torch.profiler"},
      {"text", "step 1 loss 2.3\n",
       "trace.json: not JSON: byte 0: expected a value (object, array, string, number, true, "
       "false or null), found 's'\n  hint: expected a PyTorch profiler trace (Chrome-trace JSON, "
       "plain or .gz) as written by torch.profiler"},
      {"other JSON", R"json({"model_type": "llama", "hidden_size": 4096})json",
       "trace.json: JSON, but not a PyTorch profiler trace: it has no 'traceEvents' array\n"
       "  hint: expected the Chrome-trace JSON that torch.profiler's export_chrome_trace / "
       "tensorboard_trace_handler writes"},
      {"cut before the events", R"json({"schemaVersion": 1, "deviceProperties": [{"na)json",
       "trace.json: the file ends before its 'traceEvents' array (byte 46)\n"
       "  hint: expected the Chrome-trace JSON that torch.profiler's export_chrome_trace / "
       "tensorboard_trace_handler writes"},
      // Hostile input: a JSON array nested 100,000 deep stops at the reader's depth limit.
      {"nested deep", std::string(100000, '['),
       "trace.json: malformed JSON at byte 512 before any trace event: nesting deeper than 512 "
       "levels\n  hint: expected the Chrome-trace JSON that torch.profiler's export_chrome_trace "
       "/ tensorboard_trace_handler writes"},
      {"malformed before the events", R"json({"schemaVersion": 1 "traceEvents": []})json",
       "trace.json: malformed JSON at byte 20 before any trace event: expected ',' or '}' after "
       "an object member, found '\"'\n  hint: expected the Chrome-trace JSON that "
       "torch.profiler's export_chrome_trace / tensorboard_trace_handler writes"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto trace = ReadText(c.text);
    ASSERT_FALSE(trace.ok());
    EXPECT_EQ(trace.error().Format(), c.error);
  }
}

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("strata-profile-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

void WriteGzip(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  gzclose(f);
}

TEST(TraceReader, ReadsGzipAndACutGzipFile) {
  TempDir dir;
  const std::string gz = dir.File("rank3.json.gz");
  WriteGzip(gz, kTrace);
  auto trace = ReadTrace(gz, Rules());
  ASSERT_TRUE(trace.ok()) << trace.error().Format();
  EXPECT_TRUE(trace->cut.empty()) << trace->cut;
  EXPECT_EQ(trace->gpu.size(), 3u);

  // The same file cut to half its compressed bytes: part of the events, and gzip says why.
  const auto size = std::filesystem::file_size(gz);
  std::filesystem::resize_file(gz, size / 2);
  auto cut = ReadTrace(gz, Rules());
  ASSERT_TRUE(cut.ok()) << cut.error().Format();
  EXPECT_NE(cut->cut.find("the trace ends early"), std::string::npos) << cut->cut;
  EXPECT_LT(cut->events, 6);

  // Corrupt bytes inside the compressed stream: read up to them, and zlib's reason is given.
  WriteGzip(gz, kTrace);
  {
    std::fstream f(gz, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(gz) / 2));
    f.write("\xff\xff\xff\xff\xff\xff\xff\xff", 8);
  }
  // zlib hands out nothing of a read call that hits the damage, so on a file this small the
  // damage may come before the first event (bad input) or after some (a cut trace): either way
  // the message carries zlib's reason.
  auto corrupt = ReadTrace(gz, Rules());
  const std::string said = corrupt.ok() ? corrupt->cut : corrupt.error().Format();
  EXPECT_NE(said.find("(gzip: "), std::string::npos) << said;
}

TEST(TraceReader, OnlyRegularFilesAreRead) {
  TempDir dir;
  auto missing = ReadTrace(dir.File("absent.json"), Rules());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().Format(), dir.File("absent.json") + ": cannot read: no such file");
  std::filesystem::create_directories(dir.File("sub"));
  auto directory = ReadTrace(dir.File("sub"), Rules());
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error().Format(),
            dir.File("sub") + ": not a regular file (a trace is a .json or .json.gz file)");
}

// SYNTHETIC: one process driving two GPUs (Hugging Face device_map="auto", a naive pipeline):
// GPU 0 runs 1000-1500 and 1500-2000 us, then GPU 1 runs 2000-2500 and 2500-3000 us; Kineto writes
// each GPU event with args.device (audit 54, C5). Their union reads busy 2.000 ms of a 2.000 ms
// span, idle 0: the bubble vanishes. Each device alone: busy 1.000 ms, idle 2.000 - 1.000 =
// 1.000 ms of the span (half the time idle, the naive pipeline's bubble).
TEST(TraceReader, SeveralDevicesInOneTraceAreCountedPerDevice) {
  std::string events;
  int corr = 1;
  for (int device : {0, 1}) {
    for (int i = 0; i < 2; ++i, ++corr) {
      const int ts = 1000 + device * 1000 + i * 500;
      events += fmt::format(
          R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {}, "dur": 5, "args": {{"correlation": {}}}}},
  {{"ph": "X", "cat": "kernel", "name": "nvjet_tst_128x128_64x4_1x2_h_bz_TNT", "pid": {}, "tid": 7, "ts": {}, "dur": 500, "args": {{"correlation": {}, "stream": 7, "device": {}}}}},
)",
          ts - 100, corr, device, ts, corr, device);
    }
  }
  const std::string text =
      R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"},
 {"id": 1, "name": "NVIDIA H100 80GB HBM3"}], "traceEvents": [)" +
      events +
      R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 800, "dur": 2000}]})";
  auto trace = ReadText(text);
  ASSERT_TRUE(trace.ok()) << trace.error().Format();
  const RankProfile p = AnalyzeRank(*trace);
  EXPECT_EQ(p.whole_trace.span_ns, 2000 * kUs);
  EXPECT_EQ(p.whole_trace.busy_ns, 2000 * kUs);
  ASSERT_EQ(p.devices.size(), 2u);
  for (const DeviceBusy& d : p.devices) {
    EXPECT_EQ(d.busy_ns, 1000 * kUs) << d.device;
    EXPECT_EQ(d.gpu_events, 2) << d.device;
  }
  EXPECT_EQ(p.devices[0].device, 0);
  EXPECT_EQ(p.devices[1].device, 1);
  // A trace of one device (kTrace names none: args.device absent) lists no devices.
  auto one = ReadText(kTrace);
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(AnalyzeRank(*one).devices.empty());
}

}  // namespace
}  // namespace strata::profile::trace_reader_test
