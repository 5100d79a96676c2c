#include "strata/importer/swift_saved_args.h"

#include <fmt/format.h>

#include <system_error>

#include "strata/core/file_io.h"
#include "strata/core/text_scan.h"
#include "strata/importer/input_readers.h"

namespace strata {

namespace fs = std::filesystem;

namespace {

void Rename(Settings& s, const std::string& from, const std::string& to) {
  const SourcedValue* v = s.Use(from);
  if (v == nullptr || s.Has(to)) return;
  const SourcedValue copy = *v;
  s.Set(to, copy.value, copy.source);
}

// accelerate's PartialState as TrainingArguments saved it: "...\nNum processes: 8\n...".
std::optional<int64_t> NumProcesses(const std::string& state) {
  constexpr std::string_view kKey = "Num processes: ";
  const size_t at = state.find(kKey);
  if (at == std::string::npos) return std::nullopt;
  const size_t begin = at + kKey.size();
  const size_t end = state.find('\n', begin);
  auto n = ParseInt64(std::string_view(state).substr(
      begin, end == std::string::npos ? std::string::npos : end - begin));
  if (!n || *n <= 0) return std::nullopt;
  return n;
}

}  // namespace

bool IsSwiftV1SftArgs(const Settings& s) {
  return s.Has("sft_type") && s.Has("batch_size") && !s.Has("per_device_train_batch_size");
}

Status NormaliseSwiftV1SftArgs(Settings& s, const fs::path& dir, JobBuilder& job) {
  Rename(s, "batch_size", "per_device_train_batch_size");
  Rename(s, "sft_type", "train_type");
  Rename(s, "model_id_or_path", "model_name_or_path");  // later 1.x files name the checkpoint
  Rename(s, "model_type", "swift_model_id");
  Rename(s, "quantization_bit", "quant_bits");
  Rename(s, "lora_target_modules", "target_modules");  // 1.x's LoRA names, 3.x's after
  Rename(s, "lora_dropout_p", "lora_dropout");
  const fs::path sibling = dir / "training_args.json";
  std::error_code ec;
  if (fs::is_regular_file(sibling, ec)) {
    STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(sibling.string()));
    STRATA_ASSIGN_OR_RETURN(Settings hf, ReadJsonSettings(text, sibling.string()));
    // sft_args.json is what the user gave; TrainingArguments only repeats or adds to it.
    for (const auto& [key, sv] : hf.Unused()) {
      if (!s.Has(key)) s.Set(key, sv.value, sv.source);
    }
  }
  if (const SourcedValue* state = s.Use("distributed_state")) {
    if (auto n = NumProcesses(state->value)) {
      job.Set("cluster.gpus_per_node", std::to_string(*n),
              state->source + " (Num processes: " + std::to_string(*n) + ")");
      job.Default("cluster.nodes", "1",
                  "the saved state gives the world size only; one node assumed (for several, "
                  "pass --nodes and --gpus-per-node)");
    }
  }
  return OkStatus();
}

void ReadSwiftWorldSize(Settings& s, JobBuilder& job) {
  if (!s.Has("local_world_size") || !s.Has("global_world_size")) return;
  const SourcedValue local = *s.Use("local_world_size");
  const SourcedValue global = *s.Use("global_world_size");
  auto per_node = ParseInt64(local.value);
  auto world = ParseInt64(global.value);
  // ms-swift writes -1/1 before the process group exists (a run on one GPU); only a world it
  // ran on is a cluster.
  if (!per_node || !world || *per_node <= 0 || *world <= 0 || *world % *per_node != 0) return;
  job.Set("cluster.gpus_per_node", std::to_string(*per_node), local.source);
  job.Derive("cluster.nodes", std::to_string(*world / *per_node),
             fmt::format("{} {} / {} {}", global.source, *world, local.source, *per_node));
}

}  // namespace strata
