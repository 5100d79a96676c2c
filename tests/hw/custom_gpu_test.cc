// A cluster file may define its own GPU variant: the catalog entry with the values that differ.
#include "strata/hw/custom_gpu.h"

#include <gtest/gtest.h>

#include <string>

#include "strata/core/file_io.h"
#include "strata/hw/cluster.h"

namespace strata {
namespace {

TEST(CustomGpu, ClusterFileDerivesAVariant) {
  auto text = ReadFile(DataDir() + "/clusters/h20-5x8.yaml");
  ASSERT_TRUE(text.ok());
  std::string yaml = *text;
  const size_t at = yaml.find("\ngpu: H20\n");
  ASSERT_NE(at, std::string::npos);
  // An H20 with a 300 W cap (the catalog's is 400 W); memory and peaks from the catalog.
  yaml.replace(at, 10, "\ngpu: {base: H20, power_w: 300}\n");
  auto cluster = ParseCluster(yaml, "variant.yaml");
  ASSERT_TRUE(cluster.ok()) << cluster.error().Format();
  auto h20 = FindGpu("H20");
  ASSERT_TRUE(h20.ok());
  EXPECT_DOUBLE_EQ(cluster->gpu.tdp_watts, 300.0);
  EXPECT_DOUBLE_EQ(cluster->gpu.memory.value(), h20->memory.value());
  EXPECT_EQ(cluster->gpu.sources.at("tdp_watts"), "given in variant.yaml");
  EXPECT_EQ(cluster->gpu.name, "H20 (custom)");
}

}  // namespace
}  // namespace strata
