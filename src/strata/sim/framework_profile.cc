#include "strata/sim/framework_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <tuple>
#include <utility>

#include "strata/core/file_io.h"
#include "strata/core/sourced_yaml.h"
#include "strata/job/training_modes.h"

namespace strata {
namespace {

Result<double> NonNegative(YamlMap& map, const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(double v, map.Number(key));
  if (!(v >= 0)) return map.ErrorAt(key, fmt::format("expected a number >= 0, got {}", v));
  return v;
}

// `rows:` lists the validation rows a value was derived from; only its presence is checked.
Status CheckRows(YamlMap& section) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node rows, section.Node("rows"));
  if (!rows.IsSequence()) return section.ErrorAt("rows", "expected a list of row ids ([] if none)");
  return OkStatus();
}

// `model_code:` {clamped_glu, expert_output_bias, yarn_rotary}, each {forward, backward} in
// bytes per element (ModelCodeTraffic).
Result<ModelCodeTraffic> ParseModelCode(YamlMap& m) {
  ModelCodeTraffic c;
  STRATA_ASSIGN_OR_RETURN(YamlMap t, m.Map("model_code"));
  for (const auto& [key, forward, backward] :
       {std::tuple{"clamped_glu", &c.clamped_glu_forward, &c.clamped_glu_backward},
        std::tuple{"expert_output_bias", &c.expert_bias_forward, &c.expert_bias_backward},
        std::tuple{"yarn_rotary", &c.yarn_rotary_forward, &c.yarn_rotary_backward}}) {
    if (!t.Has(key)) continue;
    STRATA_ASSIGN_OR_RETURN(YamlMap pass, t.Map(key));
    STRATA_ASSIGN_OR_RETURN(*forward, NonNegative(pass, "forward"));
    STRATA_ASSIGN_OR_RETURN(*backward, NonNegative(pass, "backward"));
    STRATA_RETURN_IF_ERROR(pass.CheckNoUnknownKeys());
  }
  STRATA_RETURN_IF_ERROR(t.CheckNoUnknownKeys());
  return c;
}

Result<FrameworkEntry> ParseEntry(YamlMap& m, const std::string& name) {
  FrameworkEntry e;
  e.name = name;
  STRATA_ASSIGN_OR_RETURN(e.source, m.String("source"));
  STRATA_RETURN_IF_ERROR(CheckRows(m));
  if (m.Has("parallel")) {
    STRATA_ASSIGN_OR_RETURN(e.parallel, ParseParallelSupport(m));
  }
  if (m.Has("zero3_fetch")) {
    STRATA_ASSIGN_OR_RETURN(YamlMap z, m.Map("zero3_fetch"));
    STRATA_ASSIGN_OR_RETURN(e.zero3_ops_per_param, NonNegative(z, "ops_per_param"));
    STRATA_ASSIGN_OR_RETURN(e.zero3_ops_per_param_per_rank,
                            NonNegative(z, "ops_per_param_per_rank"));
    STRATA_RETURN_IF_ERROR(z.CheckNoUnknownKeys());
  }
  if (m.Has("model_code")) {
    STRATA_ASSIGN_OR_RETURN(e.model_code, ParseModelCode(m));
  }
  if (m.Has("runs_as")) {
    // A wrapper's numbers are its engine's, except the attention its recipes ask HF code for
    // and the module code its model providers choose (model_code).
    if (m.Has("attention")) {
      STRATA_ASSIGN_OR_RETURN(e.attention, m.String("attention"));
      e.attention_given = true;
    }
    if (e.attention != "cudnn" && e.attention != "sdpa_flash2") {
      return m.ErrorAt("attention", fmt::format("unknown attention '{}', expected cudnn or "
                                                "sdpa_flash2",
                                                e.attention));
    }
    return e;
  }
  STRATA_ASSIGN_OR_RETURN(e.layer_ops, NonNegative(m, "layer_ops"));
  if (m.Has("compiled_layer_ops")) {
    STRATA_ASSIGN_OR_RETURN(e.compiled_layer_ops, NonNegative(m, "compiled_layer_ops"));
  }
  STRATA_ASSIGN_OR_RETURN(e.moe_ops, NonNegative(m, "moe_ops"));
  STRATA_ASSIGN_OR_RETURN(e.moe_host_syncs, NonNegative(m, "moe_host_syncs"));
  if (m.Has("expert_loop")) {
    STRATA_ASSIGN_OR_RETURN(YamlMap loop, m.Map("expert_loop"));
    STRATA_ASSIGN_OR_RETURN(e.expert_loop_ops, PositiveAt(loop, "ops_per_expert"));
    if (loop.Has("until")) {
      STRATA_ASSIGN_OR_RETURN(e.expert_loop_until, loop.String("until"));
    }
    STRATA_RETURN_IF_ERROR(loop.CheckNoUnknownKeys());
  }
  if (m.Has("sequential_experts")) {
    STRATA_ASSIGN_OR_RETURN(YamlMap q, m.Map("sequential_experts"));
    STRATA_ASSIGN_OR_RETURN(e.sequential_expert_ops, PositiveAt(q, "ops_per_expert"));
    STRATA_RETURN_IF_ERROR(q.CheckNoUnknownKeys());
  }
  if (m.Has("eager_traffic")) {
    STRATA_ASSIGN_OR_RETURN(YamlMap t, m.Map("eager_traffic"));
    for (const auto& [key, target] :
         {std::pair{"norm", &e.eager_norm}, std::pair{"rotary", &e.eager_rotary},
          std::pair{"mlp_activation", &e.eager_activation}}) {
      STRATA_ASSIGN_OR_RETURN(*target, PositiveAt(t, key));
      if (*target < 1) {
        return t.ErrorAt(key, fmt::format("expected bytes moved over the fused kernel's, >= 1, "
                                          "got {}",
                                          *target));
      }
    }
    STRATA_ASSIGN_OR_RETURN(e.eager_attention_copies, t.Bool("attention_copies"));
    STRATA_RETURN_IF_ERROR(t.CheckNoUnknownKeys());
  }
  if (m.Has("liger_kernel")) {
    STRATA_ASSIGN_OR_RETURN(e.liger_kernel, m.Bool("liger_kernel"));
  }
  STRATA_ASSIGN_OR_RETURN(e.attention, m.String("attention"));
  if (e.attention != "cudnn" && e.attention != "sdpa_flash2") {
    return m.ErrorAt(
        "attention",
        fmt::format("unknown attention '{}', expected cudnn or sdpa_flash2", e.attention));
  }
  if (m.Has("sdpa_cudnn_from")) {
    STRATA_ASSIGN_OR_RETURN(e.sdpa_cudnn_from, m.String("sdpa_cudnn_from"));
  }
  return e;
}

}  // namespace

Result<FrameworkCatalog> ParseFrameworkCatalog(const std::string& text, const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, file));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, file, ""));
  FrameworkCatalog c;
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap host, SourcedSection(top, "host", c.sources));
    STRATA_ASSIGN_OR_RETURN(c.host_op_s, PositiveAt(host, "op_s"));
    STRATA_RETURN_IF_ERROR(CheckRows(host));
    STRATA_RETURN_IF_ERROR(host.CheckNoUnknownKeys());
  }
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap f, SourcedSection(top, "sdpa_flash2", c.sources));
    STRATA_ASSIGN_OR_RETURN(c.flash2_forward, FractionAt(f, "forward", ZeroFraction::kRefused));
    STRATA_ASSIGN_OR_RETURN(c.flash2_backward, FractionAt(f, "backward", ZeroFraction::kRefused));
    STRATA_ASSIGN_OR_RETURN(YAML::Node gpus, f.Node("gpus"));
    if (!gpus.IsSequence()) return f.ErrorAt("gpus", "expected a list of GPU names");
    for (const auto& g : gpus) c.flash2_gpus.push_back(g.Scalar());
    STRATA_RETURN_IF_ERROR(CheckRows(f));
    STRATA_RETURN_IF_ERROR(f.CheckNoUnknownKeys());
  }
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap f, SourcedSection(top, "fsdp2_fetch", c.sources));
    STRATA_ASSIGN_OR_RETURN(c.fsdp2_ops_per_fetch, NonNegative(f, "ops_per_fetch"));
    STRATA_ASSIGN_OR_RETURN(c.fsdp2_ops_per_param, NonNegative(f, "ops_per_param"));
    STRATA_ASSIGN_OR_RETURN(c.fsdp2_copy_out_bytes_per_byte,
                            NonNegative(f, "copy_out_bytes_per_byte"));
    STRATA_RETURN_IF_ERROR(CheckRows(f));
    STRATA_RETURN_IF_ERROR(f.CheckNoUnknownKeys());
  }
  STRATA_ASSIGN_OR_RETURN(YAML::Node list, top.Node("frameworks"));
  STRATA_ASSIGN_OR_RETURN(YamlMap frameworks, top.Map("frameworks"));
  for (const auto& kv : list) {
    const std::string name = kv.first.Scalar();
    STRATA_ASSIGN_OR_RETURN(YamlMap m, frameworks.Map(name));
    STRATA_ASSIGN_OR_RETURN(FrameworkEntry e, ParseEntry(m, name));
    // latest, runs_as, gdn_module, gqa_repeat, pipeline, reduce_bucket, moe_a2a_overlap,
    // fsdp2_units, accumulation_sync, the sharding runtimes and checkpoint_format are read once,
    // into c.engines (job/engine_chain.h).
    STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys(
        {"latest", "runs_as", "gdn_module", "gqa_repeat", "pipeline", "reduce_bucket",
         "moe_a2a_overlap", "fsdp2_units", "accumulation_sync", "zero3_runtime", "zero12_runtime",
         "checkpoint_format", "moe_adapter_layout"}));
    c.frameworks[name] = std::move(e);
  }
  STRATA_ASSIGN_OR_RETURN(c.engines, ParseFrameworkEngines(list, file));
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  return c;
}

Result<FrameworkCatalog> LoadFrameworkCatalog() {
  const std::string path = DataDir() + "/frameworks.yaml";
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseFrameworkCatalog(text, path);
}

namespace {
Result<FrameworkProfile> ResolveForMode(const FrameworkCatalog& catalog, const JobSpec& job,
                                        const std::string& gpu_name) {
  const FrameworkSpec& spec = job.framework;
  auto find = [&](const std::string& name) -> Result<const FrameworkEntry*> {
    const auto it = catalog.frameworks.find(name);
    if (it == catalog.frameworks.end()) {
      return InvalidInput(fmt::format("data/frameworks.yaml has no entry for framework '{}'", name))
          .InField("framework.name");
    }
    return &it->second;
  };
  STRATA_ASSIGN_OR_RETURN(const FrameworkEntry* named, find(spec.name));
  const std::string named_latest = catalog.engines.LatestOf(spec.name);
  FrameworkProfile p;
  p.on = true;
  p.name = spec.name;
  p.version = spec.version.empty() ? named_latest : spec.version;
  p.host_op_s = catalog.host_op_s;
  if (!spec.given) {
    p.assumptions.push_back(
        fmt::format("framework ASSUMED {} (the job names none; set framework.name)", spec.name));
  }
  if (spec.version.empty() && named_latest.empty()) {
    p.assumptions.push_back(fmt::format(
        "{} release unknown: the catalog states no latest release (set framework.version)",
        spec.name));
  } else if (spec.version.empty()) {
    p.assumptions.push_back(fmt::format(
        "{} release ASSUMED {}, the latest data/frameworks.yaml knows (set framework.version)",
        spec.name, named_latest));
  }
  // Wrappers (ms-swift, verl, deepspeed, megatron-bridge) train through another framework's
  // code, chosen by the sharding mode; the named release still decides version-gated choices
  // only where the engine is the named framework itself.
  const EngineChain chain = ResolveEngineChain(catalog.engines, spec, job.sharding.mode);
  for (size_t i = 1; i < chain.names.size(); ++i) {
    p.assumptions.push_back(fmt::format("{} with sharding {} trains through {}'s code", p.name,
                                        chain.mode, chain.names[i]));
  }
  STRATA_ASSIGN_OR_RETURN(const FrameworkEntry* engine, find(chain.engine()));
  p.engine = engine->name;
  const std::string& engine_version = chain.version;
  if (chain.wrapped()) {
    p.assumptions.push_back(
        fmt::format("{} release ASSUMED {} (the latest known)", engine->name, engine_version));
  }
  p.layer_ops = engine->layer_ops;
  const bool eager_traffic = engine->eager_norm > 1 || engine->eager_rotary > 1 ||
                             engine->eager_activation > 1 || engine->eager_attention_copies;
  if (spec.liger_kernel && !engine->liger_kernel) {
    return InvalidInput(fmt::format("framework.liger_kernel: Liger's kernels patch HF "
                                    "transformers' model code, and {} trains through {}'s code",
                                    p.name, engine->name))
        .InField("framework.liger_kernel")
        .WithHint(
            "remove framework.liger_kernel, or name the framework whose HF code it patches "
            "(framework.name: hf-trainer, deepspeed, or ms-swift / verl with HF workers)");
  }
  if (eager_traffic && spec.liger_kernel) {
    p.assumptions.push_back(
        "Liger kernels: fused RMSNorm, rotary and SwiGLU (no eager element-wise traffic)");
  } else if (eager_traffic && spec.compile) {
    p.assumptions.push_back("torch.compile: the element-wise ops fused (no eager traffic)");
  } else if (eager_traffic) {
    p.eager_norm = engine->eager_norm;
    p.eager_rotary = engine->eager_rotary;
    p.eager_activation = engine->eager_activation;
    p.eager_attention_copies = engine->eager_attention_copies;
    p.eager_gqa_repeat = GqaRepeatOf(catalog.engines, chain) != nullptr;
    p.assumptions.push_back(fmt::format(
        "eager module code: norms move {:.1f}x, rotary {:.1f}x, the MLP activation {:.2f}x the "
        "bytes of a fused kernel{} (set framework.compile, or framework.liger_kernel for HF "
        "code, where they are fused)",
        p.eager_norm, p.eager_rotary, p.eager_activation,
        !p.eager_attention_copies ? ""
        : p.eager_gqa_repeat      ? "; GQA's repeated K/V and the attention output are copied"
                                  : "; the attention output is copied"));
  }
  // Releases that repeat K and V for GQA in eager code (before torchtitan 0.2.2) run repeat_kv's
  // ops on every grouped-query layer; later ones pass enable_gqa to SDPA.
  if (const GqaRepeatRule* gqa = GqaRepeatOf(catalog.engines, chain);
      gqa != nullptr && !spec.compile) {
    p.gqa_repeat_ops = gqa->ops;
    p.assumptions.push_back(fmt::format(
        "{} {} repeats K and V to every query head (repeat_kv): {:.0f} more host ops per "
        "grouped-query layer forward (from {} SDPA takes enable_gqa)",
        engine->name, engine_version, gqa->ops, gqa->until));
  } else if (const auto rule = catalog.engines.gqa_repeat.find(engine->name);
             rule != catalog.engines.gqa_repeat.end() && !spec.compile) {
    p.assumptions.push_back(fmt::format(
        "{} {} passes enable_gqa to SDPA: K and V are not repeated to the query heads (they are "
        "before {})",
        engine->name, engine_version, rule->second.until));
  }
  if (spec.compile && engine->compiled_layer_ops > 0) {
    p.layer_ops = engine->compiled_layer_ops;
    p.assumptions.push_back(
        fmt::format("torch.compile: {:.0f} kernels per layer forward instead of {:.0f} eager ops",
                    engine->compiled_layer_ops, engine->layer_ops));
  } else {
    p.assumptions.push_back(
        fmt::format("{}: {:.0f} host ops per decoder layer forward, {:.0f} "
                    "more per MoE layer, {:.0f} us of host time each",
                    engine->name, engine->layer_ops, engine->moe_ops, catalog.host_op_s * 1e6));
  }
  p.moe_ops = engine->moe_ops;
  p.moe_host_syncs = engine->moe_host_syncs;
  // The engine's module code, and what a wrapper's providers change of it (each pass the wrapper
  // states replaces the engine's).
  p.model_code = engine->model_code;
  if (named != engine) {
    const ModelCodeTraffic& w = named->model_code;
    if (w.clamped_glu_forward + w.clamped_glu_backward > 0) {
      p.model_code.clamped_glu_forward = w.clamped_glu_forward;
      p.model_code.clamped_glu_backward = w.clamped_glu_backward;
    }
    if (w.expert_bias_forward + w.expert_bias_backward > 0) {
      p.model_code.expert_bias_forward = w.expert_bias_forward;
      p.model_code.expert_bias_backward = w.expert_bias_backward;
    }
    if (w.yarn_rotary_forward + w.yarn_rotary_backward > 0) {
      p.model_code.yarn_rotary_forward = w.yarn_rotary_forward;
      p.model_code.yarn_rotary_backward = w.yarn_rotary_backward;
    }
  }
  if (engine->expert_loop_ops > 0) {
    const bool grouped = !engine->expert_loop_until.empty() &&
                         ReleaseAtLeast(engine_version, engine->expert_loop_until);
    if (!grouped) p.expert_loop_ops = engine->expert_loop_ops;
    p.experts_assumption =
        grouped
            ? fmt::format("MoE experts: one grouped GEMM ({} {} >= {})", engine->name,
                          engine_version, engine->expert_loop_until)
            : fmt::format(
                  "MoE experts: a Python loop, one expert after another, {:.0f} ops "
                  "and a host sync each ({} {} < {})",
                  engine->expert_loop_ops, engine->name, engine_version, engine->expert_loop_until);
  } else if (engine->sequential_expert_ops > 0) {
    // megatron-core runs TE's GroupedMLP with moe_grouped_gemm, else SequentialMLP.
    p.experts_grouped = job.moe_grouped_gemm.value_or(true);
    p.experts_grouped_assumed = !job.moe_grouped_gemm.has_value();
    if (!p.experts_grouped) {
      p.expert_loop_ops = engine->sequential_expert_ops;
      p.expert_loop_syncs = 0;
    }
    const std::string why = p.experts_grouped_assumed ? " ASSUMED (set moe.grouped_gemm)"
                                                      : " (the job's moe.grouped_gemm)";
    p.experts_assumption =
        p.experts_grouped
            ? fmt::format("MoE experts: one grouped GEMM (TE GroupedMLP){}", why)
            : fmt::format(
                  "MoE experts: SequentialMLP, one expert after another, {:.0f} host ops "
                  "each{}",
                  engine->sequential_expert_ops, why);
  } else {
    p.experts_assumption = "MoE experts: one grouped GEMM";
  }
  const bool hopper = std::find(catalog.flash2_gpus.begin(), catalog.flash2_gpus.end(), gpu_name) !=
                      catalog.flash2_gpus.end();
  bool flash2 = engine->attention == "sdpa_flash2";
  if (named->attention_given && p.engine != "megatron-core") {
    flash2 = named->attention == "sdpa_flash2";
    p.assumptions.push_back(fmt::format("{}'s recipes ask HF code for {}", named->name,
                                        flash2 ? "flash_attention_2" : "SDPA"));
  }
  bool sdpa_cudnn = false;  // PyTorch SDPA with cuDNN first, not Transformer Engine's call
  if (flash2 && !engine->sdpa_cudnn_from.empty() &&
      ReleaseAtLeast(engine_version, engine->sdpa_cudnn_from)) {
    flash2 = false;
    sdpa_cudnn = true;
  }
  if (flash2 && hopper) {
    p.attention_forward_factor = catalog.flash2_forward;
    p.attention_backward_factor = catalog.flash2_backward;
    p.assumptions.push_back(fmt::format(
        "attention: FlashAttention-2 on {} ({:.2f} forward, {:.2f} backward of cuDNN's rate)",
        gpu_name, catalog.flash2_forward, catalog.flash2_backward));
  } else {
    p.assumptions.push_back(
        flash2       ? "attention: FlashAttention-2 (its rate is this GPU's)"
        : sdpa_cudnn ? fmt::format("attention: cuDNN fused attention (PyTorch SDPA's cuDNN "
                                   "backend, put first from {} {})",
                                   engine->name, engine->sdpa_cudnn_from)
        : p.engine == "megatron-core"
            ? std::string("attention: cuDNN fused attention (Transformer Engine)")
            : std::string("attention: PyTorch SDPA at cuDNN's rate (its pick on this GPU, "
                          "measured with torch 2.11 on one H200)"));
  }
  // Whose GDN module: the chain's first `gdn_module:` (ms-swift wraps transformers' in
  // megatron-core models); the model type's release rule is applied by the caller that has the
  // model (sim/step_job.cc, from the resolved job).
  const GdnPlacement gdn = ResolveGdnPlacement(catalog.engines, spec, job.sharding.mode, "");
  p.gdn_module = gdn.module.empty() ? "transformers" : gdn.module;
  if (!spec.gdn_kernel.empty()) {
    p.gdn_kernel = spec.gdn_kernel;
    p.gdn_kernel_assumed = false;
  }
  // DeepSpeed's per-parameter hooks where DeepSpeed's ZeRO-3 runs (the job's sharding runtime,
  // job/engine_chain.h): FSDP1, FSDP2 and megatron-core's FSDP gather per unit, with no
  // per-parameter hooks.
  const ShardingRuntime runtime =
      ResolveJobShardingRuntime(catalog.engines, job, job.sharding.mode);
  if (job.sharding.mode == ShardingMode::kZero3 && runtime == ShardingRuntime::kDeepSpeed) {
    const FrameworkEntry* ds = nullptr;
    for (const auto& [name, e] : catalog.frameworks) {
      if (e.zero3_ops_per_param > 0 || e.zero3_ops_per_param_per_rank > 0) ds = &e;
    }
    if (ds != nullptr) {
      p.zero3_ops_per_param = ds->zero3_ops_per_param;
      p.zero3_ops_per_param_per_rank = ds->zero3_ops_per_param_per_rank;
      p.assumptions.push_back(fmt::format(
          "DeepSpeed ZeRO-3 hooks: {:.0f} host ops per parameter fetched ({:.0f} + {:.0f} x DP "
          "{}), in forward, backward and the recompute",
          p.Zero3OpsPerParam(job.layout.dp), ds->zero3_ops_per_param,
          ds->zero3_ops_per_param_per_rank, job.layout.dp));
    }
  }
  if (job.sharding.mode == ShardingMode::kFsdp2) {
    p.fsdp2_ops_per_fetch = catalog.fsdp2_ops_per_fetch;
    p.fsdp2_ops_per_param = catalog.fsdp2_ops_per_param;
    p.fsdp2_copy_out_bytes_per_byte = catalog.fsdp2_copy_out_bytes_per_byte;
    p.assumptions.push_back(
        fmt::format("FSDP2 hooks: {:.0f} ops per layer fetch and {:.0f} per parameter; each "
                    "gather's output copied into the parameters on the compute stream ({:.0f} "
                    "bytes moved per gathered byte)",
                    p.fsdp2_ops_per_fetch, p.fsdp2_ops_per_param, p.fsdp2_copy_out_bytes_per_byte));
  }
  return p;
}

}  // namespace

std::string_view GdnKernelName(std::string_view kernel) {
  if (kernel == "torch") return "transformers' PyTorch fallback";
  if (kernel == "flashqla") return "FlashQLA's kernels";
  return "flash-linear-attention's chunked kernels";
}

std::string GdnKernelAssumption(const FrameworkProfile& p) {
  const std::string kernel =
      fmt::format("{}{}", GdnKernelName(p.gdn_kernel),
                  p.gdn_kernel == "torch" ? " (one 64-token chunk after another, host-bound)" : "");
  const bool hf = p.gdn_module == "transformers";
  const std::string module =
      hf ? "HF transformers' GatedDeltaNet module" : "megatron-core's GatedDeltaNet";
  if (!p.gdn_kernel_assumed) return fmt::format("Gated DeltaNet: {} in {}", kernel, module);
  return fmt::format(
      "Gated DeltaNet: {} ASSUMED in {}{} (set framework.gdn_kernel: fla | "
      "flashqla | torch)",
      kernel, module,
      hf ? ", which runs the PyTorch fallback when flash-linear-attention is not "
           "installed"
         : "");
}

namespace {
// Whether the engine a sharding mode trains through is HF model code that Liger patches; a name
// the catalog lacks answers true so that ResolveForMode reports it.
bool EngineTakesLiger(const FrameworkCatalog& catalog, const FrameworkSpec& spec,
                      ShardingMode mode) {
  const EngineChain chain = ResolveEngineChain(catalog.engines, spec, mode);
  const auto it = catalog.frameworks.find(chain.engine());
  return it == catalog.frameworks.end() || it->second.liger_kernel;
}
}  // namespace

Result<FrameworkProfile> ResolveFramework(const FrameworkCatalog& catalog, const JobSpec& job,
                                          const std::string& gpu_name) {
  STRATA_ASSIGN_OR_RETURN(FrameworkProfile p, ResolveForMode(catalog, job, gpu_name));
  for (ShardingMode mode : {ShardingMode::kNone, ShardingMode::kZero1, ShardingMode::kZero2,
                            ShardingMode::kZero3, ShardingMode::kFsdp2}) {
    JobSpec other = job;
    other.sharding.mode = mode;
    if (mode != job.sharding.mode && other.framework.liger_kernel &&
        !EngineTakesLiger(catalog, other.framework, mode)) {
      // Another mode of a wrapper trains through code Liger does not patch (ms-swift's zero1 is
      // a `megatron sft` launch through megatron-core, whose layers are fused already): the
      // flag belongs to the job's own launch, so that mode's layouts are priced without it
      // instead of failing the job.
      other.framework.liger_kernel = false;
    }
    auto resolved = ResolveForMode(catalog, other, gpu_name);
    STRATA_ASSIGN_OR_RETURN(FrameworkProfile m, std::move(resolved));
    m.assumptions.clear();  // printed for the job's own mode only
    p.by_mode.push_back(std::move(m));
  }
  return p;
}

}  // namespace strata
