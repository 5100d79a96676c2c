// Shared by the comm tests: the collective model of a data/clusters/ cluster.
#ifndef STRATA_TESTS_COMM_COMM_TEST_SUPPORT_H_
#define STRATA_TESTS_COMM_COMM_TEST_SUPPORT_H_

#include <string>

#include "strata/comm/collective_cost.h"
#include "strata/core/check.h"
#include "strata/hw/cluster.h"
#include "strata/hw/interconnects.h"

namespace strata::testing {

/// The collective model of a cluster loaded or parsed by the test (which must have succeeded).
inline CollectiveModel ModelOn(const Result<Cluster>& cluster) {
  STRATA_CHECK(cluster.ok());
  auto links = LoadInterconnects();
  STRATA_CHECK(links.ok());
  auto model = CollectiveModel::Create(*cluster, *links);
  STRATA_CHECK(model.ok());
  return *model;
}

inline CollectiveModel ClusterModel(const std::string& cluster_name) {
  return ModelOn(LoadCluster(cluster_name));
}

}  // namespace strata::testing

#endif  // STRATA_TESTS_COMM_COMM_TEST_SUPPORT_H_
