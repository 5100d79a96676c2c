// Placeholders (issue 9): torch prints "unknown" as -1 or as -1 cast to uint64_t
// (18446744073709551615); the Flight Recorder writes "N/A". The verdict reports each as a
// placeholder, never as a size or a counter.
#include "strata/hang/analysis/placeholders.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "strata/hang/analysis/analysis.h"
#include "strata/hang/assembly/evidence_set.h"
#include "strata/hang/parsers/flight_recorder.h"
#include "support/golden.h"

namespace strata::hang {
namespace {

using strata::testing::TestPath;

const Placeholder* Find(const std::vector<Placeholder>& all, const std::string& field,
                        const std::string& value) {
  for (const Placeholder& p : all) {
    if (p.field == field && p.value == value) return &p;
  }
  return nullptr;
}

// NVIDIA/nccl#1504 as pasted (tests/golden/hang-real/nccl-1504-...): line 4 says "last completed
// NCCL work: -1" (nothing completed yet), line 7 "WorkNCCL(SeqNum=1, OpType=COALESCED,
// NumelIn=18446744073709551615, NumelOut=18446744073709551615, ...)".
TEST(Placeholders, TorchsMinusOneAndTwoToThe64MinusOneAreReportedAsUnknown) {
  auto ev = LoadEvidence({TestPath(
      "golden/hang-real/nccl-1504-placeholder-numel-coalesced-last-completed-minus1/input")});
  ASSERT_TRUE(ev.ok());
  const Verdict v = Analyze(*ev, {});
  const Placeholder* completed = Find(v.placeholders, "last completed work", "-1");
  ASSERT_NE(completed, nullptr);
  EXPECT_EQ(completed->where, "log.txt:4");
  const Placeholder* numel_in = Find(v.placeholders, "NumelIn", "18446744073709551615");
  ASSERT_NE(numel_in, nullptr);
  EXPECT_EQ(numel_in->where, "log.txt:7");
  EXPECT_NE(numel_in->meaning.find("unknown"), std::string::npos);
  EXPECT_NE(Find(v.placeholders, "NumelOut", "18446744073709551615"), nullptr);
  EXPECT_EQ(Find(v.placeholders, "last enqueued work", "1"), nullptr);  // 1 is a real counter
  // The sizes were not read as numbers.
  for (const WatchdogEvent& e : ev->watchdog) {
    EXPECT_FALSE(e.numel_in.has_value()) << e.text;
    EXPECT_FALSE(e.numel_out.has_value()) << e.text;
  }
}

// A Flight Recorder entry whose timeout the recorder wrote as "N/A" and whose input has a -1
// dimension: the dump is still read, the fields keep their defaults, both are reported.
TEST(Placeholders, FlightRecorderNaAndMinusOneDimension) {
  const std::string dump = R"({"version": "2.4", "rank": 0, "pg_config": {}, "pg_status": {},
    "entries": [{"record_id": 0, "pg_id": 0, "process_group": ["0", "default_pg"],
      "collective_seq_id": 1, "p2p_seq_id": 0, "op_id": 1, "profiling_name": "nccl:all_reduce",
      "time_created_ns": 1, "input_sizes": [[-1, 4]], "output_sizes": [[2, 4]],
      "state": "scheduled", "timeout_ms": "N/A", "frames": []}]})";
  auto parsed = ParseFlightRecorder(dump, "fr-rank0.json");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->entries.at(0).timeout_ms, 0);
  EvidenceSet set;
  set.fr_dumps.emplace_back("fr-rank0.json", *parsed);
  const auto found = FindPlaceholders(set);
  const Placeholder* na = Find(found, "timeout_ms", "N/A");
  ASSERT_NE(na, nullptr);
  EXPECT_EQ(na->where, "fr-rank0.json: entries[0].timeout_ms");
  const Placeholder* dim = Find(found, "input_sizes", "-1");
  ASSERT_NE(dim, nullptr);
  EXPECT_EQ(dim->where, "fr-rank0.json: entries[0].input_sizes[0][0]");
}

}  // namespace
}  // namespace strata::hang
