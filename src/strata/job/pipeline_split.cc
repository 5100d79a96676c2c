#include "strata/job/pipeline_split.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <numeric>
#include <string>

namespace strata {
namespace {

Error SplitError(const char* field, std::string message, std::string hint) {
  return InvalidInput(std::move(message)).InField(field).WithHint(std::move(hint));
}

/// More layer characters than any model has: a bound on what a layout string may unroll to.
constexpr size_t kMaxUnrolledLayout = 100000;

/// "x*12" and "(ab|)*3" unrolled the way megatron-core's parse_str_to_list does: first every
/// parenthesised group followed by *n (left to right, no nesting), then every single character
/// followed by *n.
Result<std::string> UnrollRepeats(std::string_view text, bool groups) {
  std::string out;
  size_t i = 0;
  auto count_at = [&](size_t star, size_t& end) -> int64_t {
    if (star >= text.size() || text[star] != '*') return -1;
    end = star + 1;
    int64_t n = 0;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) {
      n = std::min<int64_t>(n * 10 + (text[end] - '0'), kMaxUnrolledLayout + 1);
      ++end;
    }
    return end == star + 1 ? -1 : n;
  };
  auto too_long = [&](size_t more) { return out.size() + more > kMaxUnrolledLayout; };
  while (i < text.size()) {
    size_t end = 0;
    if (groups && text[i] == '(') {
      const size_t close = text.find(')', i + 1);
      const int64_t n = close == std::string_view::npos ? -1 : count_at(close + 1, end);
      if (n >= 0 && close > i + 1) {
        if (too_long(static_cast<size_t>(n) * (close - i - 1))) {
          return InvalidInput("pipeline layout unrolls to too many layers");
        }
        for (int64_t k = 0; k < n; ++k) out.append(text.substr(i + 1, close - i - 1));
        i = end;
        continue;
      }
    }
    if (!groups) {
      const int64_t n = count_at(i + 1, end);
      if (n >= 0) {
        if (too_long(static_cast<size_t>(n))) {
          return InvalidInput("pipeline layout unrolls to too many layers");
        }
        out.append(static_cast<size_t>(n), text[i]);
        i = end;
        continue;
      }
    }
    out.push_back(text[i]);
    ++i;
  }
  return out;
}

/// Decoder layers of pipeline stage `stage` under megatron-core's rules (rank totals; VPP
/// chunks divide them): the accounted split, the given first/last counts with the rest shared
/// evenly, or layers / PP. megatron/core/transformer/transformer_block.py,
/// get_num_layers_to_build (NVIDIA/Megatron-LM d98e8a6).
int64_t MegatronStageLayers(const ParallelLayout& l, int64_t layers, int64_t stage) {
  const bool first = stage == 0;
  const bool last = stage == l.pp - 1;
  if (l.account_for_embedding || l.account_for_loss) {
    const int64_t share = (layers + l.account_for_embedding + l.account_for_loss) / l.pp;
    return share - ((first && l.account_for_embedding) ? 1 : 0) -
           ((last && l.account_for_loss) ? 1 : 0);
  }
  if (l.first_stage_layers == 0 && l.last_stage_layers == 0) return layers / l.pp;
  if (first && l.first_stage_layers > 0) return l.first_stage_layers;
  if (last && l.last_stage_layers > 0) return l.last_stage_layers;
  const int64_t others = l.pp - (l.first_stage_layers > 0) - (l.last_stage_layers > 0);
  const int64_t rest = layers - l.first_stage_layers - l.last_stage_layers;
  return others > 0 ? rest / others : 0;
}

/// The splits whose rank totals MegatronStageLayers gives and whose chunks are looped.
bool RankTotalsSuffice(const ParallelLayout& l) {
  return l.pipeline_layout == nullptr && l.stage_split == StageSplitRule::kMegatron &&
         !l.v_shaped();
}

int64_t ScheduleChunks(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::kDefault:
    case PipelineSchedule::kZeroBubble:
    case PipelineSchedule::kInterleaved1F1B:
      return 0;  // any (interleaved: at least 2)
    case PipelineSchedule::k1F1B:
    case PipelineSchedule::kGpipe:
      return 1;
    case PipelineSchedule::kZbv:
    case PipelineSchedule::kDualPipeV:
      return 2;
  }
  return 0;
}

Status CheckSchedule(const ParallelLayout& l) {
  const PipelineSchedule s = l.schedule();
  if (l.pp_schedule != PipelineSchedule::kDefault && l.pp == 1) {
    return SplitError("parallel.pp_schedule", "a pipeline schedule needs PP > 1",
                      "remove parallel.pp_schedule or raise parallel.pp");
  }
  const int64_t chunks = ScheduleChunks(s);
  if (chunks == 1 && l.vpp != 1) {
    return SplitError("parallel.pp_schedule",
                      fmt::format("this schedule runs one stage per rank, and VPP is {}", l.vpp),
                      "set parallel.vpp: 1, or pp_schedule: interleaved_1f1b");
  }
  if (chunks == 2 && l.vpp != 2) {
    return SplitError("parallel.pp_schedule",
                      fmt::format("V schedules (zbv, dualpipev) run two virtual stages per rank "
                                  "(torchtitan's rule), and VPP is {}",
                                  l.vpp),
                      "set parallel.vpp: 2");
  }
  if (s == PipelineSchedule::kInterleaved1F1B && l.vpp < 2) {
    return SplitError("parallel.pp_schedule", "interleaved 1F1B needs VPP >= 2",
                      "set parallel.vpp: 2 or more");
  }
  return OkStatus();
}

Status CheckMegatronCounts(const ParallelLayout& l, int64_t layers) {
  const char* field =
      l.first_stage_layers > 0 ? "parallel.first_stage_layers" : "parallel.last_stage_layers";
  if (l.pp < 2)
    return SplitError(field, "first/last stage layer counts need PP > 1", "remove them");
  const int64_t given = l.first_stage_layers + l.last_stage_layers;
  const int64_t others = l.pp - (l.first_stage_layers > 0) - (l.last_stage_layers > 0);
  const int64_t rest = layers - given;
  if (rest < others || (others == 0 && rest != 0) || (others > 0 && rest % others != 0)) {
    return SplitError(
        field,
        fmt::format("{} layers minus first {} and last {} leave {} for the {} other stage(s), "
                    "which must share them evenly (at least one layer each)",
                    layers, l.first_stage_layers, l.last_stage_layers, rest, others),
        others == 1 || (l.pp == 2 && l.last_stage_layers > 0)
            ? fmt::format("with PP {}: first + last = {}", l.pp, layers)
            : "choose counts that leave a multiple of the other stages");
  }
  // megatron-core's TransformerConfig.__post_init__ (transformer_config.py): with VPP every
  // stage's count divides into its chunks.
  if (l.vpp > 1) {
    for (int64_t s = 0; s < l.pp; ++s) {
      const int64_t n = MegatronStageLayers(l, layers, s);
      if (n % l.vpp != 0) {
        return SplitError(field,
                          fmt::format("stage {} holds {} layers, which VPP {} cannot split into "
                                      "equal chunks (megatron-core requires it)",
                                      s, n, l.vpp),
                          "choose first/last counts (and a middle share) divisible by VPP, or "
                          "give parallel.pipeline_layout");
      }
    }
  }
  return OkStatus();
}

Status CheckAccounted(const ParallelLayout& l, int64_t layers) {
  const char* field =
      l.account_for_embedding ? "parallel.account_for_embedding" : "parallel.account_for_loss";
  if (l.pp < 2) {
    return SplitError(field, "accounting the embedding or loss as a layer needs PP > 1",
                      "remove it");
  }
  const int64_t extra = (l.account_for_embedding ? 1 : 0) + (l.account_for_loss ? 1 : 0);
  const int64_t total = layers + extra;
  // Each chunk keeps at least one decoder layer besides the embedding or the loss.
  if (total % l.pp != 0 || total / l.pp < 2 * l.vpp || (total / l.pp) % l.vpp != 0) {
    return SplitError(field,
                      fmt::format("{} layers + {} accounted = {} must split evenly into PP {} "
                                  "stages of VPP {} chunks of at least 2",
                                  layers, extra, total, l.pp, l.vpp),
                      "choose a PP that divides that sum, or first/last stage layer counts");
  }
  return OkStatus();
}

Status CheckLayoutString(const ParallelLayout& l, int64_t layers, int64_t mtp_layers) {
  const PipelineLayoutString& p = *l.pipeline_layout;
  const char* field = "parallel.pipeline_layout";
  const int64_t decoders = std::accumulate(p.decoder_layers.begin(), p.decoder_layers.end(), 0L);
  const int64_t mtp = std::accumulate(p.mtp_layers.begin(), p.mtp_layers.end(), 0L);
  if (decoders != layers) {
    return SplitError(field,
                      fmt::format("'{}' places {} decoder layers ('t'); the model has {}", p.text,
                                  decoders, layers),
                      "one 't' per decoder layer");
  }
  if (mtp != mtp_layers) {
    return SplitError(
        field,
        fmt::format("'{}' places {} MTP layers ('m'); the job builds {}", p.text, mtp, mtp_layers),
        mtp_layers == 0 ? "remove the 'm' or set mtp: true" : "place the MTP block with 'm'");
  }
  // Against the layout's PP and VPP now, not those it was parsed with: a layout changed after
  // reading (an advice or plan candidate) must still have PP x VPP stages, or the stage tables
  // built from it are read past their end.
  const auto stages = static_cast<int64_t>(p.decoder_layers.size());
  if (l.pp < 1 || stages % l.pp != 0) {
    return SplitError(
        "parallel.pp",
        fmt::format("the pipeline layout has {} virtual stages, not a multiple of PP {}", stages,
                    l.pp),
        "choose a PP that divides the layout's stage count, or another layout");
  }
  if (l.vpp != stages / l.pp) {
    return SplitError("parallel.vpp",
                      fmt::format("the pipeline layout has {} virtual stages per rank ({} / PP "
                                  "{}), VPP is {}",
                                  stages / l.pp, stages, l.pp, l.vpp),
                      fmt::format("set parallel.vpp: {}", stages / l.pp));
  }
  return OkStatus();
}

Status CheckTorchtitanSplit(const ParallelLayout& l, int64_t layers) {
  // torchtitan/distributed/pipeline_parallel.py, _generate_llm_fqn_per_model_part (pytorch/
  // torchtitan b5bcd76): every virtual stage gets at least one effective layer, and the
  // embedding's and output's weights (1 each by default) are at most the smallest share.
  const int64_t stages = l.pp * l.vpp;
  const int64_t effective = layers + 2;
  if (stages > effective || effective / stages < 1) {
    return SplitError("parallel.stage_split",
                      fmt::format("torchtitan cannot deal {} layers + embedding + output to {} "
                                  "virtual stages",
                                  layers, stages),
                      "lower PP or VPP");
  }
  return OkStatus();
}

}  // namespace

Result<std::shared_ptr<const PipelineLayoutString>> ParsePipelineLayout(std::string_view text,
                                                                        int64_t pp) {
  auto error = [&](std::string message, std::string hint) {
    return SplitError("parallel.pipeline_layout", std::move(message), std::move(hint));
  };
  std::string cleaned(text);
  std::erase(cleaned, ',');
  auto groups = UnrollRepeats(cleaned, true);
  if (!groups.ok()) return error(groups.error().message, "at most 100,000 layer characters");
  auto unrolled_or = UnrollRepeats(*groups, false);
  if (!unrolled_or.ok()) {
    return error(unrolled_or.error().message, "at most 100,000 layer characters");
  }
  const std::string& unrolled = *unrolled_or;
  auto out = std::make_shared<PipelineLayoutString>();
  out->text = std::string(text);
  out->decoder_layers.push_back(0);
  out->mtp_layers.push_back(0);
  int64_t embeddings = 0, losses = 0;
  for (size_t i = 0; i < unrolled.size(); ++i) {
    const char c = unrolled[i];
    switch (c) {
      case '|':
        out->decoder_layers.push_back(0);
        out->mtp_layers.push_back(0);
        break;
      case 't':
        if (std::any_of(out->mtp_layers.begin(), out->mtp_layers.end(),
                        [](int64_t n) { return n > 0; })) {
          return error(fmt::format("'{}': a decoder layer after the MTP block", text),
                       "decoder layers come before MTP layers (megatron-core)");
        }
        ++out->decoder_layers.back();
        break;
      case 'm':
        ++out->mtp_layers.back();
        break;
      case 'E':
        if (i != 0) {
          return error(fmt::format("'{}': the embedding 'E' must come first", text),
                       "start the layout with E");
        }
        ++embeddings;
        break;
      case 'L':
        if (i + 1 != unrolled.size()) {
          return error(fmt::format("'{}': the loss 'L' must come last", text),
                       "end the layout with L");
        }
        ++losses;
        break;
      default:
        return error(fmt::format("'{}': unknown layer character '{}'", text, c),
                     "known layer characters: E (embedding), t (decoder), m (MTP), L (loss), "
                     "| (end of a virtual stage), (..)*n and x*n (repeats)");
    }
  }
  if (embeddings != 1 || losses != 1) {
    return error(
        fmt::format("'{}' must start with one embedding 'E' and end with one loss 'L'", text),
        "e.g. Et*3|(tt|)*29,m|L (megatron-core's DeepSeek-V3 example, PP 16 VPP 2)");
  }
  const auto stages = static_cast<int64_t>(out->decoder_layers.size());
  if (pp < 1 || stages % pp != 0) {
    return error(
        fmt::format("'{}' has {} virtual stages, not a multiple of PP {}", text, stages, pp),
        "one '|'-separated stage per (rank, virtual stage): PP x VPP of them");
  }
  out->virtual_stages_per_rank = stages / pp;
  return std::shared_ptr<const PipelineLayoutString>(std::move(out));
}

std::vector<int64_t> ChunkLayerCounts(const ParallelLayout& l, int64_t layers) {
  if (l.pipeline_layout) return l.pipeline_layout->decoder_layers;
  const int64_t stages = l.pp * l.vpp;
  std::vector<int64_t> counts(static_cast<size_t>(stages), 0);
  if (l.stage_split == StageSplitRule::kTorchtitan && stages > 1) {
    // torchtitan's _generate_llm_fqn_per_model_part with its default first/last "less layers"
    // of 1 (torchtitan/config/configs.py, pipeline_parallel_first/last_stage_less_layers):
    // (layers + 2) effective layers over the virtual stages, the remainder one each to the
    // earliest; the first stage gives one slot to the embedding, the last one to the output.
    const int64_t effective = layers + 2;
    for (int64_t k = 0; k < stages; ++k) {
      counts[static_cast<size_t>(k)] = effective / stages + (k < effective % stages ? 1 : 0) -
                                       (k == 0 ? 1 : 0) - (k == stages - 1 ? 1 : 0);
    }
    return counts;
  }
  // megatron-core: every chunk of rank r holds its rank's total / VPP, except that the
  // accounted embedding (loss) takes a slot of the first (last) virtual stage
  // (get_num_layers_to_build and get_transformer_layer_offset, Megatron-LM d98e8a6).
  const bool accounted = l.account_for_embedding || l.account_for_loss;
  for (int64_t k = 0; k < stages; ++k) {
    const int64_t rank = k % l.pp;
    int64_t n = accounted ? (layers + l.account_for_embedding + l.account_for_loss) / stages
                          : MegatronStageLayers(l, layers, rank) / l.vpp;
    if (k == 0 && l.account_for_embedding) --n;
    if (k == stages - 1 && l.account_for_loss) --n;
    counts[static_cast<size_t>(k)] = n;
  }
  return counts;
}

int64_t RankOfChunk(const ParallelLayout& l, int64_t chunk) {
  if (l.v_shaped()) return chunk < l.pp ? chunk : 2 * l.pp - 1 - chunk;
  return chunk % l.pp;
}

std::vector<int64_t> ChunksOfRank(const ParallelLayout& l, int64_t rank) {
  if (l.v_shaped()) return {rank, 2 * l.pp - 1 - rank};
  std::vector<int64_t> chunks;
  for (int64_t c = 0; c < l.vpp; ++c) chunks.push_back(rank + c * l.pp);
  return chunks;
}

std::vector<int64_t> StageLayerCounts(const ParallelLayout& l, int64_t layers) {
  std::vector<int64_t> counts(static_cast<size_t>(l.pp), 0);
  if (RankTotalsSuffice(l)) {
    for (int64_t s = 0; s < l.pp; ++s) {
      counts[static_cast<size_t>(s)] = MegatronStageLayers(l, layers, s);
    }
    return counts;
  }
  const std::vector<int64_t> chunks = ChunkLayerCounts(l, layers);
  for (size_t k = 0; k < chunks.size(); ++k) {
    counts[static_cast<size_t>(RankOfChunk(l, static_cast<int64_t>(k)))] += chunks[k];
  }
  return counts;
}

StageExtremes StageLayerExtremes(const ParallelLayout& l, int64_t layers) {
  if (l.pp <= 1) return {layers, 0};
  if (RankTotalsSuffice(l)) {
    // The stages between the first and the last all hold the same count.
    const int64_t first = MegatronStageLayers(l, layers, 0);
    const int64_t middle = l.pp > 2 ? MegatronStageLayers(l, layers, 1) : first;
    return {MegatronStageLayers(l, layers, l.pp - 1), std::max(first, middle)};
  }
  const std::vector<int64_t> counts = StageLayerCounts(l, layers);
  StageExtremes out;
  for (int64_t s = 0; s < l.pp; ++s) {
    const int64_t n = counts[static_cast<size_t>(s)];
    if (s == l.output_stage()) {
      out.last = n;
    } else {
      out.max_other = std::max(out.max_other, n);
    }
  }
  return out;
}

Status CheckPipelineSplit(const ParallelLayout& l, int64_t layers, int64_t mtp_layers) {
  STRATA_RETURN_IF_ERROR(CheckSchedule(l));
  const bool counts = l.first_stage_layers > 0 || l.last_stage_layers > 0;
  const bool accounted = l.account_for_embedding || l.account_for_loss;
  const bool titan = l.stage_split == StageSplitRule::kTorchtitan;
  const bool string = l.pipeline_layout != nullptr;
  if (counts + accounted + titan + string > 1) {
    const char* field = string   ? "parallel.pipeline_layout"
                        : titan  ? "parallel.stage_split"
                        : counts ? "parallel.first_stage_layers"
                                 : "parallel.account_for_embedding";
    return SplitError(field,
                      "megatron-core takes one of the first/last stage layer counts, the "
                      "account-for-embedding/loss split or the pipeline layout, not both; "
                      "torchtitan's split is a rule of its own",
                      "keep one of parallel.first_stage_layers / last_stage_layers, "
                      "account_for_embedding / account_for_loss, pipeline_layout, "
                      "stage_split: torchtitan");
  }
  if (string) return CheckLayoutString(l, layers, mtp_layers);
  if (l.pp < 2 && titan) {
    return SplitError("parallel.stage_split", "torchtitan's split needs PP > 1",
                      "remove parallel.stage_split");
  }
  if (titan) return CheckTorchtitanSplit(l, layers);
  if (accounted) return CheckAccounted(l, layers);
  if (counts) return CheckMegatronCounts(l, layers);
  return OkStatus();
}

}  // namespace strata
