#include "strata/hang/parsers/log_signals.h"

#include <charconv>

#include "strata/core/strings.h"
#include "strata/core/text_scan.h"

namespace strata::hang {
namespace {

std::string Trimmed(std::string_view s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string_view::npos) return "";
  const size_t b = s.find_last_not_of(" \t\r");
  return std::string(s.substr(a, std::min<size_t>(b - a + 1, 300)));
}

// "Using eth0:10.0.0.1<0>" or "Using [0]docker0:172.17.0.1<0>" -> "eth0:10.0.0.1"
std::string InterfaceAfterUsing(std::string_view line) {
  size_t at = line.find("Using");
  if (at == std::string_view::npos) return "";
  std::string_view rest = line.substr(at + 5);
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == ':')) rest.remove_prefix(1);
  if (!rest.empty() && rest.front() == '[') {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos) return "";
    rest.remove_prefix(close + 1);
  }
  const size_t end = rest.find_first_of("< ;");
  return std::string(rest.substr(0, end));
}

}  // namespace

std::optional<int64_t> RankPrefix(std::string_view line) {
  const size_t at = line.find("[rank");
  if (at == std::string_view::npos || at > 64) return std::nullopt;
  std::string_view rest = line.substr(at + 5);
  const auto rank = LeadingInt(rest);
  if (!rank) return std::nullopt;
  const size_t close = rest.find("]:");
  if (close == std::string_view::npos || close > 12) return std::nullopt;
  return rank;
}

std::vector<LogSignal> ScanLogSignals(std::string_view text, const std::string& file) {
  std::vector<LogSignal> out;
  ForEachLine(text, [&](const TextLine& l) {
    const std::string_view line = l.text;
    LogSignal s;
    // The driver API's own name, as TensorFlow's and JAX's allocators print it:
    // "cuda_driver.cc:806] failed to allocate 512.00M (536870912 bytes) from device:
    // CUDA_ERROR_OUT_OF_MEMORY: out of memory" (horovod/horovod#552). c10's CUDA check names the
    // runtime's error, "what():  CUDA error: out of memory" (rwth-i6/returnn#1482), and on ROCm
    // "HIP error: out of memory". NCCL's allocator, "Failed to CUDA calloc async 1920 bytes" under
    // "Last error:" (deepspeedai/DeepSpeed#3827): not even a small buffer found device memory.
    if (Contains(line, "CUDA out of memory") || Contains(line, "OutOfMemoryError") ||
        Contains(line, "CUDA_ERROR_OUT_OF_MEMORY") || Contains(line, "CUDA error: out of memory") ||
        Contains(line, "HIP error: out of memory") || Contains(line, "Failed to CUDA calloc") ||
        (Contains(line, "Cuda failure") && Contains(line, "out of memory")) ||
        (Contains(line, "cuda runtime error (") && Contains(line, "out of memory"))) {
      s.kind = LogSignalKind::kOom;
    } else if (const size_t it = line.find(" iteration ");
               it != std::string_view::npos && Contains(line, "/")) {
      std::string_view rest = line.substr(it + 11);
      while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
      const auto n = LeadingInt(rest);
      if (!n) return;
      s.kind = LogSignalKind::kIteration;
      s.value = *n;
    } else if (Contains(line, "NCCL INFO") &&
               (Contains(line, "Bootstrap") || Contains(line, "NET/Socket") ||
                Contains(line, "NET/IB")) &&
               Contains(line, "Using")) {
      s.kind = LogSignalKind::kNcclInterface;
      s.detail = InterfaceAfterUsing(line.substr(line.find("NCCL INFO")));
      if (Contains(line, "NET/IB")) {
        const size_t oob = line.find("OOB ");
        s.detail = oob == std::string_view::npos ? s.detail : Trimmed(line.substr(oob + 4));
        if (const size_t lt = s.detail.find('<'); lt != std::string::npos) s.detail.resize(lt);
      }
      std::string_view head = line;
      if (auto r = RankPrefix(line)) head = line.substr(line.find("]:") + 2);
      s.host = std::string(head.substr(0, head.find(':')));
    } else if (const size_t a = line.find("NCCL communicator was aborted on rank ");
               a != std::string_view::npos) {
      // c10d raises it in the process whose communicator was aborted, naming its own rank in the
      // communicator: NCCLComm::getNcclComm's "NCCL communicator was aborted on rank ", rank_,
      // ". ", then " Original reason for failure was: " and the watchdog's reason
      // (pytorch/pytorch@37ee6bc70d614a05c23e73cd1248816398e50bd1
      // torch/csrc/distributed/c10d/NCCLUtils.cpp). The rank is read even where the reason is cut.
      const auto rank = LeadingInt(line.substr(a + 38));
      if (!rank) return;
      s.kind = LogSignalKind::kCommAborted;
      s.value = *rank;
    } else if (const size_t f = line.find("File \""); f != std::string_view::npos &&
                                                      Contains(line, "\", line ") &&
                                                      Contains(line, ", in ")) {
      const std::string_view rest = line.substr(f + 6);
      const size_t q = rest.find('"');
      const size_t in = rest.rfind(", in ");
      // The ", in " the condition saw may come before `File "` (fuzz finding 9): not a frame.
      if (q == std::string_view::npos || in == std::string_view::npos) return;
      s.kind = LogSignalKind::kTracebackFrame;
      s.frame_file = std::string(rest.substr(0, q));
      s.detail = Trimmed(rest.substr(in + 5));
    } else {
      return;
    }
    s.global_rank = RankPrefix(line);
    s.file = file;
    s.line = l.number;
    s.text = Trimmed(line);
    out.push_back(std::move(s));
  });
  return out;
}

}  // namespace strata::hang
