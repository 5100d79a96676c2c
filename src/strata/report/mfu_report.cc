#include "strata/report/mfu_report.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "strata/core/table.h"

namespace strata {

namespace {

std::string Percent(double fraction) { return fmt::format("{:.2f}", 100.0 * fraction); }

std::string ConventionNote(FlopConvention c) {
  switch (c) {
    case FlopConvention::kSixNNominal:
      return "6 x advertised active params";
    case FlopConvention::kSixNActive:
      return "6 x active matmul params";
    case FlopConvention::kSixNWithEmbedding:
      return "6 x active params incl. embedding";
    case FlopConvention::kMegatron:
      return "megatron-core, causal attention";
    case FlopConvention::kPalm:
      return "PaLM, non-causal attention";
    case FlopConvention::kFirstPrinciples:
      return "3 x forward GEMMs+attention+GDN+logits";
  }
  return "";
}

}  // namespace

std::string RenderMfuText(const MfuReport& report, const ThroughputSource& source, bool explain) {
  const MfuInputs& in = report.inputs;
  const double per_gpu = in.throughput.tokens_per_s_per_gpu();
  std::string out;
  out += fmt::format("MFU of {} on {} x {} ({} dense peak per GPU), recompute: {}\n\n",
                     in.model.name, in.throughput.gpus, in.gpu_name, FormatTflops(in.peak_per_gpu),
                     RecomputeName(in.recompute));
  out += "Throughput\n";
  if (source.tokens_per_step > 0) {
    out += fmt::format("  tokens per step   {} tokens\n", GroupDigits(source.tokens_per_step));
    out += fmt::format("  step time         {} s\n", GroupDigits(source.step_time_s, 1));
  }
  out +=
      fmt::format("  job               {} tokens/s\n", GroupDigits(in.throughput.tokens_per_s, 1));
  out += fmt::format("  per GPU           {} tokens/s/GPU\n", GroupDigits(per_gpu, 2));
  if (explain) {
    if (source.tokens_per_step > 0) {
      out += fmt::format("  = tokens per step / step time / GPUs = {} / {} s / {} = {:.2f}\n",
                         GroupDigits(source.tokens_per_step), source.step_time_s,
                         in.throughput.gpus, per_gpu);
    } else {
      out += fmt::format("  = tokens/s / GPUs = {:.1f} / {} = {:.2f}\n", in.throughput.tokens_per_s,
                         in.throughput.gpus, per_gpu);
    }
  }
  if (!in.sequence.assumption.empty()) {
    out += fmt::format("  sequence          {}\n", in.sequence.assumption);
  }
  for (const MfuPoint& point : report.points) {
    out += fmt::format("\nAt {} tokens of attention context\n", point.label);
    Table table({{"convention", Align::kLeft},
                 {"FLOP/token (GFLOP)"},
                 {"achieved (TFLOP/s/GPU)"},
                 {"MFU (%)"},
                 {"counts", Align::kLeft}});
    for (const MfuRow& row : point.rows) {
      table.AddRow({std::string(FlopConventionName(row.convention)),
                    fmt::format("{:.2f}", row.training_per_token.gflop()),
                    fmt::format("{:.2f}", row.achieved_per_gpu.tflop_per_s()), Percent(row.mfu),
                    ConventionNote(row.convention)});
    }
    if (in.trained_flop_adjustment != 0) {
      table.AddSeparator();
      table.AddRow({"megatron, trained", fmt::format("{:.2f}", point.trained_per_token.gflop()),
                    fmt::format("{:.2f}", per_gpu * point.trained_per_token.count() / 1e12),
                    Percent(point.trained_mfu), "megatron less frozen weight gradients"});
    }
    table.AddSeparator();
    table.AddRow({in.recompute == Recompute::kNone
                      ? std::string("HFU (no recompute)")
                      : fmt::format("HFU ({} recompute)", RecomputeName(in.recompute)),
                  fmt::format("{:.2f}", point.hardware_per_token.gflop()),
                  fmt::format("{:.2f}", per_gpu * point.hardware_per_token.count() / 1e12),
                  Percent(point.hfu),
                  in.recompute == Recompute::kNone  ? "nothing recomputed"
                  : in.trained_flop_adjustment != 0 ? "trained + recomputed forward"
                                                    : "megatron + recomputed forward"});
    if (point.hfu_four_thirds > 0) {
      table.AddRow({"HFU, 4/3 x megatron",
                    fmt::format("{:.2f}", point.four_thirds_per_token.gflop()),
                    fmt::format("{:.2f}", per_gpu * point.four_thirds_per_token.count() / 1e12),
                    Percent(point.hfu_four_thirds), "the 4/3 shortcut: output layer re-run too"});
    }
    out += table.Render();
    if (explain) {
      out += "\n  MFU = tokens/s/GPU x FLOP/token / peak\n";
      for (const MfuRow& row : point.rows) {
        out += fmt::format("  {}: {}\n", FlopConventionName(row.convention), row.formula);
        out += fmt::format("    MFU = {:.2f} x {:.4g} / {:.4g} = {:.2f}%\n", per_gpu,
                           row.training_per_token.count(), in.peak_per_gpu.flop_per_s(),
                           100.0 * row.mfu);
      }
      // The decoder layers' forward: the count's third less its output layers (2 h V each).
      const double heads = 1.0 + (in.include_mtp ? static_cast<double>(in.model.mtp_layers) : 0.0);
      const double logits = 2.0 * static_cast<double>(in.model.hidden_size) *
                            static_cast<double>(in.model.vocab_size) * heads;
      const std::string full =
          in.recompute_layer_fraction < 1
              ? fmt::format(
                    "full recompute re-runs the decoder layers' forward, on {:.4g}% of them: "
                    "megatron / 3 - {:.4g} (output layer{}, not re-run), x {:.4g}",
                    100 * in.recompute_layer_fraction, logits, heads > 1 ? "s" : "",
                    in.recompute_layer_fraction)
              : fmt::format(
                    "full recompute re-runs the decoder layers' forward: megatron / 3 - {:.4g} "
                    "(output layer{}, not re-run)",
                    logits, heads > 1 ? "s" : "");
      const std::string why = in.trained_flop_adjustment != 0
                                  ? "the trained FLOP plus what recompute runs again"
                              : in.recompute == Recompute::kFull ? full
                              : in.recompute == Recompute::kSelective
                                  ? "selective recompute adds one more core-attention forward"
                                  : "no recompute: HFU = MFU";
      out +=
          fmt::format("  HFU: {}: {:.4g} FLOP/token; {:.2f} x {:.4g} / {:.4g} = {:.2f}%\n", why,
                      point.hardware_per_token.count(), per_gpu, point.hardware_per_token.count(),
                      in.peak_per_gpu.flop_per_s(), 100.0 * point.hfu);
      if (point.hfu_four_thirds > 0) {
        out += fmt::format(
            "  HFU, 4/3 x megatron: every forward FLOP counted again, the output layer's too: "
            "{:.4g} x 4/3 = {:.4g} FLOP/token; {:.2f} x {:.4g} / {:.4g} = {:.2f}%\n",
            point.four_thirds_per_token.count() * 3.0 / 4.0, point.four_thirds_per_token.count(),
            per_gpu, point.four_thirds_per_token.count(), in.peak_per_gpu.flop_per_s(),
            100.0 * point.hfu_four_thirds);
      }
    }
  }
  const SequenceLengths& seq = in.sequence;
  if (!seq.exact) {
    out += fmt::format(
        "\nOnly the mean ({}) and max ({}) length are known: attention work follows "
        "E[S^2]/E[S],\nwhich lies between them. For the exact figure give the job a length "
        "histogram\n(sequence.histogram: a file of 'length count' lines, in place of "
        "mean_tokens).\n",
        GroupDigits(seq.mean_tokens), GroupDigits(seq.max_tokens));
  }
  if (in.trained_flop_adjustment != 0) {
    out += fmt::format(
        "\nThe job trains adapters or leaves modules frozen: the conventions count full "
        "training; it needs\n{:.2f} GFLOP/token less (no weight gradients of frozen GEMMs, "
        "adapters added), the 'megatron, trained' row.\n",
        -in.trained_flop_adjustment / 1e9);
  }
  out += "\nNot counted in any convention: the vision tower, the MoE routers";
  out += in.include_mtp ? ".\n" : " and MTP blocks.\n";
  return out;
}

Json MfuJson(const MfuReport& report, const ThroughputSource& source) {
  const MfuInputs& in = report.inputs;
  Json doc = JsonDocument("mfu");
  doc["model"] = in.model.name;
  doc["gpu"] = in.gpu_name;
  doc["gpus"] = in.throughput.gpus;
  doc["peak_flop_per_s_per_gpu"] = JsonNumber(in.peak_per_gpu.flop_per_s());
  if (source.tokens_per_step > 0) {
    doc["tokens_per_step"] = JsonNumber(source.tokens_per_step);
    doc["step_time_s"] = JsonNumber(source.step_time_s);
  }
  doc["tokens_per_s"] = JsonNumber(in.throughput.tokens_per_s);
  doc["tokens_per_s_per_gpu"] = JsonNumber(in.throughput.tokens_per_s_per_gpu());
  doc["recompute"] = std::string(RecomputeName(in.recompute));
  doc["sequence"] = {{"mean_tokens", JsonNumber(in.sequence.mean_tokens)},
                     {"max_tokens", JsonNumber(in.sequence.max_tokens)},
                     {"exact", in.sequence.exact}};
  Json points = Json::array();
  for (const MfuPoint& point : report.points) {
    Json p;
    p["label"] = point.label;
    p["attention_tokens"] = JsonNumber(point.attention_tokens);
    Json rows = Json::array();
    for (const MfuRow& row : point.rows) {
      rows.push_back(
          {{"convention", std::string(FlopConventionName(row.convention))},
           {"training_flop_per_token", JsonNumber(row.training_per_token.count())},
           {"achieved_flop_per_s_per_gpu", JsonNumber(row.achieved_per_gpu.flop_per_s())},
           {"mfu_percent", JsonNumber(100.0 * row.mfu)}});
    }
    p["conventions"] = rows;
    if (in.trained_flop_adjustment != 0) {
      p["trained"] = {{"training_flop_per_token", JsonNumber(point.trained_per_token.count())},
                      {"mfu_percent", JsonNumber(100.0 * point.trained_mfu)}};
    }
    p["hfu"] = {{"hardware_flop_per_token", JsonNumber(point.hardware_per_token.count())},
                {"hfu_percent", JsonNumber(100.0 * point.hfu)}};
    if (point.hfu_four_thirds > 0) {
      p["hfu_four_thirds"] = {
          {"hardware_flop_per_token", JsonNumber(point.four_thirds_per_token.count())},
          {"hfu_percent", JsonNumber(100.0 * point.hfu_four_thirds)}};
    }
    points.push_back(p);
  }
  doc["points"] = points;
  return doc;
}

}  // namespace strata
