// The cluster and data-parallel fields every mapper shares, and the list of unused settings.
#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <optional>

#include "strata/hw/cluster.h"
#include "strata/importer/framework_mappers.h"

namespace strata {

namespace {

// A positive integer from the environment of the launch command; an unresolved "$VAR" or a
// non-number is reported with what to pass instead.
Result<std::optional<int64_t>> EnvInt(const MapContext& ctx, const char* name,
                                      const char* strata_flag) {
  auto it = ctx.env.find(name);
  if (it == ctx.env.end()) return std::optional<int64_t>();
  int64_t v = 0;
  const std::string& text = it->second;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v <= 0) {
    return InvalidInput(fmt::format("{}={} is not a number known before the job runs", name, text))
        .WithHint(fmt::format("pass {} to strata import", strata_flag));
  }
  return std::optional<int64_t>(v);
}

// PYTORCH_CUDA_ALLOC_CONF: comma-separated key:value options (PyTorch's
// c10/cuda/CUDAAllocatorConfig.cpp parses "expandable_segments:True"; its docs, "Optimizing
// memory usage with PYTORCH_CUDA_ALLOC_CONF", list the options). Only expandable_segments
// changes what the ledger predicts; the value is read case-insensitively as PyTorch accepts
// True/False.
void MapAllocatorConf(const MapContext& ctx, JobBuilder& job) {
  auto it = ctx.env.find("PYTORCH_CUDA_ALLOC_CONF");
  if (it == ctx.env.end()) return;
  const std::string& conf = it->second;
  size_t start = 0;
  while (start <= conf.size()) {
    size_t end = conf.find(',', start);
    if (end == std::string::npos) end = conf.size();
    const std::string option = conf.substr(start, end - start);
    const size_t colon = option.find(':');
    if (colon != std::string::npos && option.substr(0, colon) == "expandable_segments") {
      std::string value = option.substr(colon + 1);
      for (char& ch : value) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (value == "true" || value == "false") {
        job.Set("framework.expandable_segments", value,
                "environment PYTORCH_CUDA_ALLOC_CONF=" + conf);
      } else {
        job.Note(
            fmt::format("PYTORCH_CUDA_ALLOC_CONF={}: expandable_segments is neither True "
                        "nor False; the allocator's default (off) is assumed",
                        conf));
      }
    }
    start = end + 1;
  }
}

// "environment NNODES", or "NNODES=2 (cluster.sh:3)" when a sourced file set it.
std::string EnvSource(const MapContext& ctx, const std::string& name) {
  auto it = ctx.env_origin.find(name);
  if (it == ctx.env_origin.end()) return "environment " + name;
  return fmt::format("{}={} ({})", name, ctx.env.at(name), it->second);
}

}  // namespace

// LoRA and quantised bases are run modes strata does not model: say what the import assumed.
void NoteTuningMode(Settings& s, JobBuilder& job) {
  // ms-swift's train_type, LLaMA-Factory's finetuning_type (lora, freeze, oft).
  const SourcedValue* t = s.Use("train_type");
  if (t == nullptr) t = s.Use("finetuning_type");
  if (t != nullptr && t->value != "full") {
    job.Note(fmt::format(
        "{} {}: strata models full-parameter training, so the job is imported as full "
        "training; the frozen base (no gradients or optimizer states) and the adapters are "
        "not modelled, and memory and step time are those of full fine-tuning",
        t->source, t->value));
  }
  // ms-swift 3.x's quant_bits (1.x's quantization_bit is renamed to it on reading).
  if (const SourcedValue* q = s.Use("quant_bits"); q != nullptr && q->value != "0") {
    job.Note(
        fmt::format("{} {}: the base weights were {}-bit in the run; strata counts them at "
                    "precision.params",
                    q->source, q->value, q->value));
  }
}

Status FinishCommon(Settings& s, MapContext& ctx, JobBuilder& job, int64_t world_divisor) {
  const ImportOptions& o = *ctx.options;
  MapAllocatorConf(ctx, job);
  // Liger kernels in HF model code: the HF Trainer's and ms-swift's use_liger_kernel,
  // LLaMA-Factory's enable_liger_kernel. They fuse RMSNorm, rotary and SwiGLU, which the step
  // otherwise prices as eager module code.
  for (const char* key : {"use_liger_kernel", "enable_liger_kernel"}) {
    if (!s.Has(key)) continue;
    const std::string source = s.Use(key)->source;
    STRATA_ASSIGN_OR_RETURN(std::optional<bool> on, s.Bool(key));
    if (on) job.Set("framework.liger_kernel", *on ? "true" : "false", source);
  }
  std::optional<Cluster> cluster;
  if (!o.cluster.empty()) {
    auto loaded = LoadCluster(o.cluster);
    if (!loaded.ok()) return Error(loaded.error()).InField("--cluster");
    cluster = std::move(*loaded);
    job.Set("cluster.file", o.cluster, "--cluster of strata import");
  }
  if (!o.gpu.empty()) {
    job.Set("cluster.gpu", o.gpu, "--gpu of strata import");
  } else if (cluster && !job.Has("cluster.gpu")) {
    job.Set("cluster.gpu", cluster->gpu.name, "--cluster " + o.cluster + " (its GPU)");
  } else if (!job.Has("cluster.gpu")) {
    return InvalidInput("the launch input does not say which GPU the job runs on")
        .WithHint("pass --gpu with a GPU catalog name, e.g. --gpu H20");
  }
  if (o.gpus_per_node > 0) {
    job.Set("cluster.gpus_per_node", std::to_string(o.gpus_per_node),
            "--gpus-per-node of strata import");
  } else if (cluster && !job.Has("cluster.gpus_per_node")) {
    job.Set("cluster.gpus_per_node", std::to_string(cluster->gpus_per_node),
            "--cluster " + o.cluster + " (its GPUs per node)");
  } else if (!job.Has("cluster.gpus_per_node")) {
    STRATA_ASSIGN_OR_RETURN(auto env, EnvInt(ctx, "NPROC_PER_NODE", "--gpus-per-node"));
    if (!env) {
      STRATA_ASSIGN_OR_RETURN(env, EnvInt(ctx, "GPUS_PER_NODE", "--gpus-per-node"));
    }
    if (!env) {
      return InvalidInput("the launch input does not say how many GPUs each node runs")
          .WithHint("pass --gpus-per-node (or set NPROC_PER_NODE in the command)");
    }
    job.Set("cluster.gpus_per_node", std::to_string(*env),
            EnvSource(ctx, ctx.env.count("NPROC_PER_NODE") ? "NPROC_PER_NODE" : "GPUS_PER_NODE"));
  }
  if (o.nodes > 0) {
    job.Set("cluster.nodes", std::to_string(o.nodes), "--nodes of strata import");
  } else if (!job.Has("cluster.nodes")) {
    STRATA_ASSIGN_OR_RETURN(auto env, EnvInt(ctx, "NNODES", "--nodes"));
    if (!env) {
      STRATA_ASSIGN_OR_RETURN(env, EnvInt(ctx, "NUM_NODES", "--nodes"));
    }
    if (env) {
      job.Set("cluster.nodes", std::to_string(*env),
              EnvSource(ctx, ctx.env.count("NNODES") ? "NNODES" : "NUM_NODES"));
    } else {
      job.Default("cluster.nodes", "1", "torchrun's --nnodes defaults to 1");
    }
  }
  STRATA_ASSIGN_OR_RETURN(const int64_t gpus_per_node, job.GetPositiveInt("cluster.gpus_per_node"));
  STRATA_ASSIGN_OR_RETURN(const int64_t nodes, job.GetPositiveInt("cluster.nodes"));
  const int64_t world = gpus_per_node * nodes;
  if (world_divisor <= 0 || world % world_divisor != 0) {
    return InvalidInput(fmt::format("the world of {} GPUs is not a multiple of TP x PP x CP = {}",
                                    world, world_divisor))
        .WithHint("check the node count and GPUs per node (--nodes, --gpus-per-node)");
  }
  if (!job.Has("parallel.dp")) {
    job.Set("parallel.dp", std::to_string(world / world_divisor),
            fmt::format("derived: world {} / (TP x PP x CP = {})", world, world_divisor));
  }
  for (const auto& [key, value] : s.Unused()) {
    job.Unused(fmt::format("{} = {} ({})", key, value.value, value.source));
  }
  return OkStatus();
}

}  // namespace strata
