// Gated DeltaNet layers and packed sequences, by megatron-core release (gdn_module's
// packed_sequences_from, data/frameworks.yaml).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/job/job_spec.h"
#include "strata/job/resolved_job.h"
#include "support/golden.h"

namespace strata::gdn_packing_test {
namespace {

Result<ResolvedJob> Resolve(const std::string& file, const std::vector<std::string>& sets) {
  auto spec = LoadJobSpec(testing::TestPath("job/data/" + file), sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  if (!spec.ok()) return spec.error();
  return ResolveJob(*spec);
}

// Qwen3-Next-80B-A3B (36 Gated DeltaNet layers of 48) with packed sequences on megatron-core
// (the audit's qnext-pack.yaml). megatron-core core_v0.16.0 and core_v0.17.1
// megatron/core/ssm/gated_delta_net.py, GatedDeltaNet.forward:
//     if packed_seq_params is not None:
//         # TODO: support packed sequence
//         raise NotImplementedError("GDN does not support packed sequence for now.")
// removed by 2d1fa8d372 "Support packed sequence for gated delta net (GDN) (#2645)", first in
// core_v0.18.0. Before, the job was priced (3.19 s) and planned.
TEST(GdnPacking, GatedDeltaNetRefusesPackedSequencesBeforeMegatronCore018) {
  for (const char* version : {"0.16", "0.17"}) {
    auto job = Resolve("qnext-pack.yaml", {std::string("framework.version=") + version});
    ASSERT_FALSE(job.ok()) << version;
    const Error& e = job.error();
    EXPECT_EQ(e.field, "sequence.packing");
    EXPECT_NE(e.message.find(std::string("megatron-core ") + version +
                             "'s GatedDeltaNet refuses packed sequences"),
              std::string::npos)
        << e.Format();
    EXPECT_NE(e.message.find("36 Gated DeltaNet layers"), std::string::npos) << e.Format();
    EXPECT_NE(e.hint.find("sequence.packing: false"), std::string::npos) << e.hint;
  }
  auto v018 = Resolve("qnext-pack.yaml", {"framework.version=0.18"});
  EXPECT_TRUE(v018.ok()) << v018.error().Format();
  auto padded = Resolve("qnext-pack.yaml", {"sequence.packing=false"});
  EXPECT_TRUE(padded.ok()) << padded.error().Format();
}

}  // namespace
}  // namespace strata::gdn_packing_test
