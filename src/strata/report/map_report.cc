#include "strata/report/map_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "strata/core/table.h"
#include "strata/job/job_json.h"

namespace strata {
namespace {

// A dense model has no expert groups to show: the placement still lays out EP, ETP and
// expert-DP (the step model reads them), but nothing of the model travels in them.
bool Shown(const GroupPlacement& g, const LayoutSection& s) {
  const bool expert_group =
      g.kind == GroupKind::kEp || g.kind == GroupKind::kEtp || g.kind == GroupKind::kExpertDp;
  return s.experts || !expert_group;
}

std::string RatioCell(double ratio) { return ratio > 0 ? fmt::format("{:.1f}x", ratio) : ""; }

std::string GroupLevel(const GroupPlacement& g, const BandwidthMap& map) {
  if (g.size == 1) return "-";
  for (const auto& level : map.levels) {
    if (g.intra_node() &&
        (level.kind == MapLevelKind::kGpuFabric || level.kind == MapLevelKind::kPcie))
      return level.name;
    if (!g.intra_node() && level.kind == MapLevelKind::kDataNic) return level.name;
  }
  return "?";
}

std::string MsCell(Seconds t) { return fmt::format("{:.3f}", t.ms()); }

std::string SizeCell(Bytes b) {
  return b.gb() >= 1 ? fmt::format("{:.2f} GB", b.gb()) : fmt::format("{:.1f} MB", b.mb());
}

}  // namespace

std::string GbpsCell(BytesPerSecond rate) {
  const double v = rate.gb_per_s();
  if (v >= 100) return fmt::format("{:.0f}", v);
  if (v >= 1) return fmt::format("{:.1f}", v);
  return fmt::format("{:.3f}", v);
}

std::string RankList(const std::vector<int64_t>& ranks) {
  if (ranks.empty()) return "";
  bool contiguous = true;
  for (size_t i = 1; i < ranks.size(); ++i) contiguous = contiguous && ranks[i] == ranks[i - 1] + 1;
  if (contiguous && ranks.size() > 2) return fmt::format("{}-{}", ranks.front(), ranks.back());
  std::string out;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i == 6 && ranks.size() > 8) return out + fmt::format(",...,{}", ranks.back());
    out += (i ? "," : "") + std::to_string(ranks[i]);
  }
  return out;
}

std::string RenderMapText(const MapReport& r) {
  const Cluster& c = r.cluster;
  std::string out =
      fmt::format("Cluster {}: {} nodes x {} {} = {} GPUs, intra-node {}\n\n", c.name, c.nodes,
                  c.gpus_per_node, c.gpu.name, c.world_size(), ToString(c.fabric));
  out +=
      "Bandwidth map (decimal GB/s; links per direction, as nccl-tests' busbw counts them; "
      "HBM and storage in total)\n";
  Table levels({{"level", Align::kLeft},
                {"per GPU (GB/s)"},
                {"per node (GB/s)"},
                {"latency"},
                {"slower than above"},
                {"note", Align::kLeft}});
  for (const auto& l : r.map.levels) {
    levels.AddRow({l.name, GbpsCell(l.per_gpu), GbpsCell(l.per_node), FormatSeconds(l.latency),
                   RatioCell(l.slower_than_above), l.note});
  }
  out += levels.Render();
  if (!r.layout) return out;

  const LayoutSection& s = *r.layout;
  const ParallelLayout& l = s.inputs.layout;
  out += fmt::format(
      "\nLayout {}, rank order {}; model {}; micro batch {} x {:.0f} tokens, {} "
      "micro batch(es) per step{}\n",
      LayoutHeader(l, s.experts), s.rank_order, s.model, s.inputs.micro_batch,
      s.inputs.tokens_per_sample, s.inputs.micro_batches_per_step,
      s.inputs.full_recompute ? ", full recompute" : "");
  out += "Groups (ranks fill nodes in order: node = rank / GPUs per node)\n";
  Table groups({{"group", Align::kLeft},
                {"size"},
                {"groups"},
                {"nodes each"},
                {"ranks per node"},
                {"level", Align::kLeft},
                {"first group", Align::kLeft}});
  for (const auto& g : s.groups) {
    // Size-1 groups do not talk; DP x CP equals DP when CP is 1.
    if (!Shown(g, s) || g.size == 1 || (g.kind == GroupKind::kDpCp && l.cp == 1)) continue;
    groups.AddRow({ToString(g.kind), std::to_string(g.size), std::to_string(g.count),
                   std::to_string(g.nodes_spanned), std::to_string(g.ranks_per_node),
                   GroupLevel(g, r.map), RankList(g.first_group)});
  }
  out += groups.Render();

  out += "\nTraffic of one GPU (time on the link alone, before any overlap with compute)\n";
  Table traffic({{"group", Align::kLeft},
                 {"what", Align::kLeft},
                 {"collective", Align::kLeft},
                 {"size per call"},
                 {"how often", Align::kLeft},
                 {"calls per step"},
                 {"limited by", Align::kLeft},
                 {"busbw (GB/s)"},
                 {"per call (ms)"},
                 {"per step (ms)"}});
  Seconds total;
  for (const auto& t : s.traffic) {
    traffic.AddRow({ToString(t.item.group), t.item.purpose, ToString(t.item.op),
                    SizeCell(t.item.size),
                    fmt::format("{:g} {}", t.item.calls_per_unit, ToString(t.item.frequency)),
                    fmt::format("{:g}", t.item.calls_per_step), t.cost.level,
                    GbpsCell(t.cost.busbw), MsCell(t.cost.time), MsCell(t.time_per_step)});
    total += t.time_per_step;
  }
  traffic.AddSeparator();
  traffic.AddRow({"total", "", "", "", "", "", "", "", "", MsCell(total)});
  out += traffic.Render();
  if (s.traffic.empty())
    out += "  (no group larger than one rank: this layout does not communicate)\n";
  return out;
}

Json MapJson(const MapReport& r) {
  Json j = JsonDocument("bandwidth_map");
  const Cluster& c = r.cluster;
  j["cluster"] = {{"name", c.name},
                  {"nodes", c.nodes},
                  {"gpus_per_node", c.gpus_per_node},
                  {"gpu", c.gpu.name},
                  {"intra_node_fabric", ToString(c.fabric)}};
  Json levels = Json::array();
  for (const auto& l : r.map.levels) {
    levels.push_back({{"kind", ToString(l.kind)},
                      {"name", l.name},
                      {"per_gpu_gbps", JsonNumber(l.per_gpu.gb_per_s())},
                      {"per_node_gbps", JsonNumber(l.per_node.gb_per_s())},
                      {"latency_us", JsonNumber(l.latency.us())},
                      {"slower_than_above", JsonNumber(l.slower_than_above)},
                      {"note", l.note}});
  }
  j["levels"] = levels;
  if (!r.layout) return j;
  const LayoutSection& s = *r.layout;
  const ParallelLayout& l = s.inputs.layout;
  Json layout = Json::object();
  AddLayoutJson(layout, l, s.experts);
  layout["rank_order"] = s.rank_order;
  layout["model"] = s.model;
  layout["micro_batch"] = s.inputs.micro_batch;
  layout["tokens_per_sample"] = JsonNumber(s.inputs.tokens_per_sample);
  layout["micro_batches_per_step"] = s.inputs.micro_batches_per_step;
  layout["full_recompute"] = s.inputs.full_recompute;
  j["layout"] = layout;
  Json groups = Json::array();
  for (const auto& g : s.groups) {
    if (!Shown(g, s)) continue;
    groups.push_back({{"group", ToString(g.kind)},
                      {"size", g.size},
                      {"count", g.count},
                      {"nodes_spanned", g.nodes_spanned},
                      {"ranks_per_node", g.ranks_per_node},
                      {"level", GroupLevel(g, r.map)},
                      {"first_group", g.first_group}});
  }
  j["groups"] = groups;
  Json traffic = Json::array();
  double total_s = 0;
  for (const auto& t : s.traffic) {
    traffic.push_back({{"group", ToString(t.item.group)},
                       {"purpose", t.item.purpose},
                       {"op", ToString(t.item.op)},
                       {"algorithm", ToString(t.cost.algorithm)},
                       {"size_bytes", JsonBytes(t.item.size)},
                       {"frequency", ToString(t.item.frequency)},
                       {"calls_per_unit", t.item.calls_per_unit},
                       {"calls_per_step", t.item.calls_per_step},
                       {"level", t.cost.level},
                       {"algbw_gbps", JsonNumber(t.cost.algbw.gb_per_s())},
                       {"busbw_gbps", JsonNumber(t.cost.busbw.gb_per_s())},
                       {"time_per_call_s", JsonNumber(t.cost.time.s())},
                       {"time_per_step_s", JsonNumber(t.time_per_step.s())}});
    total_s += t.time_per_step.s();
  }
  j["traffic"] = traffic;
  j["comm_time_per_step_s"] = JsonNumber(total_s);
  return j;
}

}  // namespace strata
