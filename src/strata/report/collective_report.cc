#include "strata/report/collective_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "strata/core/table.h"

namespace strata {
namespace {

std::string FactorText(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return "2(n-1)/n";
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllToAll:
      return "(n-1)/n";
    default:
      return "1";
  }
}

Json CostJson(const CollectiveCost& c) {
  return {{"algorithm", ToString(c.algorithm)},
          {"protocol", std::string(NcclProtoName(c.protocol, ProtoSpelling::kKey))},
          {"level", c.level},
          {"time_s", JsonNumber(c.time.s())},
          {"latency_time_s", JsonNumber(c.latency_time.s())},
          {"bandwidth_time_s", JsonNumber(c.bandwidth_time.s())},
          {"algbw_gbps", JsonNumber(c.algbw.gb_per_s())},
          {"busbw_gbps", JsonNumber(c.busbw.gb_per_s())},
          {"path_busbw_gbps", JsonNumber(c.path_busbw.gb_per_s())}};
}

}  // namespace

Result<CollectiveReport> BuildCollectiveReport(const CollectiveModel& model, CollectiveOp op,
                                               Bytes size, const GroupShape& shape,
                                               CommAlgorithm algorithm) {
  CollectiveReport report;
  report.cluster = model.cluster().name;
  report.requested = algorithm;
  STRATA_ASSIGN_OR_RETURN(report.chosen, model.Cost(op, size, shape, algorithm));
  for (CommAlgorithm a : {CommAlgorithm::kRing, CommAlgorithm::kTree, CommAlgorithm::kHierarchical,
                          CommAlgorithm::kNvls, CommAlgorithm::kNvlsTree, CommAlgorithm::kP2p}) {
    auto cost = model.Cost(op, size, shape, a);
    if (cost.ok()) report.alternatives.push_back(*cost);
  }
  return report;
}

std::string RenderCollectiveText(const CollectiveReport& r) {
  const CollectiveCost& c = r.chosen;
  std::string out =
      fmt::format("{} of {} ({:.4g} GB) on {} ranks ({} node(s), at least {} per node) of {}\n",
                  ToString(c.op), FormatBytesAuto(c.size), c.size.gb(), c.shape.ranks,
                  c.shape.nodes, c.shape.ranks_per_node, r.cluster);
  // "p2p" alone would not say what NCCL runs: name the grouped sends.
  const std::string algorithm = c.algorithm == CommAlgorithm::kP2p
                                    ? "p2p (grouped ncclSend/ncclRecv to each peer)"
                                    : ToString(c.algorithm);
  out += fmt::format("  algorithm   {}, NCCL protocol {}{}\n", algorithm,
                     NcclProtoName(c.protocol, ProtoSpelling::kNccl),
                     r.requested == CommAlgorithm::kAuto && c.algorithm != CommAlgorithm::kP2p
                         ? " (the fastest modelled)"
                         : "");
  out += fmt::format("  level       {}\n", c.level);
  out += fmt::format("  time        {} (latency {} + bandwidth {})\n", FormatSeconds(c.time),
                     FormatSeconds(c.latency_time), FormatSeconds(c.bandwidth_time));
  out += fmt::format("  algbw       {:.2f} GB/s   (size / time)\n", c.algbw.gb_per_s());
  out += fmt::format("  busbw       {:.2f} GB/s   (algbw x {} = x {:.4f}, as nccl-tests)\n",
                     c.busbw.gb_per_s(), FactorText(c.op), BusBwFactor(c.op, c.shape.ranks));
  out += fmt::format("  path busbw  {:.2f} GB/s   (what busbw tends to for large sizes)\n",
                     c.path_busbw.gb_per_s());
  if (r.alternatives.size() > 1) {
    out += "\nEvery algorithm that applies\n";
    Table t({{"algorithm", Align::kLeft},
             {"time (ms)"},
             {"algbw (GB/s)"},
             {"busbw (GB/s)"},
             {"level", Align::kLeft}});
    for (const auto& a : r.alternatives) {
      t.AddRow({ToString(a.algorithm) + (a.algorithm == c.algorithm ? " *" : ""),
                fmt::format("{:.3f}", a.time.ms()), fmt::format("{:.2f}", a.algbw.gb_per_s()),
                fmt::format("{:.2f}", a.busbw.gb_per_s()), a.level});
    }
    out += t.Render();
  }
  return out;
}

Json CollectiveJson(const CollectiveReport& r) {
  const CollectiveCost& c = r.chosen;
  Json j = JsonDocument("collective_cost");
  j["cluster"] = r.cluster;
  j["op"] = ToString(c.op);
  j["size_bytes"] = JsonBytes(c.size);
  j["ranks"] = c.shape.ranks;
  j["nodes"] = c.shape.nodes;
  j["ranks_per_node"] = c.shape.ranks_per_node;
  j["busbw_factor"] = JsonNumber(BusBwFactor(c.op, c.shape.ranks));
  j["requested_algorithm"] = ToString(r.requested);
  j["result"] = CostJson(c);
  Json alts = Json::array();
  for (const auto& a : r.alternatives) alts.push_back(CostJson(a));
  j["alternatives"] = alts;
  return j;
}

}  // namespace strata
