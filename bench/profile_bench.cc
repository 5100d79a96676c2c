// strata profile must read a 1 GB PyTorch profiler trace in <= 5 s with bounded memory
// (issue 29). The trace is generated into /tmp when the benchmark starts (1 GiB by default,
// STRATA_BENCH_TRACE_MIB to change it) and removed at exit: Kineto's current format, steps of
// 2,000 launches each, every launch a cuda_runtime event (with its flow events) and a kernel
// with a real kernel name and Kineto's kernel args, one kernel in ten an NCCL all-reduce with
// process-group args, about 1.2 kB a launch. Reported: bytes/s and the peak RSS, for 256 MiB
// and the full size (what grows with size is the GPU events and launches kept, ~50 bytes each).
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "strata/profile/profile.h"

namespace {

const char* const kKernelNames[] = {
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
    "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, "
    "3ul>)",
    "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, "
    "false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, "
    "cutlass::bfloat16_t> >, false, true, false, false, false, true, false>(pytorch_flash::Flash_"
    "fwd_params)",
};

std::string GeneratedTrace(int64_t mib) {
  const std::string path = "/tmp/strata_profile_bench_" + std::to_string(::getpid()) + "_" +
                           std::to_string(mib) + ".json";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return "";
  const int64_t target = mib << 20;
  int64_t written = std::fprintf(
      f,
      "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, "
      "\"world_size\": 8}, \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB "
      "HBM3\"}],\n\"traceEvents\": [\n");
  char event[2048];
  int64_t corr = 0;
  int64_t step = 0;
  double cpu_us = 1.0e12, gpu_us = 1.0e12 + 500;
  while (written < target) {
    ++step;
    const double step_start = cpu_us;
    for (int i = 0; i < 2000; ++i, ++corr) {
      const bool nccl = corr % 10 == 9;
      int n = std::snprintf(
          event, sizeof event,
          "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": "
          "4242, \"tid\": 4242, \"ts\": %.3f, \"dur\": 4.102, \"args\": {\"External id\": %lld, "
          "\"cbid\": 211, \"correlation\": %lld}},\n"
          "  {\"ph\": \"s\", \"id\": %lld, \"pid\": 4242, \"tid\": 4242, \"ts\": %.3f, \"cat\": "
          "\"ac2g\", \"name\": \"ac2g\"},\n"
          "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d, "
          "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"External id\": %lld, \"queued\": 0, "
          "\"device\": 0, \"context\": 1, \"stream\": %d, \"correlation\": %lld, \"registers per "
          "thread\": 168, \"shared memory\": 99328, \"blocks per SM\": 0.909091, \"warps per "
          "SM\": 7.272727, \"grid\": [120, 1, 1], \"block\": [256, 1, 1], \"est. achieved "
          "occupancy %%\": 11%s}},\n"
          "  {\"ph\": \"f\", \"id\": %lld, \"pid\": 0, \"tid\": %d, \"ts\": %.3f, \"cat\": "
          "\"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"},\n",
          cpu_us, static_cast<long long>(corr), static_cast<long long>(corr),
          static_cast<long long>(corr), cpu_us,
          nccl ? "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
               : kKernelNames[corr % 3],
          nccl ? 20 : 7, gpu_us, nccl ? 35.25 : 12.5, static_cast<long long>(corr), nccl ? 20 : 7,
          static_cast<long long>(corr),
          nccl ? ", \"Collective name\": \"allreduce\", \"Process Group Name\": \"0\", \"Process "
                 "Group Description\": \"default_pg\", \"Process Group Ranks\": \"[0, 1, 2, 3, 4, "
                 "5, 6, 7]\""
               : "",
          static_cast<long long>(corr), nccl ? 20 : 7, gpu_us);
      std::fwrite(event, 1, static_cast<size_t>(n), f);
      written += n;
      cpu_us += 6.0;
      gpu_us += nccl ? 2.0 : 13.0;  // NCCL overlaps the next kernels on its own stream
    }
    written += std::fprintf(f,
                            "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": "
                            "\"ProfilerStep#%lld\", \"pid\": 4242, \"tid\": 4242, \"ts\": %.3f, "
                            "\"dur\": %.3f, \"args\": {\"External id\": 1}},\n",
                            static_cast<long long>(step), step_start, cpu_us - step_start);
  }
  std::fprintf(f,
               "  {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": 0, \"tid\": 0, "
               "\"args\": {\"name\": \"python\"}}\n]}\n");
  std::fclose(f);
  return path;
}

double MaxRssMib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

void BM_ProfileTrace(benchmark::State& state) {
  const std::string path = GeneratedTrace(state.range(0));
  if (path.empty()) {
    state.SkipWithError("cannot write the generated trace to /tmp");
    return;
  }
  auto rules = strata::profile::KernelClassifier::Load();
  if (!rules.ok()) {
    state.SkipWithError("cannot load data/profile/kernel_classes.yaml");
    return;
  }
  int64_t bytes = 0;
  int64_t events = 0;
  for (auto _ : state) {
    auto report = strata::profile::ProfileTraces({path}, *rules);
    if (!report.ok() || report->ranks.empty()) {
      state.SkipWithError("profile failed");
      break;
    }
    bytes += state.range(0) << 20;
    events = report->ranks[0].whole_trace.gpu_events;
    benchmark::DoNotOptimize(events);
  }
  state.SetBytesProcessed(bytes);
  state.counters["gpu_events"] = static_cast<double>(events);
  state.counters["max_rss_MiB"] = MaxRssMib();
  std::remove(path.c_str());
}

int64_t FullSizeMib() {
  const char* env = std::getenv("STRATA_BENCH_TRACE_MIB");
  return env != nullptr ? std::atoll(env) : 1024;
}

// One pass each: a trace is read once.
BENCHMARK(BM_ProfileTrace)->Arg(256)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ProfileTrace)->Arg(FullSizeMib())->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
