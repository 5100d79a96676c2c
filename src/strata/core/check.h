// An always-on invariant check for internal bugs (never for user input: that gets a Result).
#ifndef STRATA_CORE_CHECK_H_
#define STRATA_CORE_CHECK_H_

namespace strata {
[[noreturn]] void CheckFailed(const char* expr, const char* file, int line);
}  // namespace strata

#define STRATA_CHECK(cond) \
  ((cond) ? static_cast<void>(0) : ::strata::CheckFailed(#cond, __FILE__, __LINE__))

#endif  // STRATA_CORE_CHECK_H_
