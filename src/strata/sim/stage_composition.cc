#include "strata/sim/stage_composition.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "strata/job/pipeline_split.h"

namespace strata {
namespace {

std::string_view MixerWords(MixerKind kind) {
  switch (kind) {
    case MixerKind::kFullAttention:
      return "full-attention";
    case MixerKind::kSlidingAttention:
      return "sliding-window";
    case MixerKind::kGatedDeltaNet:
      return "Gated DeltaNet";
    case MixerKind::kMla:
      return "MLA";
    case MixerKind::kMamba2:
      return "Mamba-2";
    case MixerKind::kMamba1:
      return "Mamba-1";
    case MixerKind::kLightning:
      return "lightning-attention";
    case MixerKind::kNone:
      return "MLP-only";
  }
  return "?";
}

std::string_view FfnWords(FfnKind kind) {
  switch (kind) {
    case FfnKind::kDense:
      return "dense";
    case FfnKind::kMoe:
      return "MoE";
    case FfnKind::kNone:
      return "mixer-only";
  }
  return "?";
}

}  // namespace

LayerKinds LayerKindsOf(const std::vector<LayerSpec>& layers) {
  LayerKinds k;
  k.kind_of.reserve(layers.size());
  for (const LayerSpec& spec : layers) {
    size_t i = 0;
    while (i < k.kinds.size() && (k.kinds[i].mixer != spec.mixer || k.kinds[i].ffn != spec.ffn)) {
      ++i;
    }
    if (i == k.kinds.size()) {
      k.kinds.push_back(spec);
      k.count.push_back(0);
    }
    ++k.count[i];
    k.kind_of.push_back(static_cast<uint8_t>(i));
  }
  return k;
}

std::vector<StageComposition> StageCompositions(const ParallelLayout& l, const LayerKinds& kinds,
                                                int64_t mtp_layers) {
  const auto layers = static_cast<int64_t>(kinds.kind_of.size());
  const int64_t pp = std::max<int64_t>(1, l.pp);
  std::vector<StageComposition> out(static_cast<size_t>(pp));
  for (int64_t r = 0; r < pp; ++r) {
    out[static_cast<size_t>(r)].rank = r;
    out[static_cast<size_t>(r)].kind_layers.assign(kinds.kinds.size(), 0);
  }
  // Virtual stage k holds the layers after those of stages 0..k-1 (pipeline_split.h).
  auto add_layers = [&](StageComposition& s, int64_t first, int64_t n) {
    for (int64_t i = first; i < first + n && i < layers; ++i) {
      const LayerSpec& spec = kinds.kinds[kinds.kind_of[static_cast<size_t>(i)]];
      ++s.kind_layers[kinds.kind_of[static_cast<size_t>(i)]];
      ++s.layers;
      s.moe_layers += spec.ffn == FfnKind::kMoe;
      s.dense_ffn_layers += spec.ffn == FfnKind::kDense;
      const bool softmax =
          spec.mixer == MixerKind::kFullAttention || spec.mixer == MixerKind::kSlidingAttention;
      s.softmax_attention_layers += softmax;
      s.full_attention_layers += softmax || spec.mixer == MixerKind::kMla;
    }
  };
  if (pp == 1) {
    add_layers(out[0], 0, layers);
  } else {
    const std::vector<int64_t> chunks = ChunkLayerCounts(l, layers);
    int64_t first = 0;
    for (size_t k = 0; k < chunks.size(); ++k) {
      const int64_t rank = RankOfChunk(l, static_cast<int64_t>(k));
      add_layers(out[static_cast<size_t>(rank)], first, chunks[k]);
      first += chunks[k];
    }
  }
  out[0].embedding = true;
  out[static_cast<size_t>(pp == 1 ? 0 : l.output_stage())].output = true;
  if (l.pipeline_layout != nullptr && pp > 1) {
    const std::vector<int64_t>& mtp = l.pipeline_layout->mtp_layers;
    for (size_t k = 0; k < mtp.size(); ++k) {
      out[static_cast<size_t>(RankOfChunk(l, static_cast<int64_t>(k)))].mtp_layers += mtp[k];
    }
  } else {
    // megatron-core builds the MTP block after the decoder, on the stage with the output layer.
    out[static_cast<size_t>(pp == 1 ? 0 : l.output_stage())].mtp_layers = mtp_layers;
  }
  return out;
}

std::string CompositionText(const StageComposition& s, const LayerKinds& kinds) {
  bool mixers_differ = false, ffns_differ = false;
  for (const LayerSpec& k : kinds.kinds) {
    mixers_differ |= k.mixer != kinds.kinds[0].mixer;
    ffns_differ |= k.ffn != kinds.kinds[0].ffn;
  }
  std::vector<std::string> parts;
  for (size_t i = 0; i < kinds.kinds.size(); ++i) {
    const int64_t n = s.kind_layers[i];
    if (n == 0) continue;
    const LayerSpec& k = kinds.kinds[i];
    if (mixers_differ && ffns_differ) {
      parts.push_back(fmt::format("{} {} {}", n, MixerWords(k.mixer), FfnWords(k.ffn)));
    } else if (mixers_differ) {
      parts.push_back(fmt::format("{} {}", n, MixerWords(k.mixer)));
    } else if (ffns_differ) {
      parts.push_back(fmt::format("{} {}", n, FfnWords(k.ffn)));
    } else {
      parts.push_back(fmt::format("{}", n));
    }
  }
  std::string text =
      parts.empty() ? std::string("no decoder layers")
                    : fmt::format("{} layer{}", fmt::join(parts, " + "), s.layers == 1 ? "" : "s");
  if (s.embedding) text += ", the embedding";
  if (s.mtp_layers > 0)
    text += fmt::format(", {} MTP layer{}", s.mtp_layers, s.mtp_layers == 1 ? "" : "s");
  if (s.output) text += ", the output layer";
  return text;
}

}  // namespace strata
