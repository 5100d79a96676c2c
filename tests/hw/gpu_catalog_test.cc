#include "strata/hw/gpu_catalog.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

// Expected values are the datasheet figures (see the sources in data/gpus.yaml), written here
// independently: dense = the datasheet's "with sparsity" figure / 2.
struct GpuCase {
  const char* lookup;  // as a user would type it
  const char* name;    // canonical
  double memory_gb;    // decimal GB
  double hbm_tb_per_s;
  double bf16_tflop_per_s;  // dense
  double fp8_tflop_per_s;   // dense; 0 = no FP8
  double nvlink_gb_per_s;   // bidirectional per GPU
  int64_t pcie_generation;  // host link; 0 = the catalog gives none
};

TEST(GpuCatalog, ShippedCatalogHasTheDatasheetNumbers) {
  const GpuCase cases[] = {
      // H20: export-limited Hopper, 148 dense BF16 (296 sparse), 96 GB, 4.0 TB/s, full NVLink.
      {"H20", "H20", 96, 4.0, 148, 296, 900, 5},
      // H100 SXM: 1,979 TFLOPS BF16 with sparsity -> 989.5 dense; FP8 3,958 -> 1,979.
      {"h100", "H100 SXM", 80, 3.35, 989.5, 1979, 900, 5},
      {"H100-SXM", "H100 SXM", 80, 3.35, 989.5, 1979, 900, 5},
      {"h100 pcie", "H100 PCIe", 80, 2.0, 756.5, 1513, 600, 5},
      // H800: H100 compute, NVLink cut to 400 GB/s.
      {"H800", "H800", 80, 3.35, 989.5, 1979, 400, 5},
      {"h200", "H200", 141, 4.8, 989.5, 1979, 900, 5},
      // A100: 312 dense BF16, no FP8.
      {"A100_40GB", "A100 40GB", 40, 1.555, 312, 0, 600, 4},
      {"a100", "A100 80GB", 80, 2.039, 312, 0, 600, 4},
      {"A800", "A800", 80, 2.039, 312, 0, 400, 4},
      // B200 and GB200: no host-link generation in the catalog (GB200's is NVLink-C2C).
      // B200: HGX B200 36 PF BF16 sparse / 8 GPUs / 2 = 2.25 PF dense.
      {"B200", "B200", 180, 8.0, 2250, 4500, 1800, 0},
      // GB200 NVL72: 360 PF BF16 sparse / 72 / 2 = 2.5 PF dense.
      {"gb200", "GB200", 186, 8.0, 2500, 5000, 1800, 0},
      // B300 (Blackwell Ultra, HGX/DGX): HGX B300 36 PF BF16 sparse / 8 / 2 = 2.25 PF dense, the
      // B200's rate; DGX B300 2.3 TB / 8 = 288 GB; PCIe Gen6 host link.
      {"B300", "B300", 288, 8.0, 2250, 4500, 1800, 6},
      {"DGX-B300", "B300", 288, 8.0, 2250, 4500, 1800, 6},
      // GB300 NVL72: 360 PF BF16 sparse / 72 / 2 = 2.5 PF dense; 576 TB/s / 72 = 8 TB/s; the host
      // link is NVLink-C2C to Grace, so no PCIe generation.
      {"gb300", "GB300", 288, 8.0, 2500, 5000, 1800, 0},
      {"dgx_gb300", "GB300", 288, 8.0, 2500, 5000, 1800, 0},
      {"MI300X", "MI300X", 192, 5.3, 1307.4, 2614.9, 896, 5},
      {"L40S", "L40S", 48, 0.864, 362.05, 733, 0, 4},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.lookup);
    auto gpu = FindGpu(c.lookup);
    ASSERT_TRUE(gpu.ok()) << gpu.error().Format();
    EXPECT_EQ(gpu->name, c.name);
    EXPECT_NEAR(gpu->memory.gb(), c.memory_gb, 1e-9);
    EXPECT_NEAR(gpu->hbm_bandwidth.tb_per_s(), c.hbm_tb_per_s, 1e-9);
    EXPECT_NEAR(gpu->bf16_dense.tflop_per_s(), c.bf16_tflop_per_s, 1e-9);
    EXPECT_NEAR(gpu->fp8_dense.tflop_per_s(), c.fp8_tflop_per_s, 1e-9);
    EXPECT_EQ(gpu->has_fp8(), c.fp8_tflop_per_s > 0);
    EXPECT_NEAR(gpu->nvlink_bandwidth.gb_per_s(), c.nvlink_gb_per_s, 1e-9);
    // Datasheets: Hopper and MI300X PCIe Gen5 x16 (128 GB/s), Ampere and L40S Gen4 (64 GB/s),
    // Blackwell Ultra (B300) Gen6.
    EXPECT_EQ(gpu->pcie_generation, c.pcie_generation);
    // The optional fabric_topology (H100 PCIe's bridge, MI300X's mesh) carries its own.
    const size_t optional = (c.pcie_generation > 0 ? 1u : 0u) +
                            (gpu->fabric_topology != GpuFabricTopology::kSwitch ? 1u : 0u);
    EXPECT_EQ(gpu->sources.size(), 9u + optional) << "every value needs a source";
  }
}

TEST(GpuCatalog, H20PerDirectionNvlinkIsHalfTheQuotedFigure) {
  // NVIDIA quotes 900 GB/s as both directions together; nccl-tests busbw compares with 450.
  auto gpu = FindGpu("h20");
  ASSERT_TRUE(gpu.ok());
  EXPECT_NEAR(gpu->nvlink_bandwidth_per_direction().gb_per_s(), 450.0, 1e-9);
  EXPECT_NEAR(gpu->tdp_watts, 400.0, 1e-9);
}

// Blackwell Ultra: the values the step model reads beyond the table above, each derived from the
// datasheet figure independently of data/gpus.yaml.
TEST(GpuCatalog, BlackwellUltraEntriesHaveTheDatasheetNumbers) {
  struct UltraCase {
    const char* lookup;
    double fp16_tflop_per_s;  // = BF16 on every NVIDIA part here
    double tf32_tflop_per_s;  // HGX B300 18 PF sparse / 8 / 2 = 1,125; GB300 NVL72 180 / 72 / 2
    double tdp_watts;         // B300 1.1 kW (third-party table); GB300 1,400 W (NVIDIA blog)
    double nvlink_per_direction_gb_per_s;  // 1.8 TB/s bidirectional / 2
  };
  const UltraCase cases[] = {
      {"b300", 2250, 1125, 1100, 900},
      {"gb300-nvl72", 2500, 1250, 1400, 900},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.lookup);
    auto gpu = FindGpu(c.lookup);
    ASSERT_TRUE(gpu.ok()) << gpu.error().Format();
    EXPECT_NEAR(gpu->fp16_dense.tflop_per_s(), c.fp16_tflop_per_s, 1e-9);
    EXPECT_NEAR(gpu->tf32_dense.tflop_per_s(), c.tf32_tflop_per_s, 1e-9);
    EXPECT_NEAR(gpu->tdp_watts, c.tdp_watts, 1e-9);
    EXPECT_NEAR(gpu->nvlink_bandwidth_per_direction().gb_per_s(), c.nvlink_per_direction_gb_per_s,
                1e-9);
    EXPECT_EQ(gpu->nvlink_generation, "NVLink5");
  }
}

TEST(GpuCatalog, UnknownNameSuggestsTheClosest) {
  auto gpu = FindGpu("H21");
  ASSERT_FALSE(gpu.ok());
  EXPECT_EQ(gpu.error().message, "unknown GPU 'H21'");
  EXPECT_EQ(gpu.error().hint, "did you mean 'H20'?");
  auto far = FindGpu("tpu-v5p");
  ASSERT_FALSE(far.ok());
  EXPECT_EQ(far.error().hint.rfind("known GPUs: H20, H100 SXM", 0), 0u) << far.error().hint;
}

TEST(GpuCatalog, ParseFlopRate) {
  EXPECT_NEAR(ParseFlopRate("148TFLOP/s")->tflop_per_s(), 148.0, 1e-12);
  EXPECT_NEAR(ParseFlopRate("2.25PFLOP/s")->tflop_per_s(), 2250.0, 1e-9);
  EXPECT_EQ(ParseFlopRate("148").error().message,
            "unknown FLOP-rate unit '' in '148' (expected one of: GFLOP/s, TFLOP/s, PFLOP/s)");
  EXPECT_EQ(ParseFlopRate("148TFLOPS").error().message,
            "unknown FLOP-rate unit 'TFLOPS' in '148TFLOPS' (expected one of: GFLOP/s, TFLOP/s, "
            "PFLOP/s)");
  EXPECT_EQ(ParseFlopRate("fast").error().message, "expected a FLOP rate with a unit, got 'fast'");
}

// A minimal valid entry that each bad case below breaks in one place.
constexpr const char* kSources =
    "    sources: {memory: a, hbm_bandwidth: a, bf16_dense: a, fp16_dense: a, fp8_dense: a,\n"
    "              tf32_dense: a, nvlink_generation: a, nvlink_bandwidth: a, tdp_watts: a}\n";

std::string Entry(const std::string& memory, const std::string& bf16, const std::string& extra) {
  return "gpus:\n  - name: X1\n    memory: " + memory +
         "\n    hbm_bandwidth: 1TB/s\n    bf16_dense: " + bf16 +
         "\n    fp16_dense: 1TFLOP/s\n    fp8_dense: none\n    tf32_dense: 1TFLOP/s\n"
         "    nvlink_generation: none\n    nvlink_bandwidth: none\n    tdp_watts: 300\n" +
         extra + kSources;
}

struct BadCatalogCase {
  const char* name;
  std::string text;
  const char* expected_error;  // Error::Format()
};

TEST(GpuCatalog, BadCatalogsNameTheField) {
  const BadCatalogCase cases[] = {
      {"valid baseline parses", Entry("96GB", "1TFLOP/s", ""), ""},
      {"empty file", "", "g.yaml: the file is empty, expected a YAML mapping"},
      {"no list", "gpus: 3\n", "g.yaml:1: gpus: expected a non-empty list of GPU entries"},
      {"bare memory number", Entry("96", "1TFLOP/s", ""),
       "g.yaml:3: gpus[0].memory: '96' has no unit (expected one of: B, KB, MB, GB, TB, KiB, MiB, "
       "GiB, TiB)\n  hint: a bare K/M/G is ambiguous (decimal or binary?): write GB (1e9) or GiB "
       "(2^30)"},
      {"flops without unit", Entry("96GB", "148", ""),
       "g.yaml:5: gpus[0].bf16_dense: unknown FLOP-rate unit '' in '148' (expected one of: "
       "GFLOP/s, TFLOP/s, PFLOP/s)\n  hint: write e.g. 148TFLOP/s or 2.25PFLOP/s (dense, not with "
       "sparsity)"},
      {"misspelt key", Entry("96GB", "1TFLOP/s", "    tdp_wats: 3\n"),
       "g.yaml:12: gpus[0].tdp_wats: unknown field 'tdp_wats'\n  hint: did you mean 'tdp_watts'?"},
      {"pcie generation out of range", Entry("96GB", "1TFLOP/s", "    pcie_generation: 7\n"),
       "g.yaml:12: gpus[0].pcie_generation: expected a PCIe generation from 3 to 6"},
      {"pcie generation without a source", Entry("96GB", "1TFLOP/s", "    pcie_generation: 5\n"),
       "g.yaml:13: gpus[0].sources.pcie_generation: 'pcie_generation' has no source (datasheet "
       "name or URL)"},
      {"unknown fabric topology", Entry("96GB", "1TFLOP/s", "    fabric_topology: meshed\n"),
       "g.yaml:12: gpus[0].fabric_topology: unknown fabric_topology 'meshed' (expected one of: "
       "switch, mesh, bridge)\n  hint: did you mean 'mesh'?"},
      {"fabric topology on a part without a fabric",
       Entry("96GB", "1TFLOP/s", "    fabric_topology: mesh\n"),
       "g.yaml:12: gpus[0].fabric_topology: a part without a GPU fabric has no fabric_topology"},
      {"truncated", "gpus:\n  - name: X1\n    memory: 96GB\n",
       "g.yaml:2: gpus[0].hbm_bandwidth: missing required field"},
      {"malformed", "gpus:\n  - name: [X1\n",
       "g.yaml:3:1: malformed YAML: end of sequence flow not found"},
      {"entry not a mapping", "gpus:\n  - H20\n",
       "g.yaml:2: gpus[0]: expected a mapping of key: value"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto catalog = ParseGpuCatalog(c.text, "g.yaml");
    if (std::string(c.expected_error).empty()) {
      EXPECT_TRUE(catalog.ok()) << catalog.error().Format();
    } else {
      ASSERT_FALSE(catalog.ok());
      EXPECT_EQ(catalog.error().Format(), c.expected_error);
    }
  }
}

TEST(GpuCatalog, MissingSourceIsAnError) {
  std::string text = Entry("96GB", "1TFLOP/s", "");
  text.replace(text.find("tdp_watts: a"), 12, "other: a");
  auto catalog = ParseGpuCatalog(text, "g.yaml");
  ASSERT_FALSE(catalog.ok());
  EXPECT_EQ(catalog.error().message, "'tdp_watts' has no source (datasheet name or URL)");
  EXPECT_EQ(catalog.error().field, "gpus[0].sources.tdp_watts");
}

TEST(GpuCatalog, DuplicateAliasIsAnError) {
  std::string text = Entry("96GB", "1TFLOP/s", "");
  std::string second = text.substr(std::string("gpus:\n").size());
  second.replace(second.find("X1"), 2, "X2\n    aliases: [x1]");
  auto catalog = ParseGpuCatalog(text + second, "g.yaml");
  ASSERT_FALSE(catalog.ok());
  EXPECT_EQ(catalog.error().message, "name 'x1' is already used by 'X1'");
}

}  // namespace
}  // namespace strata
