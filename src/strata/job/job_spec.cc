#include "strata/job/job_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>

#include "strata/core/did_you_mean.h"
#include "strata/core/file_io.h"
#include "strata/core/yaml_fields.h"
#include "strata/hw/cluster.h"
#include "strata/hw/custom_gpu.h"
#include "strata/job/enum_names.h"
#include "strata/job/job_fields.h"
#include "strata/job/job_validation.h"
#include "strata/job/pipeline_split.h"
#include "strata/job/training_modes_parse.h"
#include "strata/model/model_config.h"
#include "strata/model/sequence_lengths.h"

namespace strata {
namespace {

constexpr EnumName<DType> kDTypes[] = {
    {DType::kFp32, "fp32"}, {DType::kBf16, "bf16"}, {DType::kFp16, "fp16"}, {DType::kFp8, "fp8"}};
constexpr EnumName<RecomputeGranularity> kGranularities[] = {
    {RecomputeGranularity::kNone, "none"},
    {RecomputeGranularity::kSelective, "selective"},
    {RecomputeGranularity::kFull, "full"}};
constexpr EnumName<RecomputeMethod> kMethods[] = {{RecomputeMethod::kUniform, "uniform"},
                                                  {RecomputeMethod::kBlock, "block"}};
constexpr EnumName<CrossEntropyImpl> kCrossEntropies[] = {{CrossEntropyImpl::kFused, "fused"},
                                                          {CrossEntropyImpl::kNative, "native"}};
constexpr EnumName<StateDictKind> kStateDicts[] = {{StateDictKind::kSharded, "sharded"},
                                                   {StateDictKind::kFull, "full"}};
constexpr EnumName<AttentionKernel> kAttentionKernels[] = {{AttentionKernel::kFlash, "flash"},
                                                           {AttentionKernel::kUnfused, "unfused"}};

/// "49152", "48Ki", "2.31M": token counts through the one parser the model module owns.
/// Sequence lengths read K as 1,024 ("8K" = 8,192), other counts as 1,000.
Result<double> TokenField(YamlMap& map, const std::string& key, bool sequence_length = false) {
  STRATA_ASSIGN_OR_RETURN(std::string text, map.String(key));
  auto tokens = sequence_length ? ParseSequenceLength(text) : ParseTokenCount(text);
  if (!tokens.ok()) return map.ErrorAt(key, tokens.error().message).WithHint(tokens.error().hint);
  if (*tokens < 1)
    return map.ErrorAt(key, fmt::format("expected at least 1 token, got '{}'", text));
  return *tokens;
}

Status ApplyOverride(YAML::Node& root, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  auto set_error = [&](std::string message) {
    return InvalidInput(std::move(message)).InField("--set");
  };
  if (eq == std::string::npos || eq == 0) {
    return set_error(fmt::format("expected key=value, got '{}'", assignment))
        .WithHint("e.g. --set parallel.ep=16 --set precision.grads=bf16");
  }
  const std::string key = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  const auto& keys = JobSpecKeys();
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
    return set_error(fmt::format("unknown key '{}'", key)).WithHint(DidYouMeanHint(key, keys));
  }
  YAML::Node parsed;
  try {
    parsed = YAML::Load(value);
  } catch (const YAML::Exception& e) {
    return set_error(fmt::format("'{}': malformed value: {}", assignment, e.msg));
  }
  if (!parsed || parsed.IsNull()) return set_error(fmt::format("'{}': empty value", assignment));
  // yaml-cpp's operator= on a Node assigns through it; reset() rebinds the cursor instead.
  YAML::Node cursor;
  cursor.reset(root);
  size_t start = 0;
  for (size_t dot = key.find('.'); dot != std::string::npos; dot = key.find('.', start)) {
    const std::string part = key.substr(start, dot - start);
    if (start == 0 && part == "cluster" && cursor[part] && cursor[part].IsScalar()) {
      // `--set cluster.nodes=2` on a job that names a cluster file: the file stays (its network,
      // PCIe and storage), its GPU and counts become the job's own, and the override changes
      // one of them.
      auto cluster = LoadCluster(cursor[part].Scalar());
      if (!cluster.ok()) return Error(cluster.error()).InField("cluster");
      YAML::Node own(YAML::NodeType::Map);
      own["file"] = cursor[part].Scalar();
      own["gpu"] = cluster->gpu.name;
      own["gpus_per_node"] = cluster->gpus_per_node;
      own["nodes"] = cluster->nodes;
      cursor[part] = own;
    }
    if (cursor[part] && !cursor[part].IsMap()) {
      return set_error(fmt::format("'{}': '{}' is not a mapping in the job file", key, part))
          .WithHint(fmt::format("set '{}' itself, or write it as a mapping in the job file", part));
    }
    YAML::Node next = cursor[part];
    cursor.reset(next);
    start = dot + 1;
  }
  cursor[key.substr(start)] = parsed;
  return OkStatus();
}

// Before a required key of `section` ("" = the top level) is reported missing: a misspelled one
// ("micro_bach") is the unknown field it is, with its did-you-mean, not a missing one. The keys a
// section may hold are the job-field table's (JobSpecKeys).
Status CheckKeysBeforeRequired(const YamlMap& map, const std::string& section,
                               const std::vector<std::string>& required) {
  bool all_there = true;
  for (const std::string& key : required) all_there &= map.Has(key);
  if (all_there) return OkStatus();
  const std::string prefix = section.empty() ? "" : section + ".";
  std::vector<std::string> allowed;
  for (const std::string& key : JobSpecKeys()) {
    if (!key.starts_with(prefix)) continue;
    const std::string rest = key.substr(prefix.size());
    const std::string first = rest.substr(0, rest.find('.'));
    // One name per key of this level, in the table's order (the hint lists each once).
    if (std::ranges::find(allowed, first) == allowed.end()) allowed.push_back(first);
  }
  return map.CheckNoUnknownKeys(allowed);
}

Status ParseCluster(YamlMap& top, JobSpec& job) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node node, top.Node("cluster"));
  if (node.IsScalar()) {
    // A cluster file by name or path; a relative path is relative to the job file.
    std::string ref = node.Scalar();
    if (ref.find('/') != std::string::npos && !job.file.empty() &&
        std::filesystem::path(ref).is_relative()) {
      const auto beside = std::filesystem::path(job.file).parent_path() / ref;
      if (std::error_code ec; std::filesystem::exists(beside, ec)) ref = beside.string();
    }
    auto cluster = LoadCluster(ref);
    if (!cluster.ok()) {
      Error e = std::move(cluster).error();
      if (e.file.empty()) e = top.ErrorAt("cluster", e.message).WithHint(e.hint);
      return e;
    }
    job.cluster.name = cluster->name;
    job.cluster.file = ref;
    job.cluster.gpu = cluster->gpu.name;
    job.cluster.gpu_spec = cluster->gpu;
    job.cluster.gpus_per_node = cluster->gpus_per_node;
    job.cluster.nodes = cluster->nodes;
    return OkStatus();
  }
  STRATA_ASSIGN_OR_RETURN(YamlMap cluster, top.Map("cluster"));
  STRATA_RETURN_IF_ERROR(
      CheckKeysBeforeRequired(cluster, "cluster", {"gpu", "gpus_per_node", "nodes"}));
  if (cluster.Has("file")) {
    // A cluster file with the job's own GPU and counts (what --set on a named cluster writes):
    // the file keeps the network; the node count may change, the node itself may not.
    STRATA_ASSIGN_OR_RETURN(std::string ref, cluster.String("file"));
    auto file = LoadCluster(ref);
    if (!file.ok()) return Error(std::move(file).error()).InField("cluster.file");
    job.cluster.name = file->name;
    job.cluster.file = ref;
    STRATA_ASSIGN_OR_RETURN(job.cluster.gpus_per_node, cluster.PositiveInt("gpus_per_node"));
    if (cluster.Has("shared_nodes")) {
      STRATA_ASSIGN_OR_RETURN(job.cluster.shared_nodes, cluster.Bool("shared_nodes"));
    }
    // Part of each node whose other GPUs run the rest of the work (an RL split's rollout).
    if (job.cluster.shared_nodes) {
      if (auto part = SharedNodes(*file, job.cluster.gpus_per_node); !part.ok()) {
        return cluster.ErrorAt("gpus_per_node", part.error().message);
      }
    } else if (auto part = WithGpusPerNode(*file, job.cluster.gpus_per_node); !part.ok()) {
      // A rack-scale NVLink domain (partial_nodes) may be used in part; any other node is whole.
      return cluster.ErrorAt("gpus_per_node", part.error().message)
          .WithHint(file->partial_nodes
                        ? fmt::format("use at most {} GPUs of each node", file->gpus_per_node)
                        : "copy the cluster file and describe the other node in it");
    }
  }
  STRATA_ASSIGN_OR_RETURN(GpuSpec gpu, ReadGpuField(cluster, "gpu"));
  job.cluster.gpu = gpu.name;
  job.cluster.gpu_spec = std::move(gpu);
  STRATA_ASSIGN_OR_RETURN(job.cluster.gpus_per_node, cluster.PositiveInt("gpus_per_node"));
  STRATA_ASSIGN_OR_RETURN(job.cluster.nodes, cluster.PositiveInt("nodes"));
  if (!job.cluster.file.empty() || !cluster.Has("shared_nodes"))
    return cluster.CheckNoUnknownKeys();
  return cluster.ErrorAt("shared_nodes", "shared_nodes is part of a cluster file's node")
      .WithHint("name the cluster file (cluster.file) whose nodes are shared");
}

/// parallel.pp_schedule, parallel.stage_split and parallel.pipeline_layout (after pp and vpp).
Status ParsePipelineFields(YamlMap& p, ParallelLayout& l) {
  if (p.Has("pp_schedule")) {
    STRATA_ASSIGN_OR_RETURN(l.pp_schedule, EnumField(p, "pp_schedule", kPipelineSchedules));
  }
  if (p.Has("stage_split")) {
    STRATA_ASSIGN_OR_RETURN(l.stage_split, EnumField(p, "stage_split", kStageSplitRules));
  }
  if (p.Has("pipeline_layout")) {
    STRATA_ASSIGN_OR_RETURN(std::string text, p.String("pipeline_layout"));
    auto layout = ParsePipelineLayout(text, l.pp);
    if (!layout.ok()) {
      return p.ErrorAt("pipeline_layout", layout.error().message).WithHint(layout.error().hint);
    }
    l.pipeline_layout = *layout;
    // megatron-core takes VPP from the layout when --num-virtual-stages-per-pipeline-rank is
    // not given (TransformerConfig.__post_init__); a given one must agree (checked later).
    if (!p.Has("vpp")) l.vpp = (*layout)->virtual_stages_per_rank;
  }
  return OkStatus();
}

Status ParseParallel(YamlMap& top, JobSpec& job) {
  STRATA_ASSIGN_OR_RETURN(YamlMap p, top.Map("parallel"));
  ParallelLayout& l = job.layout;
  const std::pair<const char*, int64_t*> sizes[] = {{"tp", &l.tp}, {"pp", &l.pp}, {"vpp", &l.vpp},
                                                    {"cp", &l.cp}, {"ep", &l.ep}, {"etp", &l.etp}};
  for (const auto& [key, target] : sizes) {
    if (p.Has(key)) {
      STRATA_ASSIGN_OR_RETURN(*target, p.PositiveInt(key));
    }
  }
  // 0 is their default, an even split (docs/job-file.md), so it may be written out.
  for (const auto& [key, target] :
       {std::pair<const char*, int64_t*>{"first_stage_layers", &l.first_stage_layers},
        {"last_stage_layers", &l.last_stage_layers}}) {
    if (!p.Has(key)) continue;
    STRATA_ASSIGN_OR_RETURN(*target, p.Int(key));
    if (*target < 0) {
      return p.ErrorAt(key, fmt::format("expected a number of layers, or 0 for an even split, "
                                        "got {}",
                                        *target));
    }
  }
  l.dp = 0;  // derived from the world size unless given (then checked)
  if (p.Has("dp")) {
    STRATA_ASSIGN_OR_RETURN(l.dp, p.PositiveInt("dp"));
  }
  for (const auto& [key, target] :
       {std::pair<const char*, bool*>{"account_for_embedding", &l.account_for_embedding},
        {"account_for_loss", &l.account_for_loss}}) {
    if (p.Has(key)) {
      STRATA_ASSIGN_OR_RETURN(*target, p.Bool(key));
    }
  }
  if (p.Has("sequence_parallel")) {
    STRATA_ASSIGN_OR_RETURN(l.sequence_parallel, p.Bool("sequence_parallel"));
  }
  if (p.Has("cp_comm_type")) {
    // megatron-core's a2a+p2p (hierarchical CP) needs --hierarchical-context-parallel-sizes,
    // which strata does not model: refused rather than priced as something else.
    auto text = p.String("cp_comm_type");
    if (text.ok() && *text == "a2a+p2p") {
      return p.ErrorAt("cp_comm_type", "a2a+p2p (hierarchical context parallelism) is not modelled")
          .WithHint("use p2p (megatron-core's default), all_gather or a2a");
    }
    STRATA_ASSIGN_OR_RETURN(l.cp_comm_type, EnumField(p, "cp_comm_type", kCpCommTypes));
  }
  STRATA_RETURN_IF_ERROR(ParsePipelineFields(p, l));
  return p.CheckNoUnknownKeys();
}

Status ParseSequence(YamlMap& top, JobSpec& job) {
  STRATA_ASSIGN_OR_RETURN(YamlMap seq, top.Map("sequence"));
  STRATA_RETURN_IF_ERROR(CheckKeysBeforeRequired(seq, "sequence", {"max_tokens"}));
  STRATA_ASSIGN_OR_RETURN(job.sequence.max_tokens, TokenField(seq, "max_tokens", true));
  if (seq.Has("mean_tokens") && seq.Has("histogram")) {
    return seq.ErrorAt("histogram", "give mean_tokens or histogram, not both");
  }
  if (seq.Has("mean_tokens")) {
    STRATA_ASSIGN_OR_RETURN(job.sequence.mean_tokens, TokenField(seq, "mean_tokens", true));
    if (job.sequence.mean_tokens > job.sequence.max_tokens) {
      return seq.ErrorAt("mean_tokens",
                         fmt::format("mean_tokens {} is larger than max_tokens {}",
                                     job.sequence.mean_tokens, job.sequence.max_tokens));
    }
  }
  if (seq.Has("histogram")) {
    STRATA_ASSIGN_OR_RETURN(job.sequence.histogram, seq.String("histogram"));
  }
  if (seq.Has("image_tokens")) {
    STRATA_ASSIGN_OR_RETURN(std::string text, seq.String("image_tokens"));
    if (text == "0") {
      job.sequence.image_tokens = 0;
    } else {
      STRATA_ASSIGN_OR_RETURN(job.sequence.image_tokens, TokenField(seq, "image_tokens", true));
    }
    const double sample =
        job.sequence.mean_tokens > 0 ? job.sequence.mean_tokens : job.sequence.max_tokens;
    if (job.sequence.image_tokens > sample) {
      return seq.ErrorAt("image_tokens",
                         fmt::format("{} image tokens per sample is more than the sample's {} "
                                     "tokens (image tokens are part of them)",
                                     job.sequence.image_tokens, sample));
    }
    job.sequence.image_tokens_given = true;
  }
  if (seq.Has("packing")) {
    STRATA_ASSIGN_OR_RETURN(job.sequence.packing, seq.Bool("packing"));
  }
  if (seq.Has("std_tokens")) {
    STRATA_ASSIGN_OR_RETURN(std::string text, seq.String("std_tokens"));
    // 0 is a spread (every sample the mean's length); the length parser reads K as 1,024.
    if (text == "0") {
      job.sequence.std_tokens = 0;
    } else {
      STRATA_ASSIGN_OR_RETURN(job.sequence.std_tokens, TokenField(seq, "std_tokens", true));
    }
    if (!job.sequence.packing || job.sequence.mean_tokens <= 0) {
      return seq
          .ErrorAt("std_tokens",
                   "std_tokens describes the samples packed into each sequence: it needs "
                   "packing: true and mean_tokens")
          .WithHint("for unpacked samples of varying length give a histogram");
    }
    // Lengths between 0 and max_tokens with this mean spread at most
    // sqrt(mean x (max - mean)) (the Bhatia-Davis bound, all samples at 0 or max): a larger std
    // describes no data, and was clamped silently downstream.
    const double mean = job.sequence.mean_tokens;
    const double most = std::sqrt(mean * std::max(0.0, job.sequence.max_tokens - mean));
    if (job.sequence.std_tokens > most * (1 + 1e-9)) {
      return seq
          .ErrorAt("std_tokens",
                   fmt::format("std_tokens {:g} is impossible for samples of mean {:g} and at most "
                               "{:g} tokens: their spread is at most sqrt(mean x (max - mean)) = "
                               "{:.0f} tokens",
                               job.sequence.std_tokens, mean, job.sequence.max_tokens, most))
          .WithHint(fmt::format("give std_tokens of at most {:.0f}", std::floor(most)));
    }
  }
  return seq.CheckNoUnknownKeys();
}

Status ParseRecompute(YamlMap& top, JobSpec& job) {
  if (!top.Has("recompute")) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(YamlMap r, top.Map("recompute"));
  STRATA_ASSIGN_OR_RETURN(job.recompute.granularity, EnumField(r, "granularity", kGranularities));
  const bool full = job.recompute.granularity == RecomputeGranularity::kFull;
  for (const char* key : {"method", "num_layers"}) {
    if (r.Has(key) && !full) {
      return r.ErrorAt(key, fmt::format("'{}' applies only to granularity: full", key));
    }
  }
  if (r.Has("method")) {
    STRATA_ASSIGN_OR_RETURN(job.recompute.method, EnumField(r, "method", kMethods));
  }
  if (r.Has("num_layers")) {
    STRATA_ASSIGN_OR_RETURN(job.recompute.num_layers, r.PositiveInt("num_layers"));
  }
  if (r.Has("modules")) {
    STRATA_RETURN_IF_ERROR(ParseRecomputeModules(r, job));
  }
  if (r.Has("selective_ac_option")) {
    STRATA_RETURN_IF_ERROR(ParseTitanSelectiveAc(r, job));
  }
  return r.CheckNoUnknownKeys();
}

Status ParsePrecisionAndOptimizer(YamlMap& top, JobSpec& job) {
  if (top.Has("precision")) {
    STRATA_ASSIGN_OR_RETURN(YamlMap p, top.Map("precision"));
    if (p.Has("params")) {
      STRATA_ASSIGN_OR_RETURN(job.param_dtype, EnumField(p, "params", kDTypes));
      if (job.param_dtype == DType::kFp8) {
        // FP8 is not "weights at 1 byte": the embedding and output layer stay bf16, Transformer
        // Engine keeps FP8 copies and transposes next to the bf16 weights, and the measured
        // ms-swift FP8 run used more memory than its bf16 twin. FP8 is the `fp8:` section.
        return p
            .ErrorAt("params",
                     "FP8 training keeps bf16 parameters and adds FP8 copies; 'params: fp8' "
                     "would print a saving the measurements contradict")
            .WithHint(
                "set precision.params: bf16 and fp8: {recipe: delayed | tensorwise | "
                "blockwise | mxfp8 | torchao_tensorwise | torchao_rowwise}");
      }
    }
    if (p.Has("grads")) {
      STRATA_ASSIGN_OR_RETURN(job.grad_dtype, EnumField(p, "grads", kDTypes));
      if (job.grad_dtype == DType::kFp8) {  // Megatron --fp16 keeps an fp16 buffer
        return p.ErrorAt("grads", fmt::format("gradient buffers are fp32, bf16 or fp16, got '{}'",
                                              DTypeName(job.grad_dtype)));
      }
    }
    STRATA_RETURN_IF_ERROR(p.CheckNoUnknownKeys());
  }
  if (top.Has("optimizer")) {
    STRATA_ASSIGN_OR_RETURN(YamlMap o, top.Map("optimizer"));
    if (o.Has("name")) {
      STRATA_ASSIGN_OR_RETURN(job.optimizer.name, o.String("name"));
      const std::vector<std::string> optimizers = {"adam", "adamw", "muon", "adam8bit"};
      if (std::find(optimizers.begin(), optimizers.end(), job.optimizer.name) == optimizers.end()) {
        return o
            .ErrorAt("name", fmt::format("unknown optimizer '{}', expected one of: {}",
                                         job.optimizer.name, fmt::join(optimizers, ", ")))
            .WithHint(DidYouMeanHint(job.optimizer.name, optimizers));
      }
    }
    if (o.Has("distributed")) {
      STRATA_ASSIGN_OR_RETURN(job.optimizer.distributed, o.Bool("distributed"));
    }
    if (o.Has("master_weights")) {
      STRATA_ASSIGN_OR_RETURN(job.optimizer.master_dtype, EnumField(o, "master_weights", kDTypes));
    }
    if (o.Has("moments")) {
      STRATA_ASSIGN_OR_RETURN(job.optimizer.moment_dtype, EnumField(o, "moments", kDTypes));
    }
    STRATA_RETURN_IF_ERROR(o.CheckNoUnknownKeys());
  }
  if (top.Has("loss")) {
    STRATA_ASSIGN_OR_RETURN(YamlMap loss, top.Map("loss"));
    STRATA_ASSIGN_OR_RETURN(job.cross_entropy, EnumField(loss, "cross_entropy", kCrossEntropies));
    STRATA_RETURN_IF_ERROR(loss.CheckNoUnknownKeys());
  }
  return OkStatus();
}

Status ParseAttention(YamlMap& top, JobSpec& job) {
  if (!top.Has("attention")) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(YamlMap a, top.Map("attention"));
  if (a.Has("kernel")) {
    STRATA_ASSIGN_OR_RETURN(job.attention.kernel, EnumField(a, "kernel", kAttentionKernels));
  }
  if (a.Has("dropout")) {
    STRATA_ASSIGN_OR_RETURN(job.attention.dropout, a.Number("dropout"));
    if (!(job.attention.dropout >= 0 && job.attention.dropout < 1)) {
      return a.ErrorAt("dropout", "expected a probability from 0 to below 1 (Megatron's 0.1)");
    }
  }
  return a.CheckNoUnknownKeys();  // with CP > 1: CheckLayoutArithmetic refuses it
}

Status ParseOverlap(YamlMap& top, JobSpec& job) {
  if (!top.Has("overlap")) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(YamlMap o, top.Map("overlap"));
  OverlapSpec& v = job.overlap;
  for (auto [key, target] : {std::pair{"tp_comm", &v.tp_comm},
                             {"moe_a2a", &v.moe_a2a},
                             {"cp_comm", &v.cp_comm},
                             {"pp_p2p", &v.pp_p2p},
                             {"grad_reduce", &v.grad_reduce},
                             {"param_gather", &v.param_gather}}) {
    if (o.Has(key)) {
      STRATA_ASSIGN_OR_RETURN(*target, o.Bool(key));
    }
  }
  v.pp_p2p_given = o.Has("pp_p2p");
  v.grad_reduce_given = o.Has("grad_reduce");
  return o.CheckNoUnknownKeys();
}

Status ParseCheckpoint(YamlMap& top, JobSpec& job) {
  if (!top.Has("checkpoint")) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(YamlMap c, top.Map("checkpoint"));
  if (c.Has("optimizer")) {
    STRATA_ASSIGN_OR_RETURN(job.checkpoint.optimizer, c.Bool("optimizer"));
  }
  if (c.Has("save_16bit_model")) {
    STRATA_ASSIGN_OR_RETURN(job.checkpoint.save_16bit_model, c.Bool("save_16bit_model"));
  }
  if (c.Has("state_dict")) {
    STRATA_ASSIGN_OR_RETURN(job.checkpoint.state_dict, EnumField(c, "state_dict", kStateDicts));
  }
  if (c.Has("async_save")) {
    STRATA_ASSIGN_OR_RETURN(job.checkpoint.async_save, c.Bool("async_save"));
  }
  return c.CheckNoUnknownKeys();
}

Status ParseFramework(YamlMap& top, JobSpec& job) {
  if (!top.Has("framework")) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(YamlMap f, top.Map("framework"));
  FrameworkSpec& out = job.framework;
  if (f.Has("name")) {
    STRATA_ASSIGN_OR_RETURN(out.name, f.String("name"));
  }
  const std::vector<std::string>& names = FrameworkNames();
  if (std::find(names.begin(), names.end(), out.name) == names.end()) {
    return f
        .ErrorAt("name", fmt::format("unknown framework '{}', expected one of: {}", out.name,
                                     fmt::join(names, ", ")))
        .WithHint(DidYouMeanHint(out.name, names));
  }
  if (f.Has("version")) {
    STRATA_ASSIGN_OR_RETURN(out.version, f.String("version"));
  }
  if (f.Has("compile")) {
    STRATA_ASSIGN_OR_RETURN(out.compile, f.Bool("compile"));
  }
  if (f.Has("gdn_kernel")) {
    STRATA_ASSIGN_OR_RETURN(out.gdn_kernel, f.String("gdn_kernel"));
    const std::vector<std::string>& kernels = GdnKernelNames();
    if (std::find(kernels.begin(), kernels.end(), out.gdn_kernel) == kernels.end()) {
      return f
          .ErrorAt("gdn_kernel", fmt::format("unknown Gated DeltaNet kernel '{}', expected one "
                                             "of: {}",
                                             out.gdn_kernel, fmt::join(kernels, ", ")))
          .WithHint(DidYouMeanHint(out.gdn_kernel, kernels));
    }
  }
  if (f.Has("expandable_segments")) {
    STRATA_ASSIGN_OR_RETURN(out.expandable_segments, f.Bool("expandable_segments"));
  }
  if (f.Has("liger_kernel")) {
    STRATA_ASSIGN_OR_RETURN(out.liger_kernel, f.Bool("liger_kernel"));
  }
  // The allocator setting alone does not name the framework: the default stays an assumption.
  out.given = f.Has("name") || f.Has("version") || f.Has("compile") || f.Has("gdn_kernel");
  return f.CheckNoUnknownKeys();
}

Status ParseThroughput(YamlMap& top, JobSpec& job) {
  if (!top.Has("throughput")) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(YamlMap t, top.Map("throughput"));
  ThroughputSpec& out = job.throughput;
  if (t.Has("tokens_per_s") && (t.Has("step_time") || t.Has("tokens_per_step"))) {
    return t.ErrorAt("tokens_per_s",
                     "give tokens_per_s or step_time (with tokens_per_step), "
                     "not both");
  }
  if (t.Has("tokens_per_s")) {
    STRATA_ASSIGN_OR_RETURN(out.tokens_per_s, TokenField(t, "tokens_per_s"));
  }
  if (t.Has("tokens_per_step")) {
    if (!t.Has("step_time")) {
      return t.ErrorAt("tokens_per_step", "tokens_per_step needs step_time beside it");
    }
    STRATA_ASSIGN_OR_RETURN(out.tokens_per_step, TokenField(t, "tokens_per_step"));
  }
  if (t.Has("step_time")) {
    STRATA_ASSIGN_OR_RETURN(std::string text, t.String("step_time"));
    auto seconds = ParseSeconds(text);
    if (!seconds.ok()) {
      return t.ErrorAt("step_time", seconds.error().message).WithHint("e.g. 120s, 950ms, 2min");
    }
    if (!(seconds->s() > 0)) return t.ErrorAt("step_time", "expected a positive time");
    out.step_time_s = seconds->s();
  }
  return t.CheckNoUnknownKeys();
}

Status ParseFrozen(YamlMap& top, JobSpec& job) {
  if (!top.Has("frozen")) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(YAML::Node list, top.Node("frozen"));
  if (!list.IsSequence()) {
    return top.ErrorAt("frozen", "expected a list of module kinds, e.g. [vision]");
  }
  for (const auto& item : list) {
    if (!item.IsScalar()) return top.ErrorAt("frozen", "expected module kind names");
    job.frozen.push_back(item.Scalar());
  }
  return OkStatus();
}

}  // namespace

bool IsFrozen(const JobSpec& job, ModuleKind kind) {
  if (job.adapter.on()) return true;
  const std::string_view name = ModuleKindName(kind);
  return std::any_of(job.frozen.begin(), job.frozen.end(),
                     [&](const std::string& f) { return f == name; });
}

std::string_view DTypeName(DType dtype) { return NameOf(kDTypes, dtype); }
std::string_view RecomputeGranularityName(RecomputeGranularity g) {
  return NameOf(kGranularities, g);
}
std::string_view RecomputeMethodName(RecomputeMethod m) { return NameOf(kMethods, m); }
std::string_view CrossEntropyImplName(CrossEntropyImpl impl) {
  return NameOf(kCrossEntropies, impl);
}

const std::vector<std::string>& FrameworkNames() {
  // data/frameworks.yaml has one entry for each (tests/sim/framework_profile_test.cc).
  static const std::vector<std::string> names = {"megatron-core", "megatron-bridge", "torchtitan",
                                                 "deepspeed",     "hf-trainer",      "ms-swift",
                                                 "verl"};
  return names;
}

const std::vector<std::string>& GdnKernelNames() {
  // data/kernel_efficiency.yaml's gated_deltanet section has one entry for each.
  static const std::vector<std::string> names = {"fla", "flashqla", "torch"};
  return names;
}

int64_t DTypeBytes(DType dtype) {
  switch (dtype) {
    case DType::kFp32:
      return 4;
    case DType::kBf16:
    case DType::kFp16:
      return 2;
    case DType::kFp8:
      return 1;
  }
  return 4;
}

const std::vector<std::string>& JobSpecKeys() {
  // The one table (job_fields.cc) that docs/job-file.md is generated from.
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const JobField& f : JobFields()) out.emplace_back(f.key);
    return out;
  }();
  return keys;
}

namespace {
Result<JobSpec> ParseFields(YAML::Node& root, const std::string& file);
}  // namespace

namespace {
Result<JobSpec> ParseRoot(YAML::Node root, const std::string& file,
                          const std::vector<std::string>& overrides,
                          const std::string& model_only = "");
}  // namespace

Result<JobSpec> ParseJobSpec(const std::string& text, const std::string& file,
                             const std::vector<std::string>& overrides) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, file));
  if (!root.IsMap()) {
    return InvalidInput("expected a mapping of key: value at the top of a job file").InFile(file);
  }
  return ParseRoot(root, file, overrides);
}

Result<JobSpec> BuildJobSpec(const std::string& model, const std::vector<std::string>& overrides) {
  YAML::Node root(YAML::NodeType::Map);
  root["model"] = model;
  return ParseRoot(root, "", overrides, model);
}

namespace {
Result<JobSpec> ParseRoot(YAML::Node root, const std::string& file,
                          const std::vector<std::string>& overrides,
                          const std::string& model_only) {
  bool sets_model_parallel = false, sets_dp = false;
  for (const std::string& assignment : overrides) {
    STRATA_RETURN_IF_ERROR(ApplyOverride(root, assignment));
    for (const char* key : {"parallel.tp=", "parallel.pp=", "parallel.cp=", "cluster=",
                            "cluster.nodes=", "cluster.gpus_per_node="}) {
      if (assignment.starts_with(key)) sets_model_parallel = true;
    }
    if (assignment.starts_with("parallel.dp=")) sets_dp = true;
  }
  // Changing TP, PP, CP or the cluster from the command line re-derives DP rather than
  // contradicting the file's DP: world = TP x PP x CP x DP holds by construction.
  if (sets_model_parallel && !sets_dp && root["parallel"] && root["parallel"].IsMap()) {
    root["parallel"].remove("dp");
  }
  // A rate from the command line replaces the file's step time, and the other way round.
  auto sets = [&](const char* key) {
    for (const std::string& a : overrides) {
      if (a.starts_with(std::string(key) + "=")) return true;
    }
    return false;
  };
  if (root["throughput"] && root["throughput"].IsMap()) {
    if (sets("throughput.tokens_per_s") && !sets("throughput.step_time")) {
      root["throughput"].remove("step_time");
      root["throughput"].remove("tokens_per_step");
    }
    if (sets("throughput.step_time") && !sets("throughput.tokens_per_s")) {
      root["throughput"].remove("tokens_per_s");
      if (!sets("throughput.tokens_per_step")) root["throughput"].remove("tokens_per_step");
    }
  }
  // Likewise switching recompute away from full drops the file's full-only settings.
  for (const std::string& assignment : overrides) {
    if (assignment.starts_with("recompute.granularity=") && !assignment.ends_with("=full") &&
        root["recompute"].IsMap()) {
      root["recompute"].remove("method");
      root["recompute"].remove("num_layers");
    }
    if (assignment.starts_with("recompute.granularity=") && !assignment.ends_with("=selective") &&
        root["recompute"].IsMap()) {
      root["recompute"].remove("modules");
      // The file's torchtitan option goes; one given with --set stays, to be refused.
      if (!sets("recompute.selective_ac_option")) root["recompute"].remove("selective_ac_option");
    }
    // megatron-core's module list and torchtitan's option exclude each other: the one --set
    // names replaces the file's other one.
    if (assignment.starts_with("recompute.modules=") && root["recompute"].IsMap() &&
        !sets("recompute.selective_ac_option")) {
      root["recompute"].remove("selective_ac_option");
    }
    if (assignment.starts_with("recompute.selective_ac_option=") && root["recompute"].IsMap() &&
        !sets("recompute.modules")) {
      root["recompute"].remove("modules");
    }
  }
  if (!model_only.empty()) {
    // No job file: the sections nothing can stand in for must all come from --set.
    std::vector<std::string> missing;
    for (const char* section : {"cluster", "parallel", "batch", "sequence"}) {
      if (!root[section]) missing.emplace_back(section);
    }
    // A misspelt model is the first thing to say: the sections it would be told to add next
    // cannot make it known.
    if (!missing.empty()) {
      auto model = LoadModelConfig(model_only);
      if (!model.ok()) {
        Error e = std::move(model).error();
        if (e.field.empty() && e.file.empty()) e.field = "--model";
        return e;
      }
    }
    if (!missing.empty()) {
      return InvalidInput(fmt::format("a job for model '{}' given without a job file is missing: "
                                      "{}",
                                      model_only, fmt::join(missing, ", ")))
          .InField("--model")
          .WithHint(
              "give them with --set (e.g. --set cluster=h100-8x8-ib400 --set parallel.tp=8 "
              "--set batch.micro_batch=1 --set batch.global_batch=512 "
              "--set sequence.max_tokens=8Ki), or write a job file (docs/job-file.md)");
    }
  }
  auto job = ParseFields(root, file);
  if (job.ok()) return job;
  // A bad value that came from --set is reported as such, not at a line of the file.
  Error e = std::move(job).error();
  for (const std::string& assignment : overrides) {
    if (!e.field.empty() && assignment.starts_with(e.field + "=")) {
      e.line = 0;
      e.field = "--set " + e.field;
    }
  }
  return e;
}
}  // namespace

namespace {
Result<JobSpec> ParseFields(YAML::Node& root, const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, file, ""));
  JobSpec job;
  job.file = file;
  // Read off the node, not through `top`, which would count `actor` as a known key.
  if (root.IsMap() && root["actor"] && !root["model"]) {
    // An RL job (rl/rl_job.h) given where a training job is read: say what to give instead.
    std::string actor;
    if (auto a = top.Map("actor"); a.ok() && a->Has("job")) {
      if (auto name = a->String("job"); name.ok()) actor = *name;
    }
    return top
        .ErrorAt("actor",
                 "an RL job (actor, rollout, placement), not a training job: `strata rl` reads "
                 "it")
        .WithHint(actor.empty()
                      ? std::string("give its actor's training job (actor.job) instead")
                      : fmt::format("for the actor's training alone, give its job: {}", actor));
  }
  STRATA_RETURN_IF_ERROR(CheckKeysBeforeRequired(top, "", {"model", "batch", "sequence"}));
  STRATA_ASSIGN_OR_RETURN(job.model, top.String("model"));
  STRATA_RETURN_IF_ERROR(ParseCluster(top, job));
  STRATA_RETURN_IF_ERROR(ParseParallel(top, job));
  {
    STRATA_ASSIGN_OR_RETURN(YamlMap batch, top.Map("batch"));
    STRATA_RETURN_IF_ERROR(
        CheckKeysBeforeRequired(batch, "batch", {"micro_batch", "global_batch"}));
    STRATA_ASSIGN_OR_RETURN(job.micro_batch, batch.PositiveInt("micro_batch"));
    STRATA_ASSIGN_OR_RETURN(job.global_batch, batch.PositiveInt("global_batch"));
    STRATA_RETURN_IF_ERROR(batch.CheckNoUnknownKeys());
  }
  STRATA_RETURN_IF_ERROR(ParseSequence(top, job));
  STRATA_RETURN_IF_ERROR(ParseRecompute(top, job));
  STRATA_RETURN_IF_ERROR(ParsePrecisionAndOptimizer(top, job));
  STRATA_RETURN_IF_ERROR(ParseFrozen(top, job));
  STRATA_RETURN_IF_ERROR(ParseTrainingModes(top, job));
  STRATA_RETURN_IF_ERROR(ParseOverlap(top, job));
  STRATA_RETURN_IF_ERROR(ParseAttention(top, job));
  STRATA_RETURN_IF_ERROR(ParseFramework(top, job));
  STRATA_RETURN_IF_ERROR(ParseCheckpoint(top, job));
  STRATA_RETURN_IF_ERROR(ParseThroughput(top, job));
  if (top.Has("mtp")) {
    STRATA_ASSIGN_OR_RETURN(job.mtp, top.Bool("mtp"));
  }
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  // The model-free rules (world size, DP, batch arithmetic) run here, so every JobSpec that
  // leaves this function has a consistent layout; the model-dependent rules need the config.
  auto checked = CheckLayoutArithmetic(job);
  if (!checked.ok()) {
    Error e = std::move(checked).error();
    e.InFile(file);
    return e;
  }
  return job;
}
}  // namespace

Result<JobSpec> LoadJobSpec(const std::string& path_or_name,
                            const std::vector<std::string>& overrides) {
  std::string path = path_or_name;
  // A bare file name is a path when it has a job file's extension (JSON is YAML) or names a file
  // here: `--job ds.json` read only data/jobs/ds.json.yaml before.
  std::error_code ec;
  const bool looks_like_path = path_or_name.find('/') != std::string::npos ||
                               path_or_name.ends_with(".yaml") || path_or_name.ends_with(".yml") ||
                               path_or_name.ends_with(".json") ||
                               std::filesystem::is_regular_file(path_or_name, ec);
  if (!looks_like_path) path = DataDir() + "/jobs/" + path_or_name + ".yaml";
  auto text = ReadFile(path);
  if (!text.ok()) {
    Error e = std::move(text).error();
    if (!looks_like_path) {
      e.file.clear();  // the catalog's absolute path says nothing the message does not
      e.message = fmt::format("no job named '{}' in the catalog (data/jobs/)", path_or_name);
      e.hint = fmt::format("give a path to a job file, or a catalog name such as '{}'",
                           kReferenceJobName);
    }
    return e;
  }
  return ParseJobSpec(*text, looks_like_path ? path : "data/jobs/" + path_or_name + ".yaml",
                      overrides);
}

}  // namespace strata
