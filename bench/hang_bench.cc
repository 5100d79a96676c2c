// The hang analysis at scale: 10,000 ranks of py-spy text dumps (about 40 MB, the reference
// incident's stacks from `strata hang --synth oom-teardown`) parsed and analysed. The goal is
// under 1 s on a 2-core machine; bytes_per_second is the input rate.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "strata/hang/analysis/analysis.h"
#include "strata/hang/assembly/evidence_set.h"
#include "strata/hang/collect/synth.h"
#include "strata/hang/parsers/pyspy.h"

namespace {

struct Input {
  std::vector<std::string> dumps;
  std::vector<std::string> names;
  int64_t bytes = 0;
};

const Input& TenThousandRanks() {
  static const Input input = [] {
    Input in;
    strata::hang::SynthOptions options;
    options.ranks = 10000;
    options.helper_threads = 10;  // about 4 KB per dump: a real trainer has many idle threads
    for (int64_t r = 0; r < options.ranks; ++r) {
      in.dumps.push_back(strata::hang::SynthPySpyText(options, r));
      in.names.push_back("pyspy/rank" + std::to_string(r) + ".txt");
      in.bytes += static_cast<int64_t>(in.dumps.back().size());
    }
    return in;
  }();
  return input;
}

void BM_ParsePySpy10kRanks(benchmark::State& state) {
  const Input& in = TenThousandRanks();
  for (auto _ : state) {
    size_t frames = 0;
    for (size_t i = 0; i < in.dumps.size(); ++i) {
      auto dumps = strata::hang::ParsePySpy(in.dumps[i], in.names[i]);
      frames += dumps.ok() ? dumps->front().threads.size() : 0;
    }
    benchmark::DoNotOptimize(frames);
  }
  state.SetBytesProcessed(state.iterations() * in.bytes);
  state.counters["input_MB"] = static_cast<double>(in.bytes) / 1e6;
}
BENCHMARK(BM_ParsePySpy10kRanks)->Unit(benchmark::kMillisecond);

void BM_AnalyseHang10kRanks(benchmark::State& state) {
  const Input& in = TenThousandRanks();
  bool found = false;
  for (auto _ : state) {
    strata::hang::EvidenceSet set;
    for (size_t i = 0; i < in.dumps.size(); ++i)
      strata::hang::AddEvidenceFile(set, in.dumps[i], in.names[i]);
    const strata::hang::Verdict verdict = strata::hang::Analyze(set, {});
    found = verdict.culprit && verdict.culprit->ranks == std::vector<int64_t>{17};
    benchmark::DoNotOptimize(found);
  }
  if (!found) state.SkipWithError("the analysis did not name rank 17");
  state.SetBytesProcessed(state.iterations() * in.bytes);
  state.counters["input_MB"] = static_cast<double>(in.bytes) / 1e6;
}
BENCHMARK(BM_AnalyseHang10kRanks)->Unit(benchmark::kMillisecond);

}  // namespace
