// The lines Gloo (torch's CPU collective backend) writes when a collective fails, usually inside
// a Python RuntimeError or a C++ terminate message, behind "[.../gloo/transport/tcp/pair.cc:547]":
//   "Timed out waiting 8000ms for recv operation to complete"     a collective timed out
//   "Connection closed by peer [127.0.0.1]:13480"                  a peer went away
//   "Read error [127.0.0.1]:10961: Connection reset by peer"       a peer went away
//   "gloo::EnforceNotMet ... Received data size doesn't match expected size. Is there a
//    distributed collective mismatch in your code?"               the ranks passed different sizes
// Gloo has no watchdog and no "[Rank N]" in these messages: the rank is the log's (a "[rankN]:"
// prefix, or the file's name).
#ifndef STRATA_HANG_PARSERS_GLOO_LOG_H_
#define STRATA_HANG_PARSERS_GLOO_LOG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::hang {

enum class GlooSignalKind {
  kTimeout,   // "Timed out waiting Nms for recv|send operation to complete"
  kPeerLeft,  // "Connection closed by peer [ip]:port", "Read error [ip]:port: Connection reset by
              // peer"
  kSizeMismatch,  // "Received data size doesn't match expected size"
};

struct GlooSignal {
  GlooSignalKind kind = GlooSignalKind::kTimeout;
  std::optional<int64_t> global_rank;  // torchrun's "[rankN]:" prefix; the caller may fill it
  std::optional<int64_t> timeout_ms;   // kTimeout
  std::string operation;               // kTimeout: "recv" or "send"
  std::string peer;                    // kPeerLeft: "127.0.0.1:13480" (brackets dropped)
  std::string detail;                  // the message from "Timed out", "Connection", "Read error"
                                       // or "op.preamble" (kSizeMismatch's enforce) onwards
  std::string file;
  int line = 0;      // 1-based
  std::string text;  // the line, trimmed, at most 300 characters
};

/// Every Gloo failure line of `text`, in line order; other lines are skipped.
std::vector<GlooSignal> ScanGlooLog(std::string_view text, const std::string& file);

/// "timeout", "peer_left", "size_mismatch".
std::string_view GlooSignalKindName(GlooSignalKind kind);

}  // namespace strata::hang

#endif  // STRATA_HANG_PARSERS_GLOO_LOG_H_
