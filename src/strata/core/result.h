// Errors as values: Result<T> holds a T or an Error that names the file, line or field, echoes
// the bad value and carries a hint. The library never prints and never exits; the CLI reports.
#ifndef STRATA_CORE_RESULT_H_
#define STRATA_CORE_RESULT_H_

#include <string>
#include <utility>
#include <variant>

#include "strata/core/check.h"

namespace strata {

enum class ErrorCode {
  kInvalidInput,        // the user's file or flag is wrong: exit code 2
  kIo,                  // a file cannot be read or written: exit code 2
  kUnsupportedVersion,  // a format version we do not read
  kCheckFailed,         // a check ran and found a problem: exit code 1
  kInternal,            // a bug in strata
};

struct Error {
  ErrorCode code = ErrorCode::kInvalidInput;
  std::string message;  // what is wrong, echoing the bad value and what was expected
  std::string file;     // the input file, when there is one
  int line = 0;         // 1-based; 0 when unknown
  int column = 0;       // 1-based; 0 when unknown
  std::string field;    // dotted path of the field (e.g. "text_config.num_experts")
  std::string hint;     // "did you mean ...", or what to do next

  /// "file:line:col: field: message" followed by "  hint: ..." when there is a hint.
  std::string Format() const;

  Error& InFile(std::string f) {
    if (file.empty()) file = std::move(f);
    return *this;
  }
  Error& AtLine(int l) {
    if (line == 0) line = l;
    return *this;
  }
  Error& InField(std::string f) {
    if (field.empty()) field = std::move(f);
    return *this;
  }
  Error& WithHint(std::string h) {
    hint = std::move(h);
    return *this;
  }
};

Error InvalidInput(std::string message);
Error IoError(std::string message);

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}      // NOLINT: implicit like std::expected
  Result(Error error) : data_(std::move(error)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(data_); }
  explicit operator bool() const { return ok(); }

  const T& value() const& {
    STRATA_CHECK(ok());
    return std::get<T>(data_);
  }
  T& value() & {
    STRATA_CHECK(ok());
    return std::get<T>(data_);
  }
  T&& value() && {
    STRATA_CHECK(ok());
    return std::get<T>(std::move(data_));
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const Error& error() const& {
    STRATA_CHECK(!ok());
    return std::get<Error>(data_);
  }
  Error&& error() && {
    STRATA_CHECK(!ok());
    return std::get<Error>(std::move(data_));
  }

 private:
  std::variant<T, Error> data_;
};

/// A Result without a value.
using Status = Result<std::monostate>;
inline Status OkStatus() { return Status(std::monostate{}); }

}  // namespace strata

#define STRATA_CONCAT_INNER_(a, b) a##b
#define STRATA_CONCAT_(a, b) STRATA_CONCAT_INNER_(a, b)

/// Evaluates a Status/Result expression; returns its Error from the enclosing function on failure.
#define STRATA_RETURN_IF_ERROR(expr)                                    \
  do {                                                                  \
    auto&& strata_status_ = (expr);                                     \
    if (!strata_status_.ok()) return std::move(strata_status_).error(); \
  } while (false)

/// `STRATA_ASSIGN_OR_RETURN(auto x, ParseFoo(...));`
#define STRATA_ASSIGN_OR_RETURN(lhs, expr)                              \
  auto STRATA_CONCAT_(strata_result_, __LINE__) = (expr);               \
  if (!STRATA_CONCAT_(strata_result_, __LINE__).ok())                   \
    return std::move(STRATA_CONCAT_(strata_result_, __LINE__)).error(); \
  lhs = std::move(STRATA_CONCAT_(strata_result_, __LINE__)).value()

#endif  // STRATA_CORE_RESULT_H_
