#include "strata/core/result.h"

#include <cstdio>
#include <cstdlib>

namespace strata {

void CheckFailed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "strata: internal error: %s:%d: check failed: %s\n", file, line, expr);
  std::abort();
}

std::string Error::Format() const {
  std::string out;
  if (!file.empty()) {
    out += file;
    if (line > 0) out += ":" + std::to_string(line);
    if (line > 0 && column > 0) out += ":" + std::to_string(column);
    out += ": ";
  }
  if (!field.empty()) out += field + ": ";
  out += message;
  if (!hint.empty()) out += "\n  hint: " + hint;
  return out;
}

Error InvalidInput(std::string message) {
  Error e;
  e.code = ErrorCode::kInvalidInput;
  e.message = std::move(message);
  return e;
}

Error IoError(std::string message) {
  Error e;
  e.code = ErrorCode::kIo;
  e.message = std::move(message);
  return e;
}

}  // namespace strata
