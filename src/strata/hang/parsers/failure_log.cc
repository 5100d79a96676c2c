#include "strata/hang/parsers/failure_log.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "strata/core/text_scan.h"
#include "strata/hang/parsers/log_signals.h"

namespace strata::hang {
namespace {

constexpr size_t kMaxTextChars = 300;

bool Contains(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}

// Without ANSI escape sequences and CR, trimmed.
std::string Clean(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\x1b') {
      if (i + 1 < raw.size() && raw[i + 1] == '[') {
        i += 2;
        while (i < raw.size() && !(raw[i] >= 0x40 && raw[i] <= 0x7e)) ++i;
      } else {
        ++i;
      }
      continue;
    }
    if (raw[i] != '\r') out.push_back(raw[i]);
  }
  return std::string(TrimSpace(out));
}

// The token after `key` up to '<' (NCCL's "<port>"), a space, a comma or a quote.
std::string TokenAfter(std::string_view s, std::string_view key) {
  const size_t at = s.find(key);
  if (at == std::string_view::npos) return "";
  std::string_view rest = s.substr(at + key.size());
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  const size_t end = rest.find_first_of("< ,'\"");
  return std::string(rest.substr(0, end));
}

// "[PG ID 0 PG GUID 0(default_pg) Rank 2]", "[PG 1 Rank 1]", "[PG 0 (default_pg) Rank 0]" or
// "[Rank 6]": the PG-local rank and the group id.
void ReadPgRank(std::string_view line, FailureSignal* s) {
  size_t open = line.find("[PG ");
  if (open == std::string_view::npos) open = line.find("[Rank ");
  if (open == std::string_view::npos) return;
  const size_t close = line.find(']', open);
  if (close == std::string_view::npos || close - open > 120) return;
  const std::string_view inside = line.substr(open + 1, close - open - 1);
  s->pg_rank = IntAfter(inside, "Rank ");
  if (auto id = IntAfter(inside, "PG ID ")) {
    s->pg_id = std::to_string(*id);
  } else if (auto pg = IntAfter(inside, "PG ")) {
    s->pg_id = std::to_string(*pg);
  }
}

// "<host>:<pid>:<tid> [dev] ..." after any launcher prefix: the host.
std::string NcclHost(std::string_view line) {
  const size_t nccl = line.find(" NCCL ");
  if (nccl == std::string_view::npos) return "";
  std::string_view head = line.substr(0, nccl);
  const size_t dev = head.rfind(" [");
  if (dev == std::string_view::npos) return "";
  head = head.substr(0, dev);
  if (const size_t sp = head.rfind(' '); sp != std::string_view::npos) head.remove_prefix(sp + 1);
  if (const size_t br = head.rfind("]:"); br != std::string_view::npos) head.remove_prefix(br + 2);
  const size_t c1 = head.find(':');
  if (c1 == std::string_view::npos || head.find(':', c1 + 1) == std::string_view::npos) return "";
  return std::string(head.substr(0, c1));
}

// "{3, 4, 5}" -> ranks.
std::vector<int64_t> RankSet(std::string_view s) {
  std::vector<int64_t> out;
  const size_t open = s.find('{');
  const size_t close = s.find('}', open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos) return out;
  std::string_view inside = s.substr(open + 1, close - open - 1);
  while (!inside.empty() && out.size() < 100000) {
    size_t used = 0;
    const auto r = LeadingInt(inside, &used);
    if (!r) break;
    out.push_back(*r);
    inside.remove_prefix(used);
    while (!inside.empty() && (inside.front() == ',' || inside.front() == ' '))
      inside.remove_prefix(1);
  }
  return out;
}

// "ALLREDUCE, TensorShape=..." or "REDUCE)." -> the op name: capitals, digits and underscores.
std::string OpName(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && (std::isupper(static_cast<unsigned char>(s[n])) ||
                          std::isdigit(static_cast<unsigned char>(s[n])) || s[n] == '_')) {
    ++n;
  }
  return std::string(s.substr(0, n));
}

// ProcessGroupWrapper's report: "Rank 1 is running collective: CollectiveFingerPrint(
// SequenceNumber=21, OpType=BROADCAST, ...), but Rank 0 is running collective:
// CollectiveFingerPrint(SequenceNumber=21OpType=ALLREDUCE)" (the second side may lack its comma
// or be cut off by a paste). Older torch prints "but Rank 1 is running collective: REDUCE.".
void ReadDetailMismatch(std::string_view line, FailureSignal* s) {
  const size_t first = line.find("Rank ", line.find("Detected mismatch"));
  const size_t but = line.find("but Rank ");
  const std::string_view a = line.substr(
      first == std::string_view::npos ? line.size() : first,
      but == std::string_view::npos || but < first ? std::string_view::npos : but - first);
  const std::string_view b = but == std::string_view::npos ? "" : line.substr(but + 4);
  if (auto r = IntAfter(a, "Rank ")) s->ranks.push_back(*r);
  s->seq = IntAfter(a, "SequenceNumber=");
  if (const size_t op = a.find("OpType="); op != std::string_view::npos)
    s->op = OpName(a.substr(op + 7));
  if (auto r = IntAfter(b, "Rank ")) s->ranks.push_back(*r);
  s->other_seq = IntAfter(b, "SequenceNumber=");
  if (const size_t op = b.find("OpType="); op != std::string_view::npos) {
    s->other_op = OpName(b.substr(op + 7));
  } else if (const size_t colon = b.find("collective: "); colon != std::string_view::npos) {
    s->other_op = OpName(b.substr(colon + 12));
  }
  const size_t aspects = line.find("differ in the following aspects:");
  s->detail = aspects == std::string_view::npos
                  ? "the ranks run different collectives"
                  : std::string(TrimSpace(line.substr(aspects + 32, 120)));
}

// Horovod's stall inspector: "Missing ranks:" then "1: [tensor, ...]" ("1!: [" when it shuts the
// job down), possibly behind an mpirun prefix ("[0] 0: [..."): the rank before ": [".
std::optional<int64_t> HorovodRankLine(std::string_view line) {
  const size_t at = line.find(": [");
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  std::string_view head = line.substr(0, at);
  if (const size_t sp = head.rfind(' '); sp != std::string_view::npos) head.remove_prefix(sp + 1);
  if (head.ends_with('!')) head.remove_suffix(1);
  if (head.empty() || head.size() > 7 ||
      head.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  return LeadingInt(head);
}

// The older format on one line: "HorovodBroadcast_x_0 [missing ranks: 0, 1, 3]".
std::vector<int64_t> HorovodMissingList(std::string_view line) {
  std::vector<int64_t> out;
  const size_t at = line.find("[missing ranks:");
  if (at == std::string_view::npos) return out;
  std::string_view rest = line.substr(at + 15);
  while (!rest.empty() && out.size() < 100000) {
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == ',')) rest.remove_prefix(1);
    size_t used = 0;
    const auto r = LeadingInt(rest, &used);
    if (!r || used == 0) break;
    out.push_back(*r);
    rest.remove_prefix(used);
  }
  return out;
}

// "failed to connect to 192.168.121.122:1040 (errno: 113 ...)" or "... to [::ffff:0.0.0.5]:40323":
// the host, without its port; the "to any network address of (host, port)" summary is skipped.
std::string StoreHost(std::string_view line) {
  constexpr std::string_view kKey = "failed to connect to ";
  for (size_t at = line.find(kKey); at != std::string_view::npos; at = line.find(kKey, at + 1)) {
    std::string_view rest = line.substr(at + kKey.size());
    if (rest.starts_with("any ")) continue;
    rest = rest.substr(0, rest.find_first_of(" ,"));
    if (rest.starts_with('[')) return std::string(rest.substr(1, rest.find(']') - 1));
    const size_t colon = rest.rfind(':');
    return std::string(colon == std::string_view::npos ? rest : rest.substr(0, colon));
  }
  return "";
}

class Scanner {
 public:
  explicit Scanner(const std::string& file) : file_(file) {}

  void Line(std::string_view raw, int number) {
    const std::string line = Clean(raw);
    if (line.empty()) return;
    if (ReadHorovod(line, number)) return;
    if (ReadSummary(line, number)) return;
    FailureSignal s;
    if (!Classify(line, &s)) return;
    Emit(std::move(s), line, number);
  }

  std::vector<FailureSignal> Take() {
    FlushRecord();
    if (fr_) out_.push_back(std::move(*fr_));
    fr_.reset();
    return std::move(out_);
  }

 private:
  void Emit(FailureSignal s, std::string_view line, int number) {
    s.global_rank = s.global_rank ? s.global_rank : RankPrefix(line);
    if (!s.pg_rank) ReadPgRank(line, &s);
    if (s.host.empty()) s.host = NcclHost(line);
    s.file = file_;
    s.line = number;
    s.text = std::string(line.substr(0, kMaxTextChars));
    out_.push_back(std::move(s));
  }

  bool ReadHorovod(std::string_view line, int number) {
    if (Contains(line, "waiting for remainder of ranks")) {
      horovod_list_ = false;  // the list follows "Missing ranks:" / "Stalled ranks:"
      horovod_header_ = true;
    } else if (horovod_header_ &&
               (line.ends_with("Missing ranks:") || line.ends_with("Stalled ranks:"))) {
      horovod_list_ = true;
      return true;
    }
    std::vector<int64_t> ranks = HorovodMissingList(line);
    if (ranks.empty() && horovod_list_) {
      if (auto r = HorovodRankLine(line)) {
        ranks.push_back(*r);
      } else {
        horovod_list_ = false;
      }
    }
    if (ranks.empty()) return false;
    FailureSignal s;
    s.kind = FailureKind::kHorovodStall;
    s.ranks = std::move(ranks);
    s.detail = "Horovod stall inspector: tensors not submitted by these ranks";
    s.file = file_;
    s.line = number;
    s.text = std::string(line.substr(0, kMaxTextChars));
    out_.push_back(std::move(s));
    return true;
  }

  // torchrun's summary: "Failures:" / "Root Cause (first observed failure):", then records
  // "[0]:" with "time :", "host :", "rank : 10 (local_rank: 2)", "exitcode : -6 (pid: ...)",
  // "traceback : Signal 6 (SIGABRT) received by PID ...". The analyser's report is read here too.
  bool ReadSummary(std::string_view line, int number) {
    if (Contains(line, "Root Cause (first observed failure)")) {
      FlushRecord();
      in_summary_ = true;
      root_ = true;
      return true;
    }
    if (line == "Failures:" || line.ends_with(" Failures:")) {
      FlushRecord();
      in_summary_ = true;
      root_ = false;
      return true;
    }
    if (Contains(line, "Not all ranks joining collective")) {
      if (fr_) out_.push_back(std::move(*fr_));
      fr_ = FailureSignal{};
      fr_->kind = FailureKind::kFrNotJoined;
      fr_->seq = IntAfter(line, "sequence number: ");
      if (!fr_->seq) fr_->seq = IntAfter(line, "joining collective ");
      fr_->file = file_;
      fr_->line = number;
      fr_->text = std::string(line.substr(0, kMaxTextChars));
      return true;
    }
    if (fr_) {
      if (line.starts_with("missing ranks:")) fr_->ranks = RankSet(line);
      if (line.starts_with("collective: ")) {
        std::string_view op = line.substr(12);
        if (const size_t colon = op.find(':'); colon != std::string_view::npos)
          op.remove_prefix(colon + 1);
        fr_->op = std::string(op);
      }
      if (line.starts_with("group info: "))
        fr_->pg_id = std::string(line.substr(12, line.find(':', 12) - 12));
    }
    if (!in_summary_) return false;
    if (line.front() == '[' && line.ends_with("]:") && line.size() < 12) {
      FlushRecord();
      record_ = FailureSignal{};
      record_->kind = FailureKind::kChildFailed;
      record_->root_cause = root_;
      record_->file = file_;
      record_->line = number;
      return true;
    }
    if (!record_) {
      if (line.starts_with("===") || line.starts_with("---")) return true;
      in_summary_ = false;
      return false;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      FlushRecord();
      in_summary_ = false;
      return false;
    }
    const std::string_view key = TrimSpace(line.substr(0, colon));
    const std::string_view value = TrimSpace(line.substr(colon + 1));
    if (key == "rank") {
      record_->global_rank = LeadingInt(value);
      record_->local_rank = IntAfter(value, "local_rank:");
    } else if (key == "host") {
      record_->host = std::string(value);
    } else if (key == "time") {
      record_->time = std::string(value);
    } else if (key == "exitcode") {
      record_->exit_code = LeadingInt(value);
    } else if (key == "traceback") {
      if (const size_t open = value.find('('); open != std::string_view::npos) {
        record_->signal = std::string(value.substr(open + 1, value.find(')', open) - open - 1));
      }
      record_->text = std::string(value.substr(0, kMaxTextChars));
      // The failure itself may be printed inside the record ("traceback : RuntimeError: Detected
      // mismatch between collectives ..."): read it as the line it would have been.
      if (FailureSignal inner; Classify(value, &inner)) {
        inner.global_rank = record_->global_rank;
        Emit(std::move(inner), value, number);
      }
    } else if (key != "error_file") {
      FlushRecord();
      in_summary_ = false;
      return false;
    }
    return true;
  }

  void FlushRecord() {
    if (record_ && record_->global_rank) {
      if (record_->text.empty() && record_->exit_code) {
        record_->text = "exitcode " + std::to_string(*record_->exit_code);
      }
      out_.push_back(std::move(*record_));
    }
    record_.reset();
  }

  static bool Classify(std::string_view line, FailureSignal* s) {
    using K = FailureKind;
    // CUDA and the GPU itself. "CUDA error: out of memory" is an OOM (log_signals.h).
    if (const size_t at = line.find("CUDA error: "); at != std::string_view::npos) {
      if (Contains(line, "out of memory")) return false;
      s->kind = K::kCudaError;
      s->detail = std::string(line.substr(at + 12, 120));
      return true;
    }
    if (const size_t at = line.find("Triton Error [CUDA]: "); at != std::string_view::npos) {
      s->kind = K::kCudaError;
      s->detail = std::string(line.substr(at + 21, 120));
      return true;
    }
    if (Contains(line, "Cuda failure")) {
      s->kind = K::kCudaError;
      s->detail = std::string(line.substr(line.find("Cuda failure"), 120));
      return true;
    }
    if (const size_t xid = line.find("NVRM: Xid"); xid != std::string_view::npos) {
      s->kind = K::kCudaError;
      const size_t colon = line.find("): ", xid);
      if (colon != std::string_view::npos) {
        if (auto n = LeadingInt(line.substr(colon + 3))) s->detail = "Xid " + std::to_string(*n);
      }
      return true;
    }
    if (Contains(line, "Unable to determine the device handle for GPU") ||
        Contains(line, "GPU has fallen off the bus")) {
      s->kind = K::kCudaError;
      s->detail = "the GPU no longer answers";
      return true;
    }
    if (Contains(line, "Fatal Python error: ")) {
      s->kind = K::kCrash;
      s->signal = std::string(line.substr(line.find("Fatal Python error: ") + 20, 60));
      return true;
    }
    // A data-loader worker killed (the OOM killer, most often): its rank fails outside any
    // collective, and the others wait for it.
    if (Contains(line, "DataLoader worker (pid") &&
        (Contains(line, "is killed by signal") || Contains(line, "exited unexpectedly"))) {
      s->kind = K::kCrash;
      const size_t at = line.find("DataLoader worker (pid");
      s->signal = std::string(line.substr(at, 90));
      return true;
    }
    if (Contains(line, "Segmentation fault (core dumped)")) {
      s->kind = K::kCrash;
      s->signal = "Segmentation fault";
      return true;
    }
    // NCCL bootstrap: which interface, who checked in.
    if (Contains(line, "no socket interface found") || Contains(line, "Bootstrap : no socket")) {
      s->kind = K::kBootstrap;
      s->detail = "no usable network interface: check NCCL_SOCKET_IFNAME";
      return true;
    }
    if (Contains(line, "has already checked in")) {
      s->kind = K::kBootstrap;
      s->detail = "two processes registered the same rank (launcher or RANK setup)";
      return true;
    }
    if (Contains(line, "ncclSocketInit: connecting to address") ||
        Contains(line, "is neither AF_INET(2) nor AF_INET6(10)")) {
      s->kind = K::kBootstrap;
      s->detail = "no address for the configured interface: check NCCL_SOCKET_IFNAME";
      return true;
    }
    // Start-up: the process group never formed.
    if (Contains(line, "connectFullMesh failed")) {
      s->kind = K::kBootstrap;
      s->detail =
          "Gloo could not connect to every peer (connectFullMesh): check GLOO_SOCKET_IFNAME";
      return true;
    }
    if (Contains(line, "failed to listen on any local network address") ||
        Contains(line, "EADDRINUSE") ||
        (Contains(line, "Address already in use") && Contains(line, "socket"))) {
      s->kind = K::kBootstrap;
      s->detail =
          "the rendezvous store's port is already in use (another job or a leftover process): "
          "choose a free MASTER_PORT";
      return true;
    }
    if (Contains(line, "Timed out initializing process group in store based barrier")) {
      s->kind = K::kBootstrap;
      const auto world = IntAfter(line, "world_size=");
      const auto count = IntAfter(line, "worker_count=");
      s->detail = world && count
                      ? "only " + std::to_string(*count) + " of " + std::to_string(*world) +
                            " processes reached the store-based barrier in time"
                      : "a process never reached the store-based barrier of init";
      return true;
    }
    if (Contains(line, "Waiting in store based barrier to initialize process group")) {
      const auto world = IntAfter(line, "world_size=");
      const auto count = IntAfter(line, "worker_count=");
      if (!world || !count || *count <= *world) return false;  // still arriving: normal start-up
      s->kind = K::kBootstrap;
      s->detail = std::to_string(*count) + " processes checked in to a world of " +
                  std::to_string(*world) + ": two launches share one store (MASTER_PORT)";
      return true;
    }
    if ((Contains(line, "DistStoreError") || Contains(line, "Socket Timeout")) &&
        (Contains(line, "wait timeout") || Contains(line, "Timed out after") ||
         Contains(line, "Socket Timeout"))) {
      s->kind = K::kBootstrap;
      s->detail = "a wait on the rendezvous store timed out at start-up (a rank never arrived)";
      return true;
    }
    // c10d's store client: the rendezvous host cannot be reached or resolved.
    if (Contains(line, "client socket has failed to connect") ||
        Contains(line, "client socket has timed out after") ||
        (Contains(line, "network addresses of (") && Contains(line, "cannot be retrieved"))) {
      s->kind = K::kBootstrap;
      s->peer = StoreHost(line);
      s->detail = "cannot reach the rendezvous store (MASTER_ADDR/MASTER_PORT)";
      return true;
    }
    if (Contains(line, "Connection refused") &&
        (Contains(line, "client socket") || Contains(line, "TCPStore") ||
         Contains(line, "rendezvous") || Contains(line, "DistNetworkError"))) {
      s->kind = K::kBootstrap;
      s->detail = "the rendezvous store refused the connection (MASTER_ADDR/MASTER_PORT)";
      return true;
    }
    if (Contains(line, "unhandled system error")) {
      s->kind = K::kBootstrap;
      s->detail = "NCCL unhandled system error (a socket or network call failed while connecting)";
      return true;
    }
    if (const size_t at = line.find("set by environment to "); at != std::string_view::npos) {
      const size_t name_end = line.rfind(' ', at - 1);
      const size_t name_start =
          line.rfind(' ', name_end == std::string_view::npos ? 0 : name_end - 1);
      if (name_end != std::string_view::npos && name_start != std::string_view::npos) {
        s->kind = K::kSetting;
        s->detail = std::string(line.substr(name_start + 1, name_end - name_start - 1)) + "=" +
                    TokenAfter(line, "set by environment to ");
        return true;
      }
    }
    if (line.starts_with("NCCL_") && line.find('=') != std::string_view::npos &&
        line.find(' ') > line.find('=')) {  // an environment dump: "NCCL_NET_GDR_LEVEL=SYS"
      s->kind = K::kSetting;
      s->detail = std::string(TrimSpace(line));
      return true;
    }
    if (Contains(line, "bootstrap.cc:") && Contains(line, " -> ")) {
      s->kind = K::kBootstrapTrace;
      return true;
    }
    // NCCL network failures and the peer they name.
    if (Contains(line, "collective mismatch error")) {
      s->kind = K::kNetMismatch;
      s->peer = TokenAfter(line, " peer ");
      s->detail = std::string(line.substr(line.find("collective mismatch error"), 100));
      return true;
    }
    if (Contains(line, "Got completion from peer")) {
      s->kind = K::kNetwork;
      s->peer = TokenAfter(line, "Got completion from peer");
      s->detail = "InfiniBand completion error";
      return true;
    }
    if (Contains(line, "failed : Broken pipe") || Contains(line, "failed : Connection reset")) {
      s->kind = K::kNetwork;
      s->peer = TokenAfter(line, " from ");
      if (s->peer.empty()) s->peer = TokenAfter(line, " to ");
      s->detail = Contains(line, "Broken pipe") ? "Broken pipe" : "Connection reset";
      return true;
    }
    if (Contains(line, "Connection closed by remote peer")) {
      s->kind = K::kNetwork;
      s->peer = TokenAfter(line, "Connection closed by remote peer");
      s->detail = "Connection closed by remote peer";
      return true;
    }
    if (Contains(line, "socketStartConnect: Connect to ") ||
        Contains(line, "Call to connect returned")) {
      s->kind = K::kNetwork;
      s->peer = TokenAfter(line, "Connect to ");
      s->detail = "connect failed";
      return true;
    }
    if (Contains(line, "Failed to execute operation") && Contains(line, "retcode")) {
      s->kind = K::kNetwork;
      s->detail = "proxy " + std::string(line.substr(line.find("retcode"), 12));
      return true;
    }
    if (Contains(line, "remote process exited or there was a network error") ||
        Contains(line, "ncclRemoteError")) {
      s->kind = K::kNetwork;
      s->detail = "ncclRemoteError";
      return true;
    }
    if (Contains(line, "GPU Direct RDMA Disabled for HCA")) {
      s->kind = K::kNetwork;
      s->detail = "GPU Direct RDMA disabled: check NCCL_NET_GDR_LEVEL and the PCIe topology (ACS)";
      return true;
    }
    // TORCH_DISTRIBUTED_DEBUG=DETAIL: the wrapper's own report of two ranks that differ.
    if (Contains(line, "Detected mismatch between collectives on ranks")) {
      s->kind = K::kDetailMismatch;
      ReadDetailMismatch(line, s);
      return true;
    }
    // torchrun, when a worker exits: "failed (exitcode: -9) local_rank: 3 (pid: 812917)".
    if (Contains(line, "failed (exitcode: ") && Contains(line, "local_rank: ")) {
      s->kind = K::kWorkerFailed;
      s->exit_code = IntAfter(line, "failed (exitcode: ");
      s->local_rank = IntAfter(line, "local_rank: ");
      if (s->exit_code == -9) s->signal = "SIGKILL";
      if (s->exit_code == -6) s->signal = "SIGABRT";
      if (s->exit_code == -15) s->signal = "SIGTERM";
      s->detail = "a worker exited with code " + std::to_string(s->exit_code.value_or(0));
      return true;
    }
    // TORCH_DISTRIBUTED_DEBUG=DETAIL: each rank's next collective.
    if (Contains(line, "CollectiveFingerPrint(SequenceNumber=")) {
      s->kind = K::kFingerprint;
      s->seq = IntAfter(line, "SequenceNumber=");
      s->op = TokenAfter(line, "OpType=");
      return true;
    }
    // Teardown and the end of training.
    if (Contains(line, "ncclCommAbort") || Contains(line, "commReclaim") ||
        Contains(line, "ProcessGroupNCCL::abort()") || Contains(line, "- Abort COMPLETE")) {
      s->kind = K::kTeardown;
      return true;
    }
    if (Contains(line, "End time of running main") || Contains(line, "Training completed") ||
        Contains(line, "'train_runtime'") || Contains(line, "Training finished") ||
        Contains(line, "worker group successfully finished") ||
        Contains(line, "WorkerState.SUCCEEDED")) {
      s->kind = K::kTrainingEnded;
      return true;
    }
    // '  File ".../distributed_c10d.py", line 2070, in all_gather' (Python) or
    // '  File ".../distributed_c10d.py", line 2501 in all_reduce' (faulthandler).
    if (Contains(line, "distributed_c10d.py\", line ")) {
      const size_t in = line.rfind(" in ");
      if (in == std::string_view::npos) return false;
      s->kind = K::kC10dFrame;
      s->op = std::string(TrimSpace(line.substr(in + 4)));
      return !s->op.empty() && s->op.find(' ') == std::string::npos;
    }
    return false;
  }

  const std::string& file_;
  std::vector<FailureSignal> out_;
  bool in_summary_ = false;
  bool root_ = false;
  std::optional<FailureSignal> record_;
  std::optional<FailureSignal> fr_;
  bool horovod_header_ = false;
  bool horovod_list_ = false;
};

}  // namespace

std::vector<FailureSignal> ScanFailures(std::string_view text, const std::string& file) {
  Scanner scanner(file);
  int number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    if (number < std::numeric_limits<int>::max()) ++number;
    scanner.Line(text.substr(start, end - start), number);
    start = end + 1;
  }
  return scanner.Take();
}

std::string_view FailureKindName(FailureKind kind) {
  switch (kind) {
    case FailureKind::kCudaError:
      return "cuda_error";
    case FailureKind::kCrash:
      return "crash";
    case FailureKind::kChildFailed:
      return "child_failed";
    case FailureKind::kBootstrap:
      return "bootstrap";
    case FailureKind::kBootstrapTrace:
      return "bootstrap_trace";
    case FailureKind::kNetwork:
      return "network";
    case FailureKind::kNetMismatch:
      return "net_mismatch";
    case FailureKind::kFrNotJoined:
      return "fr_not_joined";
    case FailureKind::kFingerprint:
      return "fingerprint";
    case FailureKind::kTeardown:
      return "teardown";
    case FailureKind::kTrainingEnded:
      return "training_ended";
    case FailureKind::kSetting:
      return "setting";
    case FailureKind::kC10dFrame:
      return "c10d_frame";
    case FailureKind::kWorkerFailed:
      return "worker_failed";
    case FailureKind::kDetailMismatch:
      return "detail_mismatch";
    case FailureKind::kHorovodStall:
      return "horovod_stall";
  }
  return "other";
}

}  // namespace strata::hang
