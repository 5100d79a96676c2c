// strata logs must read a large Megatron log at >= 500 MB/s on one core, with memory that does
// not grow with the log (issue 16). The log is generated into /tmp when the benchmark starts
// (2 GiB by default, STRATA_BENCH_LOG_MIB to change it) and removed at exit: megatron-core 0.16
// iteration lines with changing values, a memory report every 100 iterations and NCCL/info
// noise between, about 440 bytes a line. Reported: bytes/s and the peak RSS, for the 512 MiB and
// the full-size log (equal RSS = memory independent of size).
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "strata/logs/log_analyzer.h"
#include "strata/logs/log_reader.h"

namespace {

std::string GeneratedLog(int64_t mib) {
  const std::string path =
      "/tmp/strata_logs_bench_" + std::to_string(::getpid()) + "_" + std::to_string(mib) + ".log";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return "";
  const int64_t target = mib << 20;
  int64_t written = 0;
  char line[768];
  int64_t it = 0;
  while (written < target) {
    ++it;
    // 0.5 s steps from 2026-05-01 00:00:00: 4.8M iterations (2 GiB) stay within May.
    const int64_t us = it * 500000 + (it * 7919) % 4000;
    const int64_t s = us / 1000000;
    const double ms = 500.0 + static_cast<double>((it * 7919) % 1000) / 250.0 - 2.0;
    const double loss = 1.2 + 0.001 * static_cast<double>(it % 97);
    int n = std::snprintf(
        line, sizeof line,
        " [2026-05-%02d %02d:%02d:%02d.%06d] iteration %8lld/%8d | consumed samples: %12lld | "
        "elapsed time per iteration (ms): %.1f | throughput per GPU (TFLOP/s/GPU): %.1f | "
        "learning rate: %.6E | global batch size: %5d | lm loss: %.6E | load_balancing_loss: "
        "%.6E | loss scale: 1.0 | grad norm: %.3f | number of skipped iterations: %3d | number "
        "of nan iterations: %3d |\n",
        static_cast<int>(1 + s / 86400), static_cast<int>(s / 3600 % 24),
        static_cast<int>(s / 60 % 60), static_cast<int>(s % 60), static_cast<int>(us % 1000000),
        static_cast<long long>(it), 99999999, static_cast<long long>(it * 80), ms,
        13.3 * 500.0 / ms, 1e-5, 80, loss, 1.01, 0.4 + 0.001 * static_cast<double>(it % 13), 0, 0);
    std::fwrite(line, 1, static_cast<size_t>(n), f);
    written += n;
    if (it % 100 == 0) {
      n = std::snprintf(line, sizeof line,
                        "[Rank 0] (after %lld iterations) memory (MB) | allocated: 41234.56 | "
                        "max allocated: 79876.12 | reserved: 87654.00 | max reserved: 87654.00\n"
                        "h20-node03:2291734:2291821 [5] NCCL INFO Channel 00/0 : 21[5] -> 22[6] "
                        "via SHM/direct/direct\n",
                        static_cast<long long>(it));
      std::fwrite(line, 1, static_cast<size_t>(n), f);
      written += n;
    }
  }
  std::fclose(f);
  return path;
}

double MaxRssMib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

void BM_ReadMegatronLog(benchmark::State& state) {
  const std::string path = GeneratedLog(state.range(0));
  if (path.empty()) {
    state.SkipWithError("cannot write the generated log to /tmp");
    return;
  }
  int64_t bytes = 0;
  int64_t steps = 0;
  for (auto _ : state) {
    strata::LogAnalyzer analyzer;
    auto stats = strata::ReadLogFile(path, analyzer);
    analyzer.Finish();
    if (!stats.ok()) {
      state.SkipWithError("read failed");
      break;
    }
    bytes += stats->bytes;
    steps = analyzer.Summary().ranks.empty() ? 0 : analyzer.Summary().ranks[0].records;
    benchmark::DoNotOptimize(steps);
  }
  state.SetBytesProcessed(bytes);
  state.counters["steps"] = static_cast<double>(steps);
  state.counters["max_rss_MiB"] = MaxRssMib();
  std::remove(path.c_str());
}

int64_t FullSizeMib() {
  const char* env = std::getenv("STRATA_BENCH_LOG_MIB");
  return env != nullptr ? std::atoll(env) : 2048;
}

// One pass each: the file is read once, as a user's log is.
BENCHMARK(BM_ReadMegatronLog)->Arg(512)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadMegatronLog)->Arg(FullSizeMib())->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
