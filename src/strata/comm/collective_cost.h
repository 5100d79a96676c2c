// The alpha-beta cost of one collective on a cluster, on the level where it really runs.
//
//   time = base latency + steps x alpha(level) + bus bytes / beta(path)
//
// beta is the bus bandwidth NCCL achieves on the path: the per-direction line rate times the
// measured fraction in data/interconnects.yaml. A group inside one node runs on the GPU fabric;
// a group spread over nodes with r ranks on each is limited by min(fabric, r x the data-NIC
// bandwidth of one GPU), because the node's NICs are shared by its GPUs' concurrent groups.
// Algorithms: ring, tree (all-reduce), hierarchical (all-reduce: intra-node reduce-scatter,
// inter-node all-reduce per rail, intra-node all-gather, in series), NVLS (NVLink SHARP
// all-reduce, one NVSwitch node), NVLS tree (all-reduce over whole NVLS nodes: NVLS inside each
// node pipelined with a tree between nodes; on 2 nodes it goes past the ring's NIC line).
// All-gather and reduce-scatter run the ring, as NCCL does without SHARP; all-to-all and
// send/recv run point-to-point.
// Formulas with the reference cluster substituted: docs/formulas.md, "Collective cost".
#ifndef STRATA_COMM_COLLECTIVE_COST_H_
#define STRATA_COMM_COLLECTIVE_COST_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "strata/comm/collective.h"
#include "strata/core/detail.h"
#include "strata/core/result.h"
#include "strata/core/units.h"
#include "strata/hw/bandwidth_map.h"
#include "strata/hw/cluster.h"
#include "strata/hw/interconnects.h"

namespace strata {

/// kP2p: all-to-all and send/recv, which NCCL runs as grouped ncclSend/ncclRecv to each peer
/// (no ring or tree; NCCL_ALGO does not apply).
enum class CommAlgorithm { kAuto, kRing, kTree, kHierarchical, kNvls, kNvlsTree, kP2p };
/// "auto", "ring", "tree", "hierarchical", "nvls", "nvls_tree", "p2p"
std::string ToString(CommAlgorithm algorithm);
Result<CommAlgorithm> ParseCommAlgorithm(std::string_view text);

/// How a group's ranks sit on the nodes.
struct GroupShape {
  int64_t ranks = 1;
  int64_t nodes = 1;
  int64_t ranks_per_node = 1;  // the fewest on any node the group touches
};

struct CollectiveCost {
  CollectiveOp op = CollectiveOp::kAllReduce;
  CommAlgorithm algorithm = CommAlgorithm::kRing;  // the one used (never kAuto)
  NcclProto protocol = NcclProto::kSimple;         // NCCL's protocol for it (NcclProtoName)
  GroupShape shape;
  Bytes size;  // nccl-tests' "size"
  Seconds time;
  Seconds latency_time;    // base + steps x alpha
  Seconds bandwidth_time;  // bus bytes / beta
  BytesPerSecond algbw;
  BytesPerSecond busbw;
  BytesPerSecond path_busbw;  // beta: what busbw tends to for large sizes
  std::string level;          // the bandwidth-map level that limits it: "RoCE 4 x 200Gb/s"
  MapLevelKind level_kind = MapLevelKind::kGpuFabric;
  /// Every level its bytes cross, with the share of `size` each carries (explained costs only):
  /// inside a node the fabric alone; across nodes the node-boundary share on the data NICs
  /// (ring-like collectives: one of each node's r ring edges leaves it, 1 / r; all-to-all: the
  /// (n - r) / (n - 1) remote peers; send/recv: all) and the rest on the fabric. A collective
  /// limited by NVLink still puts bytes on the network.
  struct LevelShare {
    std::string level;
    double byte_share = 1.0;
  };
  std::vector<LevelShare> crossed;
};

class CollectiveModel {
 public:
  /// Fails when the map cannot be built (see BuildBandwidthMap).
  static Result<CollectiveModel> Create(Cluster cluster, Interconnects links);

  /// The cost of `op` moving `size` (nccl-tests' size) among the group. kAuto picks the fastest
  /// modelled algorithm; asking for one that does not apply (tree for all-gather, NVLS across
  /// nodes) is an error naming the ones that do. kNumbersOnly leaves `level` (the name) empty;
  /// `level_kind` says which level it is either way.
  Result<CollectiveCost> Cost(CollectiveOp op, Bytes size, const GroupShape& shape,
                              CommAlgorithm algorithm = CommAlgorithm::kAuto,
                              Detail detail = Detail::kExplained) const;

  /// `ranks` consecutive ranks from rank 0 (how nccl-tests is launched); fails when the cluster
  /// has fewer GPUs.
  Result<GroupShape> ContiguousShape(int64_t ranks) const;

  const Cluster& cluster() const { return cluster_; }
  const Interconnects& links() const { return links_; }
  const BandwidthMap& map() const { return map_; }

  /// beta of the intra-node fabric for ring-like traffic (GB/s, per rank).
  BytesPerSecond IntraNodeBusBw() const;
  /// beta of one GPU's share of the node's data NICs.
  BytesPerSecond NicBusBwPerGpu() const;

 private:
  CollectiveModel(Cluster cluster, Interconnects links, BandwidthMap map);
  /// At most four algorithms apply; kept inline, since Cost is called for every collective of
  /// every layout the planner prices.
  struct Algorithms {
    std::array<CommAlgorithm, 4> items{};
    size_t count = 0;
    void push_back(CommAlgorithm a) { items[count++] = a; }
    const CommAlgorithm* begin() const { return items.data(); }
    const CommAlgorithm* end() const { return items.data() + count; }
  };
  Algorithms Applicable(CollectiveOp op, const GroupShape& shape) const;
  CollectiveCost CostWith(CollectiveOp op, Bytes size, const GroupShape& shape,
                          CommAlgorithm algorithm) const;
  const MapLevel& LevelOf(MapLevelKind kind) const;
  void NameLevels(CollectiveCost& cost) const;  // `level` and `crossed`

  Cluster cluster_;
  Interconnects links_;
  BandwidthMap map_;
  // The link constants every Cost reads (latencies and betas by name from the calibration
  // file), looked up once here: the planner prices millions of collectives. `ready` is false
  // when a level is missing (hand-built test inputs); Cost then looks them up as it used to.
  struct LinkConstants {
    bool ready = false;
    double alpha_in = 0, alpha_net = 0;  // s per step: the fabric's, the data network's
    double b_in = 0, b_nic = 0;          // bytes/s: IntraNodeBusBw, NicBusBwPerGpu
  };
  LinkConstants constants_;
};

}  // namespace strata

#endif  // STRATA_COMM_COLLECTIVE_COST_H_
