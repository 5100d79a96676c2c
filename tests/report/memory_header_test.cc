// The memory report's header names the card's size the way the rest of the report counts it.
#include <gtest/gtest.h>

#include <string>

#include "strata/eval/evaluation.h"
#include "strata/report/memory_text.h"

namespace strata {
namespace {

std::string MemoryTextOf(const std::string& job_file) {
  JobRequest request;
  request.job = job_file;
  auto job = ResolveJob(request);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  auto workspace = Workspace::Load();
  EXPECT_TRUE(workspace.ok());
  auto e = EvaluateJob(*workspace, *job, {.depth = EvalDepth::kMemory});
  EXPECT_TRUE(e.ok()) << e.error().Format();
  return RenderMemoryText(*job, e->ledger, e->fixes, false);
}

// The H20's datasheet sells "96 GB" of HBM3; nvidia-smi's memory.total, less the driver's
// reservation, is 94.98 GiB = 101.98 GB (data/memory_overheads.yaml, device_capacity), which the
// card line prints. The header printed "96.00 GB per GPU" beside it, two sizes in one unit for
// one card. It now quotes the datasheet's figure as a name and the usable size in GB.
TEST(MemoryHeader, QuotesTheDatasheetFigureBesideTheUsableSize) {
  const std::string out = MemoryTextOf("qwen3.6-35b-a3b-sft-h20x40");
  const std::string header = out.substr(0, out.find('\n'));
  EXPECT_EQ(header.find("96.00 GB per GPU"), std::string::npos) << header;
  EXPECT_NE(header.find("\"96 GB\" on the datasheet, 101.98 GB usable per GPU"), std::string::npos)
      << header;
  EXPECT_NE(out.find("card: 101.98 GB (94.98 GiB)"), std::string::npos);
}

}  // namespace
}  // namespace strata
