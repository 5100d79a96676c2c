#include "strata/importer/launch_bundle.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "strata/core/text_scan.h"

namespace strata {

namespace fs = std::filesystem;

Bundle::Bundle(std::string input, std::vector<std::string> files)
    : input_(std::move(input)), files_(std::move(files)), used_(files_.size(), false) {}

Result<fs::path> Bundle::Find(const std::string& value, const fs::path& base,
                              const std::string& named_by, int line) {
  const std::string name = fs::path(value).filename().string();
  for (size_t i = 0; i < files_.size(); ++i) {
    if (!name.empty() && fs::path(files_[i]).filename().string() == name) {
      used_[i] = true;
      return fs::path(files_[i]);
    }
  }
  std::error_code ec;
  fs::path path = value;
  if (path.is_relative()) {
    path = base / value;
    for (fs::path dir = base;
         !fs::exists(path, ec) && dir.has_parent_path() && dir.parent_path() != dir;) {
      dir = dir.parent_path();
      if (fs::exists(dir / value, ec)) path = dir / value;
    }
    if (!fs::exists(path, ec)) path = base / value;  // the error names the first place
  }
  if (fs::is_regular_file(path, ec)) return path;
  Error e = InvalidInput(fmt::format(
      "{} names '{}', which is not there (looked for {}{})", named_by, value, path.string(),
      fs::path(value).is_relative() ? " and in the folders above it" : ""));
  e.InFile(input_);
  if (line > 0) e.AtLine(line);
  e.WithHint(fmt::format("give the file with the input: strata import {} .../{}",
                         fs::path(input_).filename().string(), name));
  return e;
}

bool Bundle::Gives(const std::string& name) const {
  return std::any_of(files_.begin(), files_.end(),
                     [&](const std::string& f) { return fs::path(f).filename().string() == name; });
}

Status Bundle::CheckAllUsed() const {
  for (size_t i = 0; i < files_.size(); ++i) {
    if (used_[i]) continue;
    return InvalidInput(fmt::format("{} was given with {}, which names no file called {}",
                                    files_[i], fs::path(input_).filename().string(),
                                    fs::path(files_[i]).filename().string()))
        .WithHint(
            "the other files of a bundle are those the launch names: its --config_file, "
            "--deepspeed JSON, deepspeed_config_file, --job.config_file or a sourced script");
  }
  return OkStatus();
}

namespace {

// The GPUs per node a Slurm header asks for: --gpus-per-node=[type:]N, --gres=gpu[:type]:N,
// else --gpus-per-task x --ntasks-per-node.
std::optional<std::pair<int64_t, std::string>> SlurmGpusPerNode(Settings& slurm) {
  auto last_number = [](const std::string& v) {
    const size_t colon = v.rfind(':');
    return ParseInt64(colon == std::string::npos ? v : v.substr(colon + 1));
  };
  if (const SourcedValue* v = slurm.Use("gpus_per_node")) {
    if (auto n = last_number(v->value)) return std::pair{*n, v->source};
  }
  if (const SourcedValue* v = slurm.Use("gres"); v != nullptr && v->value.starts_with("gpu")) {
    if (auto n = last_number(v->value.substr(0, v->value.find(',')))) {
      return std::pair{*n, v->source};
    }
  }
  const SourcedValue* per_task = slurm.Use("gpus_per_task");
  const SourcedValue* tasks = slurm.Use("ntasks_per_node");
  if (per_task != nullptr && tasks != nullptr) {
    auto g = ParseInt64(per_task->value);
    auto t = ParseInt64(tasks->value);
    if (g && t) return std::pair{*g * *t, per_task->source + " x " + tasks->source};
  }
  if (per_task != nullptr) {
    // --ntasks over --nodes tasks per node.
    const SourcedValue* ntasks = slurm.Use("ntasks");
    const SourcedValue* nodes = slurm.Use("nodes");
    if (ntasks != nullptr && nodes != nullptr) {
      auto g = ParseInt64(per_task->value);
      auto n = ParseInt64(ntasks->value);
      auto k = ParseInt64(nodes->value);
      if (g && n && k && *k > 0 && *n % *k == 0) {
        return std::pair{*g * (*n / *k), fmt::format("{} x ({} / {})", per_task->source,
                                                     ntasks->source, nodes->source)};
      }
    }
  }
  return std::nullopt;
}

// The tasks per node: --ntasks-per-node, else --ntasks over --nodes.
std::optional<std::pair<int64_t, std::string>> SlurmTasksPerNode(Settings& slurm) {
  if (const SourcedValue* v = slurm.Use("ntasks_per_node")) {
    if (auto n = ParseInt64(v->value); n && *n > 0) return std::pair{*n, v->source};
  }
  const SourcedValue* ntasks = slurm.Use("ntasks");
  const SourcedValue* nodes = slurm.Use("nodes");
  if (ntasks != nullptr && nodes != nullptr) {
    auto n = ParseInt64(ntasks->value);
    auto k = ParseInt64(nodes->value);
    if (n && k && *k > 0 && *n % *k == 0 && *n > 0) {
      return std::pair{*n / *k, fmt::format("{} / {}", ntasks->source, nodes->source)};
    }
  }
  return std::nullopt;
}

}  // namespace

// Slurm's options as #SBATCH lines and sbatch's command line write them: "--nodes=4", "-N 4",
// "-N4", "--exclusive" (no value: the next word is another option).
void ReadSlurmOptions(const std::vector<std::string>& words, const std::string& source,
                      Settings& out) {
  for (size_t i = 0; i < words.size(); ++i) {
    std::string key = words[i], value;
    if (!key.starts_with("-")) continue;
    if (const size_t eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    } else if (key.size() > 2 && key[1] != '-') {
      value = key.substr(2);  // -N4
      key = key.substr(0, 2);
    } else if (i + 1 < words.size() && !words[i + 1].starts_with("-")) {
      value = words[++i];
    }
    if (key == "-N") key = "--nodes";
    if (key == "-n") key = "--ntasks";
    if (key == "-G") key = "--gpus";
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'')) {
      value = value.substr(1, value.size() - 2);
    }
    out.Set(key, value, source);
  }
}

// #SBATCH lines: the allocation a batch script runs in ("#SBATCH --nodes=4", "#SBATCH -N 4").
Settings ReadSlurmHeader(std::string_view text, const std::string& file) {
  Settings out;
  ReadSlurmHeader(text, file, out);
  return out;
}

void ReadSlurmHeader(std::string_view text, const std::string& file, Settings& out) {
  const std::string base = fs::path(file).filename().string();
  int line = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string row(TrimSpace(text.substr(pos, end - pos)));
    pos = end + 1;
    ++line;
    if (!row.starts_with("#SBATCH")) continue;
    std::vector<std::string> words;
    for (size_t i = 7; i < row.size();) {
      const size_t start = row.find_first_not_of(" \t", i);
      if (start == std::string::npos || row[start] == '#') break;
      const size_t stop = std::min(row.find_first_of(" \t", start), row.size());
      words.push_back(row.substr(start, stop - start));
      i = stop;
    }
    ReadSlurmOptions(words, fmt::format("{}:{}: {}", base, line, row), out);
  }
}

// The header's sizes where the launch does not give them, or gives a variable the scheduler
// sets when the job runs (--nnodes $SLURM_NNODES): the header is what the scheduler sets it to.
void ApplySlurmHeader(Settings& slurm, JobBuilder& job, bool one_rank_per_task) {
  auto open = [&](const char* key) {
    return !job.Has(key) || job.Get(key).find('$') != std::string::npos;
  };
  // srun starting the training program itself (no torchrun): each task is one rank, so the
  // ranks per node are the tasks per node, whatever GPUs the header asks for.
  std::optional<std::pair<int64_t, std::string>> tasks;
  if (one_rank_per_task) tasks = SlurmTasksPerNode(slurm);
  if (tasks && open("cluster.gpus_per_node")) {
    job.Set("cluster.gpus_per_node", std::to_string(tasks->first),
            tasks->second + " (srun starts the program once per task: one rank, one GPU each)");
    if (auto gpus = SlurmGpusPerNode(slurm); gpus && gpus->first != tasks->first) {
      job.Note(
          fmt::format("{} gives {} GPUs per node, but srun starts {} tasks per node ({}), "
                      "one rank each: the job runs {} ranks per node",
                      gpus->second, gpus->first, tasks->first, tasks->second, tasks->first));
    }
  }
  if (const SourcedValue* n = slurm.Use("nodes")) {
    if (open("cluster.nodes") && ParseInt64(n->value)) {
      job.Set("cluster.nodes", n->value, n->source);
    } else if (job.Get("cluster.nodes") != n->value) {
      job.Note(
          fmt::format("{} asks for {} nodes, the launch runs on {}: the launch's count is "
                      "used",
                      n->source, n->value, job.Get("cluster.nodes")));
    }
  }
  if (auto gpus = tasks ? std::nullopt : SlurmGpusPerNode(slurm)) {
    if (open("cluster.gpus_per_node")) {
      job.Set("cluster.gpus_per_node", std::to_string(gpus->first), gpus->second);
    } else if (job.Get("cluster.gpus_per_node") != std::to_string(gpus->first)) {
      job.Note(
          fmt::format("{} gives {} GPUs per node, the launch starts {}: the launch's count "
                      "is used",
                      gpus->second, gpus->first, job.Get("cluster.gpus_per_node")));
    }
  }
}

}  // namespace strata
