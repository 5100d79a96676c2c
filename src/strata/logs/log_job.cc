#include "strata/logs/log_job.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "strata/core/file_io.h"
#include "strata/core/strings.h"
#include "strata/hw/gpu_catalog.h"
#include "strata/job/job_spec.h"
#include "strata/job/job_validation.h"
#include "strata/model/model_catalog.h"
#include "strata/model/torchtitan_flavors.h"
#include "strata/sim/mfu_job.h"
#include "strata/sim/recompute_share.h"

namespace strata {

namespace {

// What the recomputation takes of a resolved job.
Result<LogJob> LogJobOf(const JobSpec& spec) {
  STRATA_ASSIGN_OR_RETURN(Job job, ResolveJob(spec));
  LogJob j;
  j.model = job.model;
  j.gpu_name = job.gpu().name;
  j.peak_per_gpu = job.gpu().bf16_dense;
  j.gpus = job.spec.cluster.world();
  j.seq_max_tokens = job.spec.sequence.max_tokens;
  j.seq_mean_tokens =
      job.spec.sequence.mean_tokens > 0 ? job.spec.sequence.mean_tokens : j.seq_max_tokens;
  j.global_batch = static_cast<double>(job.spec.global_batch);
  const RecomputeShare recompute = RecomputeShareOf(
      job.spec, static_cast<int64_t>(job.model.layers.size()), job.layout().pp, job.layout().vpp);
  j.recompute = recompute.hfu_kind();
  j.recompute_layer_fraction = recompute.full_layer_fraction;
  j.include_mtp = job.spec.mtp;
  STRATA_ASSIGN_OR_RETURN(auto entry, FindCatalogModel(job.model.name));
  if (entry) j.nominal_active_params = entry->nominal_active_params;
  STRATA_ASSIGN_OR_RETURN(auto catalog, LoadGpuCatalog(DataDir() + "/gpus.yaml"));
  for (const auto& g : catalog) j.other_peaks.emplace_back(g.name, g.bf16_dense);
  return j;
}

}  // namespace

Result<LogJob> LoadLogJob(const std::string& job_name, const std::vector<std::string>& sets,
                          const std::string& model) {
  // `--set` alone used to start from the reference job: its GPU count, lengths and recompute
  // changed the log's MFU and HFU, and its file was quoted in the log's errors.
  if (job_name.empty() && model.empty()) {
    return InvalidInput("--set changes a job, and no job was given")
        .InField("--set")
        .WithHint(
            "give the log's job: --job FILE|NAME, or --model NAME with --set cluster.gpu=G "
            "--set cluster.gpus_per_node=N --set cluster.nodes=N --set batch.micro_batch=N "
            "--set batch.global_batch=N --set sequence.max_tokens=N");
  }
  std::vector<std::string> overrides = sets;
  if (!job_name.empty() && !model.empty()) overrides.insert(overrides.begin(), "model=" + model);
  STRATA_ASSIGN_OR_RETURN(JobSpec spec, job_name.empty() ? BuildJobSpec(model, overrides)
                                                         : LoadJobSpec(job_name, overrides));
  return LogJobOf(spec);
}

Result<LogJob> LoadActorLogJob(const ActorLogJob& actor, const std::vector<std::string>& sets,
                               const std::string& model) {
  std::vector<std::string> overrides = actor.overrides;
  if (!model.empty()) overrides.push_back("model=" + model);
  overrides.insert(overrides.end(), sets.begin(), sets.end());
  STRATA_ASSIGN_OR_RETURN(JobSpec spec, LoadJobSpec(actor.job, overrides));
  STRATA_ASSIGN_OR_RETURN(LogJob j, LogJobOf(spec));
  j.source = actor.source;
  j.prompt_cap_tokens = actor.prompt_cap_tokens;
  return j;
}

Result<HeaderJob> JobFromTitanHeader(const TitanHeader& h, const std::string& model,
                                     const std::vector<std::string>& sets) {
  HeaderJob out;
  auto answered = [&](const std::string& key) {
    return std::any_of(sets.begin(), sets.end(),
                       [&](const std::string& s) { return s.starts_with(key + "="); });
  };
  std::vector<std::string> parts;
  auto missing = [](const std::string& what, const std::string& flag) {
    return InvalidInput("the torchtitan log header does not give " + what)
        .WithHint("give it: " + flag);
  };
  if (!model.empty()) {
    out.model = model;
    parts.push_back("model " + model + " (--model)");
  } else if (h.model_line == 0) {
    return missing("the model (no \"Building <model> <flavor> with\" line)", "--model NAME");
  } else {
    // torchtitan's registry names -> the catalog (data/models/torchtitan_flavors.yaml).
    STRATA_ASSIGN_OR_RETURN(out.model, TitanCatalogModel(h.model_name, h.model_flavor,
                                                         fmt::format("line {}", h.model_line)));
    parts.push_back(
        fmt::format("model {} {} (line {})", h.model_name, h.model_flavor, h.model_line));
  }
  if (answered("cluster.gpu")) {
    parts.push_back("GPU from --set cluster.gpu");
  } else if (h.device_line == 0) {
    return missing("the GPU (no \"capacity: <GPU> with ...GiB memory\" line)",
                   "--set cluster.gpu=NAME");
  } else {
    // "NVIDIA H100 80GB HBM3" -> the catalog alias "nvidia-h100-80gb-hbm3"; "NVIDIA H100" ->
    // "h100".
    std::string alias;
    for (char c : h.device_name) {
      alias += c == ' ' || c == '_'
                   ? '-'
                   : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    auto gpu = FindGpu(alias);
    if (!gpu.ok() && alias.starts_with("nvidia-")) gpu = FindGpu(alias.substr(7));
    if (!gpu.ok()) {
      return InvalidInput(
                 fmt::format("the GPU the log names, '{}' (line {}), is not in data/gpus.yaml",
                             h.device_name, h.device_line))
          .WithHint("give the GPU: --set cluster.gpu=NAME");
    }
    out.sets.push_back("cluster.gpu=" + gpu->name);
    std::string gpu_part = fmt::format("GPU {} with {:.2f} GiB (line {}) = {}", h.device_name,
                                       h.device_gib, h.device_line, gpu->name);
    if (h.peak_flop_per_s) {
      const double ratio = *h.peak_flop_per_s / gpu->bf16_dense.flop_per_s();
      gpu_part += std::fabs(ratio - 1) <= 0.02
                      ? fmt::format(", whose dense bf16 peak torchtitan also divides by (line {})",
                                    h.peak_line)
                      : fmt::format(", though torchtitan divides by {:.4g} TFLOP/s (line {})",
                                    *h.peak_flop_per_s / 1e12, h.peak_line);
    }
    parts.push_back(gpu_part);
  }
  if (h.batch_line > 0 && (!h.global_batch || !h.local_batch || !h.seq_len)) {
    // The line is there but cut short or garbled ("local batch size one"): say which numbers.
    std::vector<std::string> lost;
    if (!h.local_batch) lost.emplace_back("local batch size");
    if (!h.global_batch) lost.emplace_back("global batch size");
    if (!h.seq_len) lost.emplace_back("sequence length");
    return missing(fmt::format("the batch and sequence length: its batch line (line {}) has no "
                               "readable {}",
                               h.batch_line, fmt::join(lost, ", ")),
                   "--set batch.micro_batch=N --set batch.global_batch=N --set "
                   "sequence.max_tokens=N");
  }
  if (h.batch_line == 0 || !h.global_batch || !h.local_batch || !h.seq_len) {
    return missing(
        "the batch and sequence length (no \"local batch size ..., global batch size "
        "..., sequence length ...\" line)",
        "--set batch.micro_batch=N --set batch.global_batch=N --set "
        "sequence.max_tokens=N");
  }
  const int64_t accumulation = h.accumulation.value_or(1);
  int64_t gpus = 0;
  int64_t tp = 1, pp = 1, cp = 1;
  if (!h.mesh.empty()) {
    gpus = 1;
    for (const auto& [name, n] : h.mesh) {
      // ep is carved out of the data-parallel dimensions: not a factor of the world.
      if (name != "ep" && name != "etp") gpus *= n;
      if (name == "tp") tp = n;
      if (name == "pp") pp = n;
      if (name == "cp") cp = n;
    }
    parts.push_back(fmt::format("{} GPUs from the device mesh (line {})", gpus, h.mesh_line));
  } else {
    if (*h.local_batch <= 0 || *h.global_batch % (*h.local_batch * accumulation) != 0) {
      return missing("the GPU count (no device mesh line)", "--set cluster.gpus_per_node=N");
    }
    gpus = *h.global_batch / (*h.local_batch * accumulation);
    parts.push_back(
        fmt::format("{} GPUs = global batch {} / (local {} x accumulation {}), no "
                    "mesh line: data parallel only (line {})",
                    gpus, *h.global_batch, *h.local_batch, accumulation, h.batch_line));
  }
  if (gpus <= 0) return missing("a usable GPU count", "--set cluster.gpus_per_node=N");
  // The count matters for MFU, not how the GPUs are spread: whole nodes of 8 where it divides.
  const int64_t per_node = gpus % 8 == 0 ? 8 : gpus;
  out.sets.push_back(fmt::format("cluster.gpus_per_node={}", per_node));
  out.sets.push_back(fmt::format("cluster.nodes={}", gpus / per_node));
  out.sets.push_back(fmt::format("parallel.tp={}", tp));
  out.sets.push_back(fmt::format("parallel.pp={}", pp));
  out.sets.push_back(fmt::format("parallel.cp={}", cp));
  if (gpus % (tp * pp * cp) != 0) {
    return missing(
        fmt::format("a mesh whose {} GPUs divide by TP x PP x CP = {}", gpus, tp * pp * cp),
        "--job FILE");
  }
  out.sets.push_back(fmt::format("parallel.dp={}", gpus / (tp * pp * cp)));
  out.sets.push_back(fmt::format("batch.micro_batch={}", *h.local_batch));
  out.sets.push_back(fmt::format("batch.global_batch={}", *h.global_batch));
  out.sets.push_back(fmt::format("sequence.max_tokens={}", *h.seq_len));
  parts.push_back(fmt::format("local batch {}, global batch {}, sequence length {} (line {})",
                              *h.local_batch, *h.global_batch, *h.seq_len, h.batch_line));
  out.source = "the torchtitan log header: ";
  for (size_t i = 0; i < parts.size(); ++i) out.source += (i ? "; " : "") + parts[i];
  return out;
}

}  // namespace strata
