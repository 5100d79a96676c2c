#include "strata/logs/titan_header.h"

#include <cstdlib>
#include <string>

#include "strata/core/text_scan.h"

namespace strata {

namespace {

// The text after torchtitan's logger prefix ("[titan] 2025-08-22 07:52:56,570 - root - INFO - ").
std::string_view Message(std::string_view text) {
  const size_t info = text.find(" - INFO - ");
  return info == std::string_view::npos ? text : text.substr(info + 10);
}

// "8,030,261,248" -> 8030261248.
std::optional<int64_t> GroupedInt(std::string_view s) {
  std::string digits;
  for (char c : TrimSpace(s)) {
    if (c != ',') digits += c;
  }
  return ParseInt64(digits);
}

// "['dp_shard', 'tp'], [4, 2]" -> {dp_shard 4, tp 2}.
std::vector<std::pair<std::string, int64_t>> ListMesh(std::string_view s) {
  std::vector<std::pair<std::string, int64_t>> out;
  const size_t names_end = s.find(']');
  const size_t dims_start =
      names_end == std::string_view::npos ? names_end : s.find('[', names_end);
  if (dims_start == std::string_view::npos) return out;
  std::vector<std::string> names;
  std::string_view list = s.substr(0, names_end);
  for (size_t q = list.find('\''); q != std::string_view::npos; q = list.find('\'', q + 1)) {
    const size_t close = list.find('\'', q + 1);
    if (close == std::string_view::npos) break;
    names.emplace_back(list.substr(q + 1, close - q - 1));
    q = close;
  }
  std::string_view dims = s.substr(dims_start + 1);
  dims = dims.substr(0, dims.find(']'));
  size_t i = 0;
  for (std::string_view d : SplitWords(dims)) {
    if (!d.empty() && d.back() == ',') d.remove_suffix(1);
    const auto n = ParseInt64(d);
    if (!n || i >= names.size()) return {};
    out.emplace_back(names[i++], *n);
  }
  return i == names.size() ? out : std::vector<std::pair<std::string, int64_t>>{};
}

// "parallelism: pp=1, dp_replicate=1, dp_shard=256, cp=1, tp=1, ep=32".
std::vector<std::pair<std::string, int64_t>> KeyValueMesh(std::string_view s) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (std::string_view item : SplitWords(s)) {
    if (!item.empty() && item.back() == ',') item.remove_suffix(1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) return {};
    const auto n = ParseInt64(item.substr(eq + 1));
    if (!n) return {};
    out.emplace_back(std::string(item.substr(0, eq)), *n);
  }
  return out;
}

}  // namespace

bool ParseTitanHeaderLine(std::string_view text, int64_t line, TitanHeader& h) {
  const std::string_view m = Message(text);
  if (m.starts_with("Building ") && m.find("device mesh with") != std::string_view::npos) {
    if (h.mesh_line > 0) return true;
    const size_t with = m.find("device mesh with") + 16;
    const std::string_view rest = TrimSpace(m.substr(with));
    h.mesh = rest.starts_with("parallelism:") ? KeyValueMesh(rest.substr(12)) : ListMesh(rest);
    if (!h.mesh.empty()) h.mesh_line = line;
    return true;
  }
  if (m.starts_with("Building ")) {
    const size_t with = m.find(" with ");
    if (with == std::string_view::npos) return false;
    const std::vector<std::string_view> words = SplitWords(m.substr(9, with - 9));
    if (words.size() != 2) return false;
    if (h.model_line == 0) {
      h.model_name = std::string(words[0]);
      h.model_flavor = std::string(words[1]);
      h.model_line = line;
    }
    return true;
  }
  if (const size_t cap = m.find(" capacity: "); cap != std::string_view::npos && cap <= 5) {
    const size_t with = m.rfind(" with ");
    const size_t gib = m.rfind("GiB memory");
    if (with == std::string_view::npos || gib == std::string_view::npos || gib < with) return false;
    if (h.device_line > 0) return true;
    std::string_view name = TrimSpace(m.substr(cap + 11, with - cap - 11));
    // "NVIDIA H100 80GB HBM3 (0)": the device index is not part of the name.
    if (!name.empty() && name.back() == ')') name = TrimSpace(name.substr(0, name.rfind('(')));
    h.device_name = std::string(name);
    h.device_gib = std::strtod(std::string(m.substr(with + 6, gib - with - 6)).c_str(), nullptr);
    h.device_line = line;
    return true;
  }
  if (m.starts_with("Peak FLOPS used for computing MFU: ")) {
    if (h.peak_line > 0) return true;
    char* end = nullptr;
    const std::string value(TrimSpace(m.substr(35)));
    const double peak = std::strtod(value.c_str(), &end);
    if (end != value.c_str() && peak > 0) {
      h.peak_flop_per_s = peak;
      h.peak_line = line;
    }
    return true;
  }
  if (m.starts_with("Model ") && m.find(" total parameters") != std::string_view::npos) {
    const size_t size = m.find(" size: ");
    if (size == std::string_view::npos) return false;
    const size_t total = m.find(" total parameters", size);
    if (!h.total_params) h.total_params = GroupedInt(m.substr(size + 7, total - size - 7));
    // "Model llama3 8B size:" names the model too, when the "Building" line was not kept.
    const std::vector<std::string_view> words = SplitWords(m.substr(6, size - 6));
    if (h.model_line == 0 && words.size() == 2) {
      h.model_name = std::string(words[0]);
      h.model_flavor = std::string(words[1]);
      h.model_line = line;
    }
    return true;
  }
  if (m.starts_with("Trainer is initialized with ") || m.starts_with("Training starts at step")) {
    if (h.batch_line > 0 || m.find("local batch size ") == std::string_view::npos) return true;
    h.local_batch = IntAfter(m, "local batch size ");
    h.global_batch = IntAfter(m, "global batch size ");
    h.accumulation = IntAfter(m, "gradient accumulation steps ");
    h.seq_len = IntAfter(m, "sequence length ");
    h.batch_line = line;
    return true;
  }
  return false;
}

}  // namespace strata
