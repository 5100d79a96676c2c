#include "strata/memory/oom_advice.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>

namespace strata {
namespace {

struct Candidate {
  std::string change;
  std::string cost;
  std::function<bool(JobSpec&)> apply;  // false when it does not apply to this job
};

std::vector<Candidate> Candidates() {
  using G = RecomputeGranularity;
  return {
      {"bf16 gradient buffer", "none measurable (the reference case's own fix)",
       [](JobSpec& s) {
         if (s.grad_dtype == DType::kBf16) return false;
         s.grad_dtype = DType::kBf16;
         return true;
       }},
      {"distributed optimizer", "a reduce-scatter and all-gather instead of an all-reduce",
       [](JobSpec& s) {
         if (s.sharding.shards_optimizer()) return false;
         s.optimizer.distributed = true;
         s.sharding.mode = ShardingMode::kZero1;
         return true;
       }},
      {"fused cross entropy", "none (same loss)",
       [](JobSpec& s) {
         if (s.cross_entropy == CrossEntropyImpl::kFused) return false;
         s.cross_entropy = CrossEntropyImpl::kFused;
         return true;
       }},
      {"twice the EP", "a wider all-to-all",
       [](JobSpec& s) {
         s.layout.ep *= 2;
         return true;
       }},
      {"selective recompute", "a few percent more compute",
       [](JobSpec& s) {
         if (s.recompute.granularity != G::kNone) return false;
         s.recompute.granularity = G::kSelective;
         return true;
       }},
      {"half the micro batch", "smaller GEMMs, more accumulation steps",
       [](JobSpec& s) {
         if (s.micro_batch == 1) return false;
         s.micro_batch /= 2;
         return true;
       }},
      {"full recompute (uniform, 1 layer)", "about a third more compute",
       [](JobSpec& s) {
         if (s.recompute.granularity == G::kFull) return false;
         s.recompute = {G::kFull, RecomputeMethod::kUniform, 1, {}, {}};
         s.activation_offload = {};  // megatron-core refuses offload with recompute
         return true;
       }},
      {"twice the TP", "two collectives per layer; half the DP",
       [](JobSpec& s) {
         s.layout.tp *= 2;
         s.layout.dp = 0;
         // megatron-core requires sequence parallelism with TP and EP; it is the right choice
         // with TP in any case (the norms' activations are sharded too).
         s.layout.sequence_parallel = true;
         return true;
       }},
      {"twice the PP", "pipeline bubbles; half the DP",
       [](JobSpec& s) {
         s.layout.pp *= 2;
         s.layout.dp = 0;
         // A pipeline layout fixes the number of virtual stages: twice the PP halves the VPP,
         // as megatron-core derives it from the layout (none when VPP is already 1).
         if (const auto& layout = s.layout.pipeline_layout) {
           const auto stages = static_cast<int64_t>(layout->decoder_layers.size());
           if (stages % s.layout.pp != 0) return false;
           s.layout.vpp = stages / s.layout.pp;
         }
         return true;
       }},
      {"twice the CP", "ring attention traffic; half the DP",
       [](JobSpec& s) {
         s.layout.cp *= 2;
         s.layout.dp = 0;
         return true;
       }},
  };
}

/// The --set arguments that turn `from` into `to`.
std::vector<std::string> Overrides(const JobSpec& from, const JobSpec& to) {
  std::vector<std::string> out;
  auto add_int = [&](const char* key, int64_t a, int64_t b) {
    if (a != b) out.push_back(fmt::format("{}={}", key, b));
  };
  add_int("parallel.tp", from.layout.tp, to.layout.tp);
  add_int("parallel.pp", from.layout.pp, to.layout.pp);
  add_int("parallel.vpp", from.layout.vpp, to.layout.vpp);
  add_int("parallel.cp", from.layout.cp, to.layout.cp);
  add_int("parallel.ep", from.layout.ep, to.layout.ep);
  add_int("parallel.dp", from.layout.dp, to.layout.dp);
  add_int("batch.micro_batch", from.micro_batch, to.micro_batch);
  if (from.layout.sequence_parallel != to.layout.sequence_parallel) {
    out.push_back(fmt::format("parallel.sequence_parallel={}", to.layout.sequence_parallel));
  }
  if (from.grad_dtype != to.grad_dtype) {
    out.push_back(fmt::format("precision.grads={}", DTypeName(to.grad_dtype)));
  }
  // The distributed-optimizer fix: optimizer.distributed sets sharding.mode zero1 when the job
  // has no sharding section (a job that states `sharding.mode: none` gets a contradiction error).
  if (from.optimizer.distributed != to.optimizer.distributed) {
    out.push_back(fmt::format("optimizer.distributed={}", to.optimizer.distributed));
  }
  if (from.cross_entropy != to.cross_entropy) {
    out.push_back(fmt::format("loss.cross_entropy={}", CrossEntropyImplName(to.cross_entropy)));
  }
  if (from.recompute.granularity != to.recompute.granularity) {
    out.push_back(fmt::format("recompute.granularity={}",
                              RecomputeGranularityName(to.recompute.granularity)));
  }
  return out;
}

}  // namespace

std::vector<MemoryFix> SuggestMemoryFixes(const Job& job, const MemoryConstants& constants,
                                          size_t max_fixes, const RunnableCheck& runnable) {
  const std::vector<Candidate> candidates = Candidates();
  // Applies the candidates `which` in order; nothing when one does not apply or the layout
  // breaks a rule.
  auto evaluate = [&](const std::vector<size_t>& which) -> std::optional<MemoryFix> {
    Job changed = job;
    std::string change;
    std::string cost;
    for (size_t i : which) {
      if (!candidates[i].apply(changed.spec)) return std::nullopt;
      change += (change.empty() ? "" : " + ") + candidates[i].change;
      cost += (cost.empty() ? "" : "; ") + candidates[i].cost;
    }
    // Only what validation accepts is suggested: the same rules as for the user's own job, and
    // what the job's framework can run.
    if (!RederiveJob(changed).ok()) return std::nullopt;
    if (runnable && !runnable(changed.spec)) return std::nullopt;
    const MemoryLedger ledger = ComputeLedger(changed, constants);
    return MemoryFix{change, Overrides(job.spec, changed.spec), cost, ledger.Peak(), ledger.fits};
  };
  std::vector<MemoryFix> fits, helps;
  std::vector<size_t> helpful;
  const Bytes current = ComputeLedger(job, constants).Peak();
  for (size_t i = 0; i < candidates.size(); ++i) {
    auto fix = evaluate({i});
    if (!fix) continue;
    if (fix->fits) {
      fits.push_back(std::move(*fix));
    } else if (fix->peak < current) {
      helpful.push_back(i);
      helps.push_back(std::move(*fix));
    }
  }
  // No single change fits: the cheapest pair of helpful changes that does (pairs in order of
  // the cheaper change's cost, then the other's).
  for (size_t a = 0; fits.empty() && a < helpful.size(); ++a) {
    for (size_t b = a + 1; b < helpful.size(); ++b) {
      auto pair = evaluate({helpful[a], helpful[b]});
      if (pair && pair->fits) {
        fits.push_back(std::move(*pair));
        break;
      }
    }
  }
  // Fitting changes in order of cost; then the ones that help most, for combining.
  std::sort(helps.begin(), helps.end(),
            [](const MemoryFix& x, const MemoryFix& y) { return x.peak < y.peak; });
  fits.insert(fits.end(), helps.begin(), helps.end());
  if (fits.size() > max_fixes) fits.resize(max_fixes);
  return fits;
}

}  // namespace strata
