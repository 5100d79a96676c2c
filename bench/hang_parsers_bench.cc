// Throughput of the hang doctor's evidence parsers, in bytes per second (Google Benchmark's
// SetBytesProcessed): a 2000-entry Flight Recorder pickle (torch's default ring size), a long
// rank log where one line in fifty is a watchdog message, and a NCCL RAS report.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "strata/hang/parsers/flight_recorder.h"
#include "strata/hang/parsers/nccl_ras.h"
#include "strata/hang/parsers/watchdog_log.h"

namespace {

void AppendString(std::string* out, const std::string& s) {
  out->push_back('X');
  const auto n = static_cast<uint32_t>(s.size());
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  *out += s;
}

void AppendInt(std::string* out, int32_t v) {
  out->push_back('J');
  const auto u = static_cast<uint32_t>(v);
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((u >> (8 * i)) & 0xff));
}

// A protocol-2 dump with `entries` entries of the usual keys and a three-frame stack each.
std::string MakePickle(int entries) {
  std::string p = "\x80\x02}(";
  AppendString(&p, "version");
  AppendString(&p, "2.10");
  AppendString(&p, "entries");
  p += "](";
  for (int i = 0; i < entries; ++i) {
    p += "}(";
    AppendString(&p, "frames");
    p += "](";
    for (int f = 0; f < 3; ++f) {
      p += "}(";
      AppendString(&p, "name");
      AppendString(&p, "all_reduce");
      AppendString(&p, "filename");
      AppendString(&p,
                   "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py");
      AppendString(&p, "line");
      AppendInt(&p, 2806 + f);
      p += "u";
    }
    p += "e";
    for (const char* key :
         {"record_id", "pg_id", "collective_seq_id", "p2p_seq_id", "op_id", "timeout_ms"}) {
      AppendString(&p, key);
      AppendInt(&p, i);
    }
    AppendString(&p, "process_group");
    AppendString(&p, "0");
    AppendString(&p, "default_pg");
    p += "\x86";
    AppendString(&p, "profiling_name");
    AppendString(&p, "nccl:all_reduce");
    AppendString(&p, "state");
    AppendString(&p, "completed");
    AppendString(&p, "input_sizes");
    p += "](](";
    AppendInt(&p, 4096);
    AppendInt(&p, 1024);
    p += "ee";
    p += "u";
  }
  p += "eu.";
  return p;
}

void BM_FlightRecorderPickle(benchmark::State& state) {
  const std::string bytes = MakePickle(2000);
  for (auto _ : state) {
    auto dump = strata::hang::ParseFlightRecorder(bytes, "trace_0");
    if (!dump.ok()) state.SkipWithError(dump.error().Format().c_str());
    benchmark::DoNotOptimize(dump);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(bytes.size()));
}
BENCHMARK(BM_FlightRecorderPickle);

void BM_WatchdogLog(benchmark::State& state) {
  std::string log;
  for (int i = 0; log.size() < (size_t{8} << 20); ++i) {
    if (i % 50 == 0) {
      log += fmt::format(
          "[rank{}]:[E810 03:04:11.061727749 ProcessGroupNCCL.cpp:683] [Rank {}] "
          "Watchdog caught collective operation timeout: WorkNCCL(SeqNum={}, "
          "OpType=ALLREDUCE, NumelIn=80, NumelOut=80, Timeout(ms)=600000) ran for "
          "600096 milliseconds before timing out.\n",
          i % 40, i % 8, i);
    } else {
      log += fmt::format(
          "[rank{}]: iteration {:8d}/ 1000000 | consumed samples: {} | elapsed "
          "time per iteration (ms): 1234.5 | learning rate: 1.0E-05 | lm loss: "
          "2.345E+00\n",
          i % 40, i, i * 64);
    }
  }
  for (auto _ : state) {
    auto events = strata::hang::ParseWatchdogLog(log, "rank.log");
    benchmark::DoNotOptimize(events);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(log.size()));
}
BENCHMARK(BM_WatchdogLog);

void BM_NcclRasText(benchmark::State& state) {
  std::string text =
      "NCCL version 2.27.5+cuda12.8 compiled with CUDA 12.8\n\nWarnings\n========\n\n";
  for (int c = 0; c < 1000; ++c) {
    text += fmt::format(
        "#{}-0 (27a079b828ff1a{:02x}) MISMATCH\n  Communicator ranks have different "
        "collective operation counts\n  7 ranks have launched up to operation 64\n"
        "  Rank 7 has launched up to operation 60 -- GPU 3 managed by process 1650386 "
        "on node node1\n\n",
        c, c % 256);
  }
  for (auto _ : state) {
    auto report = strata::hang::ParseNcclRas(text, "ras.txt");
    benchmark::DoNotOptimize(report);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_NcclRasText);

}  // namespace
