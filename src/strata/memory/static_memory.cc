#include "strata/memory/static_memory.h"

#include "strata/core/strings.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace strata {
namespace {

struct KindShare {
  int64_t params = 0;  // per GPU
  std::string how;     // how the full count was sharded
};

bool IsFrozen(const Job& job, ModuleKind kind) {
  const auto name = std::string(ModuleKindName(kind));
  return std::find(job.spec.frozen.begin(), job.spec.frozen.end(), name) != job.spec.frozen.end();
}

std::string GbAndGib(Bytes b) { return fmt::format("{} ({})", FormatGB(b), FormatGiB(b)); }

}  // namespace

std::vector<int64_t> StageLayerIndices(const Job& job, int64_t stage) {
  const ParallelLayout& l = job.spec.layout;
  const auto layers = static_cast<int64_t>(job.model.layers.size());
  const int64_t per_chunk = layers / (l.pp * l.vpp);
  std::vector<int64_t> indices;
  for (int64_t chunk = 0; chunk < l.vpp; ++chunk) {
    const int64_t first = (chunk * l.pp + stage) * per_chunk;
    for (int64_t i = first; i < first + per_chunk; ++i) indices.push_back(i);
  }
  return indices;
}

StaticMemory ComputeStaticMemory(const Job& job, const ParamBreakdown& params, int64_t stage) {
  const ParallelLayout& l = job.spec.layout;
  const bool first = stage == 0;
  const bool last = stage == l.pp - 1;
  std::array<KindShare, kModuleKindCount> share{};
  auto at = [&](ModuleKind k) -> KindShare& { return share[static_cast<size_t>(k)]; };

  ModuleParams layer_sum;
  const auto stage_layers = StageLayerIndices(job, stage);
  for (int64_t i : stage_layers) layer_sum += params.layers[static_cast<size_t>(i)].modules;
  const std::string of_layers = fmt::format("{} of {} layers", stage_layers.size(),
                                            params.layers.size());
  for (ModuleKind k : {ModuleKind::kAttention, ModuleKind::kLinearAttention,
                       ModuleKind::kDenseMlp, ModuleKind::kSharedExperts}) {
    at(k) = {layer_sum[k] / l.tp, fmt::format("{}: {} / TP {}", of_layers,
                                              GroupDigits(static_cast<double>(layer_sum[k])), l.tp)};
  }
  at(ModuleKind::kRouter) = {layer_sum[ModuleKind::kRouter],
                             fmt::format("{}, replicated over TP", of_layers)};
  const int64_t norms = layer_sum[ModuleKind::kNorms] + (last ? params.final_norm : 0);
  at(ModuleKind::kNorms) = {norms, fmt::format("{}{}, replicated over TP", of_layers,
                                               last ? " + final norm" : "")};
  const int64_t expert_ways = l.ep * l.etp;
  at(ModuleKind::kRoutedExperts) = {
      layer_sum[ModuleKind::kRoutedExperts] / expert_ways,
      fmt::format("{}: {} / (EP {} x ETP {})", of_layers,
                  GroupDigits(static_cast<double>(layer_sum[ModuleKind::kRoutedExperts])), l.ep,
                  l.etp)};
  // The vocabulary is padded so that every TP rank holds an equal slice.
  const int64_t padded_vocab = PaddedVocab(job.model.vocab_size, l.tp);
  const int64_t vocab_slice = job.model.hidden_size * padded_vocab / l.tp;
  const std::string vocab_how = fmt::format("{} hidden x {} vocab (padded) / TP {}",
                                            job.model.hidden_size, GroupDigits(static_cast<double>(padded_vocab)), l.tp);
  if (first) at(ModuleKind::kEmbedding) = {vocab_slice, vocab_how};
  if (last && (!job.model.tie_word_embeddings || l.pp > 1)) {
    at(ModuleKind::kHead) = {vocab_slice, job.model.tie_word_embeddings
                                              ? vocab_how + ", a copy of the tied embedding"
                                              : vocab_how};
  }
  if (first && params.vision.total > 0) {
    at(ModuleKind::kVision) = {params.vision.total,
                               "the whole vision tower on the first stage, replicated over TP"};
  }
  int64_t mtp_expert = 0;
  if (last && job.spec.mtp && params.mtp.total > 0) {
    mtp_expert = params.mtp.expert / expert_ways;
    at(ModuleKind::kMtp) = {(params.mtp.total - params.mtp.expert) / l.tp + mtp_expert,
                            fmt::format("non-expert / TP {} + experts / (EP x ETP {})", l.tp,
                                        expert_ways)};
  }

  StaticMemory out;
  const int64_t param_bytes = DTypeBytes(job.spec.param_dtype);
  for (ModuleKind k : AllModuleKinds()) {
    const KindShare& s = at(k);
    if (s.params == 0) continue;
    const bool frozen = IsFrozen(job, k);
    out.params += s.params;
    const bool expert = k == ModuleKind::kRoutedExperts;
    const double expert_part = expert ? static_cast<double>(s.params)
                               : k == ModuleKind::kMtp ? static_cast<double>(mtp_expert) : 0.0;
    if (!frozen) {
      out.trainable_params += s.params;
      out.expert_trainable += expert_part;
      out.dense_trainable += static_cast<double>(s.params) - expert_part;
    }
    const Bytes bytes = Bytes::Count(static_cast<double>(param_bytes * s.params));
    out.weights.push_back(
        {ItemKind::kWeights, fmt::format("weights: {}", ModuleKindName(k)), bytes,
         fmt::format("{} B x {} params ({}) = {}", param_bytes, GroupDigits(static_cast<double>(s.params)), s.how,
                     GbAndGib(bytes)),
         frozen ? "frozen: no gradient or optimizer state" : ""});
  }

  const int64_t grad_bytes = DTypeBytes(job.spec.grad_dtype);
  out.gradients.kind = ItemKind::kGradients;
  out.gradients.name = fmt::format("gradient buffer ({})", DTypeName(job.spec.grad_dtype));
  out.gradients.bytes = Bytes::Count(static_cast<double>(grad_bytes * out.trainable_params));
  out.gradients.formula = fmt::format("{} B x {} trainable params = {}", grad_bytes,
                                      GroupDigits(static_cast<double>(out.trainable_params)),
                                      GbAndGib(out.gradients.bytes));

  // The distributed optimizer shards dense states over DP x CP and expert states over the
  // expert-data-parallel group, which is smaller by EP x ETP (the reference case: 40 vs 5).
  const OptimizerSpec& opt = job.spec.optimizer;
  const int64_t dense_ways = opt.distributed ? l.dp * l.cp : 1;
  const int64_t expert_dp = opt.distributed ? l.expert_dp() : 1;
  const double shard = out.dense_trainable / static_cast<double>(dense_ways) +
                       out.expert_trainable / static_cast<double>(expert_dp);
  const std::string shard_text =
      fmt::format("({} dense / {} + {} expert / {})", GroupDigits(out.dense_trainable),
                  opt.distributed ? fmt::format("DP x CP {}", dense_ways) : "1 (not sharded)",
                  GroupDigits(out.expert_trainable),
                  opt.distributed ? fmt::format("expert-DP {}", expert_dp) : "1 (not sharded)");
  const bool needs_master = job.spec.param_dtype != opt.master_dtype;
  const int64_t master_bytes = needs_master ? DTypeBytes(opt.master_dtype) : 0;
  out.master_weights = {ItemKind::kOptimizer,
                        fmt::format("optimizer: master weights ({})", DTypeName(opt.master_dtype)),
                        Bytes::Count(static_cast<double>(master_bytes) * shard), "",
                        "allocated when the optimizer is built"};
  out.master_weights.formula =
      needs_master ? fmt::format("{} B x {} = {}", master_bytes, shard_text,
                                 GbAndGib(out.master_weights.bytes))
                   : "0: the parameters are already the master copy";
  const int64_t moment_bytes = 2 * DTypeBytes(opt.moment_dtype);
  out.moments = {ItemKind::kOptimizer,
                 fmt::format("optimizer: Adam moments ({})", DTypeName(opt.moment_dtype)),
                 Bytes::Count(static_cast<double>(moment_bytes) * shard), "",
                 "allocated lazily at the first optimizer step"};
  out.moments.formula = fmt::format("2 x {} B x {} = {}", DTypeBytes(opt.moment_dtype), shard_text,
                                    GbAndGib(out.moments.bytes));
  // With bf16 gradients the optimizer copies its gradient shard to the master dtype.
  const bool copies_grads = job.spec.grad_dtype != opt.master_dtype;
  const int64_t copy_bytes = copies_grads ? DTypeBytes(opt.master_dtype) : 0;
  out.step_transient = {ItemKind::kOptimizer, "optimizer step: gradient shard in master dtype",
                        Bytes::Count(static_cast<double>(copy_bytes) * shard), "",
                        "only during optimizer.step()"};
  out.step_transient.formula =
      copies_grads ? fmt::format("{} B x {} = {}", copy_bytes, shard_text,
                                 GbAndGib(out.step_transient.bytes))
                   : "0: the gradient buffer is already in the master dtype";
  return out;
}

}  // namespace strata
