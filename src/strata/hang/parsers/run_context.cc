#include "strata/hang/parsers/run_context.h"

#include <array>
#include <cctype>
#include <string>

#include "strata/core/strings.h"
#include "strata/core/text_scan.h"

namespace strata::hang::run_context {
namespace {

bool WordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// `key` as a word of its own (not the tail of "warmup_step" or "label_loss") followed, after
// spaces, '=' or ':', by a digit: "loss': 0.24", "loss=0.08", "loss: 8.3", "step = 5800". With
// `counter`, spaces alone may separate when the number is a count of a total: "step 120/1000".
bool NumberAfter(std::string_view line, std::string_view key, bool counter = false) {
  for (size_t at = line.find(key); at != std::string_view::npos;
       at = line.find(key, at + key.size())) {
    if (at > 0 && WordChar(line[at - 1])) continue;
    size_t i = at + key.size();
    bool separated = false;
    bool spaced = false;
    while (i < line.size() && (line[i] == ' ' || line[i] == '=' || line[i] == ':')) {
      separated = separated || line[i] != ' ';
      spaced = true;
      ++i;
    }
    const size_t digits = i;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])) != 0) ++i;
    if (i == digits) continue;
    if (separated || (counter && spaced && i < line.size() && line[i] == '/')) return true;
  }
  return false;
}

// A dump of settings (argparse's "Namespace(lr=0.0001, warmup_step=100, ...)", a dataclass's
// "TrainingArguments(...)" or "...Config(...)"): its numbers are settings, not progress.
bool SettingsDump(std::string_view line) {
  return Contains(line, "Namespace(") || Contains(line, "Arguments(") || Contains(line, "Config(");
}

// "iteration       48/      50": the word, spaces, a count, '/'.
bool IterationCount(std::string_view line) {
  const size_t at = line.find("iteration ");
  if (at == std::string_view::npos) return false;
  size_t i = at + 10;
  while (i < line.size() && line[i] == ' ') ++i;
  const size_t digits = i;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])) != 0) ++i;
  return i > digits && i < line.size() && line[i] == '/';
}

// The description tqdm prints before a bar's percentage, without what a paste or a launcher put in
// front of it ("[1762]" line numbers, "[rank0]:", Ray's "(pid=12)"): "" for HF Trainer's training
// bar, "Epoch 0:", "Steps:", "Loading checkpoint shards:", "Map:".
std::string_view BarDescription(std::string_view before_bar) {
  const size_t percent = before_bar.rfind('%');
  if (percent == std::string_view::npos) return {};
  size_t i = percent;
  while (i > 0 && std::isdigit(static_cast<unsigned char>(before_bar[i - 1])) != 0) --i;
  std::string_view d = before_bar.substr(0, i);
  for (bool cut = true; cut;) {
    while (!d.empty() && (d.front() == ' ' || d.front() == ':')) d.remove_prefix(1);
    cut = false;
    if (!d.empty() && (d.front() == '[' || d.front() == '(')) {
      const size_t close = d.find(d.front() == '[' ? ']' : ')');
      if (close == std::string_view::npos) break;
      d.remove_prefix(close + 1);
      cut = true;
    }
  }
  while (!d.empty() && (d.back() == ' ' || d.back() == ':')) d.remove_suffix(1);
  return d;
}

// A bar of the training loop: no description (HF Trainer's), or one that names the loop's unit.
// A bar described otherwise ("Loading checkpoint shards", "Map", "Tokenizing", "Preparing test
// set...") is a set-up or evaluation stage, which runs before any training step.
bool TrainingBar(std::string_view description) {
  if (description.empty()) return true;
  const std::string lower = AsciiLower(description);
  for (std::string_view word : {"epoch", "step", "train", "iter", "batch", "update"}) {
    if (Contains(lower, word)) return true;
  }
  return false;
}

// tqdm's bar part way: "| 4339/6642 [2:40:27<2:11:03,  3.41s/it]" (huggingface/trl#2923). A
// count above zero and below the total before '/', then " [" and the elapsed time. "0/128
// [10:02<?" never advanced; a full bar ("Loading checkpoint shards: 100%| 4/4 [00:05<00:00")
// is a stage that finished, often a set-up one: neither shows the run going on; nor does a bar
// part way through a set-up stage (BarDescription, TrainingBar).
bool TqdmDone(std::string_view line) {
  for (size_t slash = line.find('/'); slash != std::string_view::npos;
       slash = line.find('/', slash + 1)) {
    size_t i = slash;
    while (i > 0 && std::isdigit(static_cast<unsigned char>(line[i - 1])) != 0) --i;
    if (i == slash || (i > 0 && line[i - 1] != ' ' && line[i - 1] != '|')) continue;
    const auto done = LeadingInt(line.substr(i, slash - i));
    size_t j = slash + 1;
    const auto total = LeadingInt(line.substr(j, 18));
    while (j < line.size() && std::isdigit(static_cast<unsigned char>(line[j])) != 0) ++j;
    if (!total || !line.substr(j).starts_with(" [")) continue;
    const std::string_view rest = line.substr(j + 2);
    const size_t colon = rest.find(':');
    const size_t lt = rest.find('<');
    if (colon == std::string_view::npos || lt == std::string_view::npos || colon > lt) continue;
    if (done && *done > 0 && *done < *total) return TrainingBar(BarDescription(line.substr(0, i)));
  }
  return false;
}

}  // namespace

bool ShowsTrainingProgress(std::string_view line) {
  if (Contains(line, "Saving model checkpoint to") ||
      (Contains(line, "Checkpoint global_step") && Contains(line, "is ready")))
    return true;
  if (SettingsDump(line)) return false;
  return NumberAfter(line, "'loss'") || NumberAfter(line, "loss") || IterationCount(line) ||
         NumberAfter(line, "step", true) || NumberAfter(line, "Step", true) || TqdmDone(line);
}

std::optional<int64_t> TqdmStalledMs(std::string_view line) {
  const size_t bar = line.find("| 0/");
  if (bar == std::string_view::npos) return std::nullopt;
  size_t i = bar + 4;
  const size_t total = i;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])) != 0) ++i;
  if (i == total || !line.substr(i).starts_with(" [")) return std::nullopt;
  std::string_view elapsed = line.substr(i + 2);
  const size_t lt = elapsed.find('<');
  // tqdm's "H:MM:SS" fits in 12 characters; the bound also keeps the sum below from overflowing.
  if (lt == std::string_view::npos || lt > 12) return std::nullopt;
  elapsed = elapsed.substr(0, lt);  // "10:02" or "1:02:03"
  int64_t seconds = 0;
  int fields = 0;
  while (!elapsed.empty()) {
    size_t used = 0;
    const auto n = LeadingInt(elapsed, &used);
    if (!n || *n < 0 || ++fields > 3) return std::nullopt;
    seconds = seconds * 60 + *n;
    elapsed.remove_prefix(used);
    if (elapsed.empty()) break;
    if (elapsed.front() != ':') return std::nullopt;
    elapsed.remove_prefix(1);
  }
  if (fields < 2) return std::nullopt;
  return seconds * 1000;
}

bool EndsTraceback(std::string_view line) {
  // "[rank0]: RuntimeError: ..." / "[rank0]:RuntimeError": the launcher's prefix first.
  if (line.starts_with("[rank")) {
    const size_t close = line.find("]:");
    if (close == std::string_view::npos) return false;
    line = TrimSpace(line.substr(close + 2));
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  const std::string_view name = line.substr(0, colon);
  for (char c : name) {
    if (!WordChar(c) && c != '.') return false;
  }
  return name.ends_with("Error") || name.ends_with("Exception") || name.ends_with("Interrupt") ||
         name.ends_with("Exit");
}

std::string FrameFunction(std::string_view line) {
  const size_t file = line.find("File \"");
  if (file == std::string_view::npos) return "";
  const size_t number = line.find("\", line ", file);
  if (number == std::string_view::npos) return "";
  const size_t in = line.find(", in ", number);
  if (in == std::string_view::npos) return "";
  return std::string(TrimSpace(line.substr(in + 5)));
}

bool SetUpFunction(std::string_view f) {
  // torchrun's agent, once its rendezvous is done and before any worker starts
  // (SimpleElasticAgent._initialize_workers in torch/distributed/elastic/agent/server/api.py),
  // assigns the workers' ranks: _assign_worker_ranks -> _share_and_gather, an all-gather of the
  // agents' role infos through the store (huggingface/accelerate#1645 timed out there). Its
  // "gather" is the launcher's, not the training's.
  constexpr std::array<std::string_view, 7> kNamed = {
      "new_group", "_new_process_group_helper", "_store_based_barrier", "_create_c10d_store",
      "__init__",  "_assign_worker_ranks",      "_share_and_gather"};
  for (std::string_view n : kNamed) {
    if (f == n) return true;
  }
  return f.starts_with("init") || f.starts_with("_init") || Contains(f, "rendezvous");
}

bool RunningFunction(std::string_view f) {
  constexpr std::array<std::string_view, 7> kCollective = {
      "barrier", "broadcast", "all_reduce", "all_gather", "gather", "scatter", "reduce"};
  for (std::string_view n : kCollective) {
    if (Contains(f, n)) return true;
  }
  constexpr std::array<std::string_view, 7> kLoop = {
      "training_step",   "train_step", "_inner_training_loop", "train_epoch", "training_loop",
      "save_checkpoint", "save_model"};
  for (std::string_view n : kLoop) {
    if (Contains(f, n)) return true;
  }
  return false;
}

}  // namespace strata::hang::run_context
