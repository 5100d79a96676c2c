#include "strata/hang/parsers/run_context.h"

#include <array>
#include <cctype>

#include "strata/core/strings.h"
#include "strata/core/text_scan.h"

namespace strata::hang::run_context {
namespace {

// `key` followed (after spaces, '=' or ':') by a digit: "loss': 0.24", "loss=0.08", "loss: 8.3".
bool NumberAfter(std::string_view line, std::string_view key) {
  for (size_t at = line.find(key); at != std::string_view::npos;
       at = line.find(key, at + key.size())) {
    size_t i = at + key.size();
    bool separated = false;
    while (i < line.size() && (line[i] == ' ' || line[i] == '=' || line[i] == ':')) {
      separated = separated || line[i] != ' ';
      ++i;
    }
    if (separated && i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])) != 0)
      return true;
  }
  return false;
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

}  // namespace

bool ShowsTrainingProgress(std::string_view line) {
  return NumberAfter(line, "'loss'") || NumberAfter(line, "loss") || IterationCount(line) ||
         NumberAfter(line, "step") || Contains(line, "Saving model checkpoint to") ||
         (Contains(line, "Checkpoint global_step") && Contains(line, "is ready"));
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
  constexpr std::array<std::string_view, 5> kNamed = {"new_group", "_new_process_group_helper",
                                                      "_store_based_barrier", "_create_c10d_store",
                                                      "__init__"};
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
