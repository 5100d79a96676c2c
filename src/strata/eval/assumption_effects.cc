#include "strata/eval/assumption_effects.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>

#include "strata/core/strings.h"
#include "strata/eval/evaluation.h"
#include "strata/sim/framework_profile.h"

namespace strata {
namespace {

// The step of `job` after `change`; the job's other facts stay as they were.
Result<Seconds> StepWith(const Workspace& workspace, ResolvedJob job,
                         const std::function<void(ResolvedJob&)>& change) {
  change(job);
  STRATA_RETURN_IF_ERROR(RederiveJob(job));
  STRATA_ASSIGN_OR_RETURN(Evaluation e, EvaluateJob(workspace, job, {.depth = EvalDepth::kStep}));
  return e.step->step;
}

std::string GdnKernelWords(const std::string& kernel) {
  return fmt::format("{}{}", GdnKernelName(kernel),
                     kernel == "torch" ? " (flash-linear-attention missing)" : "");
}

}  // namespace

Result<std::vector<AssumptionEffect>> AssumptionEffects(const Workspace& workspace,
                                                        const ResolvedJob& job,
                                                        const StepSetup& setup,
                                                        const StepResult& result) {
  std::vector<AssumptionEffect> out;
  auto add = [&](std::string assumption, std::string alternative, std::string set,
                 const std::function<void(ResolvedJob&)>& change) -> Status {
    STRATA_ASSIGN_OR_RETURN(Seconds step, StepWith(workspace, job, change));
    out.push_back(
        {std::move(assumption), std::move(alternative), std::move(set), step, step - result.step});
    return OkStatus();
  };
  const FrameworkProfile& fw = setup.tables.framework;
  if (setup.tables.gdn_layers > 0 && fw.on && fw.gdn_kernel_assumed) {
    // megatron-core's module needs flash-linear-attention: no fallback to run.
    std::vector<std::string> others = {"flashqla"};
    if (fw.gdn_module == "transformers") others.insert(others.begin(), "torch");
    for (const std::string& kernel : others) {
      STRATA_RETURN_IF_ERROR(add(fmt::format("Gated DeltaNet on {}", GdnKernelWords(fw.gdn_kernel)),
                                 GdnKernelWords(kernel), "framework.gdn_kernel=" + kernel,
                                 [&](ResolvedJob& j) { j.spec.framework.gdn_kernel = kernel; }));
    }
  }
  if (setup.tables.framework_counts.moe_layers > 0 && fw.on && fw.experts_grouped_assumed) {
    STRATA_RETURN_IF_ERROR(
        add("the routed experts run as one grouped GEMM (moe_grouped_gemm, as the frameworks' MoE "
            "examples set it)",
            "megatron-core's SequentialMLP, one expert after another (the flag's default, false; "
            "its host ops only: the per-expert GEMMs are priced as the grouped GEMM's)",
            "moe.grouped_gemm=false", [](ResolvedJob& j) { j.spec.moe_grouped_gemm = false; }));
  }
  if (!job.spec.moe_routing_imbalance_given && job.layout().ep > 1 &&
      result[StepPart::kMoeImbalance].total.s() > 0) {
    const double skew = RoutingSkew(setup.tables.efficiency, setup.layout);
    STRATA_RETURN_IF_ERROR(
        add(fmt::format("the busiest expert rank receives {:.2f}x the mean tokens", skew),
            "forced balance (1.00x, as NVIDIA's benchmark recipes run)", "moe.routing_imbalance=1",
            [](ResolvedJob& j) {
              j.spec.moe_routing_imbalance = 1;
              j.spec.moe_routing_imbalance_given = true;
            }));
  }
  const VisionConfig& vision = job.model.vision;
  if (vision.present && !job.spec.sequence.image_tokens_given) {
    // ms-swift's Qwen3.5/3.6 examples cap an image at MAX_PIXELS=1003520 (examples/models/
    // qwen3_5/*.sh): one such image is 1003520 / (patch^2 x merge^2) tokens.
    constexpr double kMaxPixels = 1003520;
    const double per_token =
        static_cast<double>(vision.patch_size * vision.patch_size * vision.spatial_merge_size *
                            vision.spatial_merge_size);
    const double image = std::floor(kMaxPixels / per_token);
    if (image > 0 && image <= job.step.sequence.mean_tokens) {
      STRATA_RETURN_IF_ERROR(
          add("text-only samples: the vision tower encodes no image",
              fmt::format("one image per sample at ms-swift's example MAX_PIXELS=1003520 ({:.0f} "
                          "tokens)",
                          image),
              fmt::format("sequence.image_tokens={:.0f}", image), [image](ResolvedJob& j) {
                j.spec.sequence.image_tokens = image;
                j.spec.sequence.image_tokens_given = true;
              }));
    }
  }
  const SequenceLengths& lengths = job.step.sequence;
  if (!lengths.exact && lengths.bins.empty() && lengths.max_tokens > lengths.mean_tokens) {
    const double mean = lengths.mean_tokens;
    STRATA_RETURN_IF_ERROR(
        add(fmt::format("sample lengths spread uniformly up to {} tokens",
                        GroupDigits(lengths.max_tokens)),
            fmt::format("every sample {} tokens (no spread)", GroupDigits(mean)), "",
            [mean](ResolvedJob& j) { j.step.sequence = SequenceLengths::Fixed(mean); }));
  }
  return out;
}

}  // namespace strata
