#include "strata/comm/collective_cost.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "strata/core/did_you_mean.h"

namespace strata {
namespace {

const std::vector<std::pair<std::string, CommAlgorithm>> kAlgorithms = {
    {"auto", CommAlgorithm::kAuto}, {"ring", CommAlgorithm::kRing},
    {"tree", CommAlgorithm::kTree}, {"hierarchical", CommAlgorithm::kHierarchical},
    {"nvls", CommAlgorithm::kNvls}, {"nvls_tree", CommAlgorithm::kNvlsTree},
    {"p2p", CommAlgorithm::kP2p}};

// NCCL's tuning model (NVIDIA/nccl v2.30.7, commit 5067397c, src/graph/tuning.cc) multiplies
// the tree all-reduce's bandwidth by 0.92; we apply it to the NVLS tree as well, which the one
// 2-node H800 measurement supports (nccl-tests#153: 161 GB/s busbw; 162 with it, 176 without).
constexpr double kTreeAllReduceEfficiency = 0.92;

// Point-to-point (send/recv, and all-to-all as grouped send/recv) never runs LL128: NCCL's
// src/enqueue.cc (addP2pToPlan, same release) sets `protocol[dir] = protoLL[dir] ?
// NCCL_PROTO_LL : NCCL_PROTO_SIMPLE`, LL while the bytes to a peer are at most
// nChannels x NCCL_P2P_LL_THRESHOLD (`NCCL_PARAM(P2pLLThreshold, "P2P_LL_THRESHOLD", 16384)`);
// a peer's transfer uses one channel up to 64 KiB (half the network chunk), so the threshold
// applies as is.
constexpr double kP2pLlThresholdBytes = 16384;

// NCCL's log2i: the floor of log2 (tuning.cc's tree latency counts log2i(nNodes) network levels).
double FloorLog2(int64_t n) { return n <= 1 ? 0.0 : std::floor(std::log2(static_cast<double>(n))); }

std::string FabricKey(const Cluster& c) {
  switch (c.fabric) {
    case IntraNodeFabric::kNvSwitch:
      return "nvswitch";
    case IntraNodeFabric::kNvLinkMesh:
      return "nvlink_mesh";
    case IntraNodeFabric::kPcieOnly:
      return "pcie";
  }
  return "pcie";
}

}  // namespace

std::string ToString(CommAlgorithm algorithm) {
  for (const auto& [name, a] : kAlgorithms) {
    if (a == algorithm) return name;
  }
  return "?";
}

Result<CommAlgorithm> ParseCommAlgorithm(std::string_view text) {
  std::vector<std::string> names;
  for (const auto& [name, a] : kAlgorithms) {
    if (name == text) return a;
    names.push_back(name);
  }
  return InvalidInput(fmt::format("unknown algorithm '{}'", text))
      .InField("algorithm")
      .WithHint(DidYouMeanHint(text, names));
}

CollectiveModel::CollectiveModel(Cluster cluster, Interconnects links, BandwidthMap map)
    : cluster_(std::move(cluster)), links_(std::move(links)), map_(std::move(map)) {
  const std::string fabric = FabricKey(cluster_);
  const std::string transport = ToString(cluster_.DataTransport());
  const bool has_pcie = std::any_of(map_.levels.begin(), map_.levels.end(), [](const MapLevel& l) {
    return l.kind == MapLevelKind::kPcie;
  });
  if (links_.levels.count(fabric) == 0 || links_.levels.count(transport) == 0 ||
      (cluster_.fabric == IntraNodeFabric::kPcieOnly && !has_pcie)) {
    return;
  }
  constants_.alpha_in = links_.Level(fabric).latency.s();
  constants_.alpha_net = links_.Level(transport).latency.s();
  constants_.b_in = IntraNodeBusBw().bytes_per_s();
  constants_.b_nic = NicBusBwPerGpu().bytes_per_s();
  constants_.ready = true;
}

Result<CollectiveModel> CollectiveModel::Create(Cluster cluster, Interconnects links) {
  STRATA_ASSIGN_OR_RETURN(BandwidthMap map, BuildBandwidthMap(cluster, links));
  return CollectiveModel(std::move(cluster), std::move(links), std::move(map));
}

const MapLevel& CollectiveModel::LevelOf(MapLevelKind kind) const {
  for (const auto& level : map_.levels) {
    if (level.kind == kind) return level;
  }
  STRATA_CHECK(false && "the map has no level of this kind");
  return map_.levels.front();
}

void CollectiveModel::NameLevels(CollectiveCost& cost) const {
  cost.level = LevelOf(cost.level_kind).name;
  const GroupShape& g = cost.shape;
  const std::string fabric =
      LevelOf(cluster_.fabric == IntraNodeFabric::kPcieOnly ? MapLevelKind::kPcie
                                                            : MapLevelKind::kGpuFabric)
          .name;
  if (g.nodes <= 1) {
    cost.crossed = {{fabric, 1.0}};
    return;
  }
  const double n = static_cast<double>(g.ranks);
  const double r = static_cast<double>(g.ranks_per_node);
  const double net = cost.op == CollectiveOp::kSendRecv || g.ranks_per_node <= 1 ? 1.0
                     : cost.op == CollectiveOp::kAllToAll                        ? (n - r) / (n - 1)
                                                                                 : 1.0 / r;
  cost.crossed = {{LevelOf(MapLevelKind::kDataNic).name, net}};
  if (net < 1.0) cost.crossed.push_back({fabric, 1.0 - net});
}

BytesPerSecond CollectiveModel::IntraNodeBusBw() const {
  const std::string key = FabricKey(cluster_);
  const double fraction = links_.Level(key).busbw_fraction.value_or(1.0);
  if (cluster_.fabric == IntraNodeFabric::kPcieOnly) {
    return LevelOf(MapLevelKind::kPcie).per_gpu * fraction;
  }
  return cluster_.gpu.nvlink_bandwidth_per_direction() * fraction;
}

BytesPerSecond CollectiveModel::NicBusBwPerGpu() const {
  const std::string key = ToString(cluster_.DataTransport());
  return cluster_.DataNicBandwidthPerGpu() * links_.Level(key).busbw_fraction.value_or(1.0);
}

Result<GroupShape> CollectiveModel::ContiguousShape(int64_t ranks) const {
  if (ranks < 1)
    return InvalidInput(fmt::format("ranks must be at least 1, got {}", ranks)).InField("ranks");
  if (ranks > cluster_.world_size()) {
    return InvalidInput(fmt::format("{} ranks do not fit on cluster '{}' ({} nodes x {} GPUs = {})",
                                    ranks, cluster_.name, cluster_.nodes, cluster_.gpus_per_node,
                                    cluster_.world_size()))
        .InField("ranks");
  }
  GroupShape shape;
  shape.ranks = ranks;
  shape.nodes = (ranks + cluster_.gpus_per_node - 1) / cluster_.gpus_per_node;
  // The last node may be partly filled: it holds the fewest ranks.
  shape.ranks_per_node =
      std::min(cluster_.gpus_per_node, ranks - (shape.nodes - 1) * cluster_.gpus_per_node);
  return shape;
}

CollectiveModel::Algorithms CollectiveModel::Applicable(CollectiveOp op,
                                                        const GroupShape& shape) const {
  Algorithms out;
  if (op == CollectiveOp::kAllToAll || op == CollectiveOp::kSendRecv) {
    out.push_back(CommAlgorithm::kP2p);
    return out;
  }
  out.push_back(CommAlgorithm::kRing);
  const bool multi = shape.nodes > 1;
  if (op == CollectiveOp::kAllReduce && shape.ranks > 2) out.push_back(CommAlgorithm::kTree);
  // The hierarchical path is all-reduce's alone: NCCL's tuning model (src/graph/tuning.cc,
  // ncclTopoTuneModel) offers all-gather and reduce-scatter only Ring, PAT, NVLS and
  // CollNet-Direct; NVLS and CollNet across nodes need SHARP switches (CollNet), which no
  // cluster file declares, and PAT runs one GPU per node only (NCCL 2.23+; sjeaugey,
  // NVIDIA/nccl#1473). So across nodes with several GPUs a node they run the flat ring, whose
  // every chunk crosses each node boundary. PAT (a log-latency schedule at 0.75 of the ring's
  // bandwidth in tuning.cc) is not modelled: one-GPU-a-node groups are priced as the ring,
  // which NCCL's model prefers for large sizes; small ones may run faster under PAT.
  if (multi && shape.ranks_per_node > 1 && op == CollectiveOp::kAllReduce) {
    out.push_back(CommAlgorithm::kHierarchical);
  }
  // NVLS reaches its bandwidth only with the whole NVSwitch node in the group: on 2-4 H100s it
  // measures like a ring (NVIDIA/nccl#1455), so it is offered for full nodes only.
  const bool nvls_nodes = op == CollectiveOp::kAllReduce &&
                          cluster_.fabric == IntraNodeFabric::kNvSwitch &&
                          links_.SupportsNvls(cluster_.gpu.nvlink_generation) &&
                          shape.ranks_per_node == cluster_.gpus_per_node &&
                          shape.ranks == shape.nodes * cluster_.gpus_per_node && shape.ranks > 1;
  if (nvls_nodes && !multi) out.push_back(CommAlgorithm::kNvls);
  // Across whole NVLS nodes NCCL also offers NVLSTree (tuning.cc disables it on one node).
  if (nvls_nodes && multi) out.push_back(CommAlgorithm::kNvlsTree);
  return out;
}

CollectiveCost CollectiveModel::CostWith(CollectiveOp op, Bytes size, const GroupShape& shape,
                                         CommAlgorithm algorithm) const {
  const double n = static_cast<double>(shape.ranks);
  const double m = static_cast<double>(shape.nodes);
  const double r = static_cast<double>(shape.ranks_per_node);
  const bool multi = shape.nodes > 1;
  const double factor = BusBwFactor(op, shape.ranks);
  const double bytes = size.count();
  const LinkConstants& k = constants_;
  const double alpha_in = k.ready ? k.alpha_in : links_.Level(FabricKey(cluster_)).latency.s();
  const double alpha_net =
      multi ? (k.ready ? k.alpha_net : links_.Level(ToString(cluster_.DataTransport())).latency.s())
            : alpha_in;
  const double b_in = k.ready ? k.b_in : IntraNodeBusBw().bytes_per_s();
  const double b_nic = k.ready ? k.b_nic : NicBusBwPerGpu().bytes_per_s();
  const MapLevelKind intra_kind = cluster_.fabric == IntraNodeFabric::kPcieOnly
                                      ? MapLevelKind::kPcie
                                      : MapLevelKind::kGpuFabric;

  CollectiveCost cost;
  cost.op = op;
  cost.algorithm = algorithm;
  cost.shape = shape;
  cost.size = size;
  cost.level_kind = multi ? MapLevelKind::kDataNic : intra_kind;
  double steps_in = 0, steps_net = 0, bw_time = 0;

  if (shape.ranks == 1) {
    // One rank: nothing crosses a link; NCCL still pays its launch.
  } else if (algorithm == CommAlgorithm::kNvls) {
    const double b_nvls = cluster_.gpu.nvlink_bandwidth_per_direction().bytes_per_s() *
                          links_.Level("nvswitch_nvls").busbw_fraction.value_or(1.0);
    steps_in = 2;  // reduce into the switch, multicast back
    bw_time = factor * bytes / b_nvls;
  } else if (algorithm == CommAlgorithm::kNvlsTree) {
    // NVLS reduces inside each node, a tree carries the node's sum between nodes, NVLS
    // multicasts the result back; NCCL pipelines the phases, so the slower one sets the time
    // (tuning.cc: bw = min(intraBw, interBw)). Inside: the node's NVLS all-reduce algbw.
    // Between nodes: on 2 nodes each node is the root of one of the two trees and a leaf of the
    // other, sending S/2 up and S/2 down (and receiving as much): S per direction through its r
    // NICs, against the ring's 2 (n-1)/n S. From 3 nodes on a node is interior in one tree
    // (2 children) and a leaf in the other: 2 S, no gain on the ring. tuning.cc says the same:
    // "Handle 2 node case of NVLSTree", interBw x 2 only for nNodes <= 2.
    const double b_nvls = cluster_.gpu.nvlink_bandwidth_per_direction().bytes_per_s() *
                          links_.Level("nvswitch_nvls").busbw_fraction.value_or(1.0);
    const double intra_algbw = b_nvls / BusBwFactor(CollectiveOp::kAllReduce, shape.ranks_per_node);
    const double inter_algbw = r * b_nic / (shape.nodes <= 2 ? 1.0 : 2.0);
    bw_time = bytes / (kTreeAllReduceEfficiency * std::min(intra_algbw, inter_algbw));
    // NCCL's NVLSTree latency: NVLS in the node plus 2 log2i(nodes) network levels.
    steps_in = 2;
    steps_net = 2.0 * FloorLog2(shape.nodes);
    cost.level_kind = inter_algbw <= intra_algbw ? MapLevelKind::kDataNic : intra_kind;
  } else if (algorithm == CommAlgorithm::kHierarchical) {
    // Intra-node reduce-scatter (and all-gather for all-reduce), inter-node over each rail on
    // S / r bytes per GPU, in series: NCCL has no such algorithm (a user-level or CollNet-like
    // scheme); the hierarchical all-reduce NCCL pipelines is the NVLS tree above.
    const double phases = op == CollectiveOp::kAllReduce ? 2.0 : 1.0;
    const double intra = phases * (r - 1) / r * bytes / b_in;
    const double inter = phases * (m - 1) / m * (bytes / r) / b_nic;
    steps_in = phases * (r - 1);
    steps_net = phases * (m - 1);
    bw_time = intra + inter;
    cost.level_kind = inter >= intra ? MapLevelKind::kDataNic : intra_kind;
  } else if (op == CollectiveOp::kAllToAll && multi) {
    // Each rank sends S/n to every peer: (r-1) chunks over the fabric, (n-r) over its NIC share,
    // at the same time (sjeaugey, NVIDIA/nccl-tests#267: all-to-all cannot aggregate NICs).
    steps_net = n - 1;
    bw_time = std::max((r - 1) / n * bytes / b_in, (n - r) / n * bytes / b_nic);
  } else {
    double beta = b_in;
    if (multi) beta = op == CollectiveOp::kSendRecv ? b_nic : std::min(b_in, r * b_nic);
    if (multi && beta >= b_in) cost.level_kind = intra_kind;
    const double steps = op == CollectiveOp::kSendRecv    ? 1.0
                         : op == CollectiveOp::kAllReduce ? 2.0 * (n - 1)
                                                          : n - 1;
    if (algorithm == CommAlgorithm::kTree) {
      // NCCL's tree latency: 2 x ((ranks per node - 1) x intra + log2i(nodes) x inter).
      steps_in = 2.0 * (r - 1);
      steps_net = multi ? 2.0 * FloorLog2(shape.nodes) : 0.0;
    } else if (multi && op != CollectiveOp::kSendRecv) {
      // NCCL's ring crosses the network once per node boundary of each pass (tuning.cc:
      // nInterSteps = 2 (nNodes - 1) for all-reduce, nNodes - 1 otherwise); its other steps
      // stay inside a node.
      steps_net = (op == CollectiveOp::kAllReduce ? 2.0 : 1.0) * (m - 1);
      steps_in = steps - steps_net;
    } else if (multi) {
      steps_net = steps;
    } else {
      steps_in = steps;
    }
    bw_time = factor * bytes / beta;
  }
  cost.latency_time =
      Seconds::Of(links_.nccl_base_latency.s() + steps_in * alpha_in + steps_net * alpha_net);
  cost.bandwidth_time = Seconds::Of(bw_time);
  // Ring and tree run the NCCL protocol its tuning model predicts fastest (tuning.cc): LL for
  // small sizes (low latency, a quarter of the bandwidth), LL128 in between, Simple for large
  // ones. A level's alpha is its Simple ring hop; the other protocols' hops scale with the
  // table's ratio for the level's kind of hop. Point-to-point has no choice to make: LL up to
  // NCCL_P2P_LL_THRESHOLD bytes a peer, Simple above (priced with the ring rows).
  const bool p2p = op == CollectiveOp::kAllToAll || op == CollectiveOp::kSendRecv;
  const double peer_bytes = op == CollectiveOp::kAllToAll ? bytes / n : bytes;
  const NcclProto p2p_proto =
      peer_bytes <= kP2pLlThresholdBytes ? NcclProto::kLl : NcclProto::kSimple;
  if ((algorithm == CommAlgorithm::kRing || algorithm == CommAlgorithm::kTree ||
       algorithm == CommAlgorithm::kP2p) &&
      shape.ranks > 1 && !links_.protocols.empty()) {
    const bool tree = algorithm == CommAlgorithm::kTree;
    const NcclProtocol& simple = links_.protocols.front();
    const std::string kind_in = HopKindOf(FabricKey(cluster_));
    const std::string kind_net = HopKindOf(ToString(cluster_.DataTransport()));
    auto hop = [&](const NcclProtocol& p, const std::string& kind, double alpha) {
      const auto it = p.hop.find(kind);
      const auto base = simple.hop.find(kind);
      if (it == p.hop.end() || base == simple.hop.end()) return alpha;
      const double mine = tree ? it->second.second.s() : it->second.first.s();
      return alpha * mine / base->second.first.s();
    };
    double best = -1;
    for (const NcclProtocol& p : links_.protocols) {
      if (p2p && p.proto != p2p_proto) continue;
      const double latency = (tree ? p.base_tree.s() : p.base_ring.s()) +
                             steps_in * hop(p, kind_in, alpha_in) +
                             steps_net * hop(p, kind_net, alpha_net);
      const double bandwidth = bw_time / (tree ? p.bandwidth_tree : p.bandwidth_ring);
      if (best < 0 || latency + bandwidth < best) {
        best = latency + bandwidth;
        cost.protocol = p.proto;
        cost.latency_time = Seconds::Of(latency);
        cost.bandwidth_time = Seconds::Of(bandwidth);
      }
    }
  }
  cost.time = cost.latency_time + cost.bandwidth_time;
  cost.algbw = AlgBw(size, cost.time);
  cost.busbw = cost.algbw * factor;
  cost.path_busbw = BytesPerSecond::Of(bw_time > 0 ? factor * bytes / bw_time : 0.0);
  return cost;  // `level` is named by Cost, once the algorithm is chosen
}

Result<CollectiveCost> CollectiveModel::Cost(CollectiveOp op, Bytes size, const GroupShape& shape,
                                             CommAlgorithm algorithm, Detail detail) const {
  if (shape.ranks < 1 || shape.nodes < 1 || shape.ranks_per_node < 1 ||
      shape.ranks_per_node > cluster_.gpus_per_node || shape.nodes > cluster_.nodes ||
      shape.ranks_per_node * shape.nodes > shape.ranks ||
      shape.ranks > shape.nodes * cluster_.gpus_per_node) {
    return InvalidInput(fmt::format(
        "a group of {} ranks on {} nodes with at least {} per node does not fit cluster '{}' ({} "
        "nodes x {} GPUs)",
        shape.ranks, shape.nodes, shape.ranks_per_node, cluster_.name, cluster_.nodes,
        cluster_.gpus_per_node));
  }
  if (size.count() < 0) return InvalidInput("size must not be negative").InField("size");
  const auto applicable = Applicable(op, shape);
  if (algorithm == CommAlgorithm::kAuto) {
    CollectiveCost best = CostWith(op, size, shape, *applicable.begin());
    for (const CommAlgorithm* a = applicable.begin() + 1; a != applicable.end(); ++a) {
      CollectiveCost c = CostWith(op, size, shape, *a);
      if (c.time < best.time) best = std::move(c);
    }
    if (detail == Detail::kExplained) NameLevels(best);
    return best;
  }
  if (std::find(applicable.begin(), applicable.end(), algorithm) == applicable.end()) {
    std::vector<std::string> names;
    for (CommAlgorithm a : applicable) names.push_back(ToString(a));
    return InvalidInput(fmt::format("algorithm '{}' does not apply to {} on {} ranks over {} "
                                    "node(s) (applicable: {})",
                                    ToString(algorithm), ToString(op), shape.ranks, shape.nodes,
                                    fmt::format("{}", fmt::join(names, ", "))))
        .InField("algorithm");
  }
  CollectiveCost cost = CostWith(op, size, shape, algorithm);
  if (detail == Detail::kExplained) NameLevels(cost);
  return cost;
}

}  // namespace strata
