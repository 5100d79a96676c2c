// Physical quantities as distinct types, modelled on std::chrono::duration.
//
// Construction from a raw number is explicit and names its scale (Bytes::GB(96) vs
// Bytes::GiB(96)); only physically meaningful operators exist (Bytes / BytesPerSecond gives
// Seconds, FlopCount / FlopPerSecond gives Seconds, ...). Values are held as double in base
// units (bytes, seconds, FLOP, FLOP/s, bytes/s): doubles hold integers exactly up to 2^53,
// which covers every byte and parameter count a cluster can have.
#ifndef STRATA_CORE_UNITS_H_
#define STRATA_CORE_UNITS_H_

#include <compare>
#include <string>
#include <string_view>

#include "strata/core/result.h"

namespace strata {

/// A quantity in base units with same-type arithmetic only. Tag makes each kind distinct.
template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  /// The raw value in base units (bytes, seconds, FLOP, ...).
  constexpr double value() const { return value_; }

  constexpr Quantity operator+(Quantity o) const { return Quantity(value_ + o.value_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(value_ - o.value_); }
  constexpr Quantity& operator+=(Quantity o) {
    value_ += o.value_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity o) {
    value_ -= o.value_;
    return *this;
  }
  constexpr Quantity operator*(double k) const { return Quantity(value_ * k); }
  constexpr Quantity operator/(double k) const { return Quantity(value_ / k); }
  friend constexpr Quantity operator*(double k, Quantity q) { return Quantity(k * q.value_); }
  /// The ratio of two quantities of the same kind is a plain number.
  constexpr double operator/(Quantity o) const { return value_ / o.value_; }
  constexpr auto operator<=>(const Quantity&) const = default;

  static constexpr Quantity FromBase(double v) { return Quantity(v); }

 protected:
  constexpr explicit Quantity(double v) : value_(v) {}
  double value_ = 0;
};

struct BytesTag {};
struct SecondsTag {};
struct FlopCountTag {};
struct FlopPerSecondTag {};
struct BytesPerSecondTag {};

/// Memory sizes. GB/MB are decimal (1e9), GiB/MiB binary (2^30): the course's figures are GB.
class Bytes : public Quantity<BytesTag> {
 public:
  constexpr Bytes() = default;
  constexpr Bytes(Quantity<BytesTag> q) : Quantity(q.value()) {}  // NOLINT: same kind
  static constexpr Bytes Count(double n) { return Bytes(n); }
  static constexpr Bytes KB(double n) { return Bytes(n * 1e3); }
  static constexpr Bytes MB(double n) { return Bytes(n * 1e6); }
  static constexpr Bytes GB(double n) { return Bytes(n * 1e9); }
  static constexpr Bytes TB(double n) { return Bytes(n * 1e12); }
  static constexpr Bytes KiB(double n) { return Bytes(n * 1024.0); }
  static constexpr Bytes MiB(double n) { return Bytes(n * 1048576.0); }
  static constexpr Bytes GiB(double n) { return Bytes(n * 1073741824.0); }
  static constexpr Bytes TiB(double n) { return Bytes(n * 1099511627776.0); }
  constexpr double count() const { return value_; }
  constexpr double mb() const { return value_ / 1e6; }
  constexpr double gb() const { return value_ / 1e9; }
  constexpr double mib() const { return value_ / 1048576.0; }
  constexpr double gib() const { return value_ / 1073741824.0; }

 private:
  constexpr explicit Bytes(double v) : Quantity(v) {}
};

class Seconds : public Quantity<SecondsTag> {
 public:
  constexpr Seconds() = default;
  constexpr Seconds(Quantity<SecondsTag> q) : Quantity(q.value()) {}  // NOLINT: same kind
  static constexpr Seconds Of(double s) { return Seconds(s); }
  static constexpr Seconds Ms(double ms) { return Seconds(ms * 1e-3); }
  static constexpr Seconds Us(double us) { return Seconds(us * 1e-6); }
  constexpr double s() const { return value_; }
  constexpr double ms() const { return value_ * 1e3; }
  constexpr double us() const { return value_ * 1e6; }

 private:
  constexpr explicit Seconds(double v) : Quantity(v) {}
};

/// A number of floating-point operations (not a rate: see FlopPerSecond).
class FlopCount : public Quantity<FlopCountTag> {
 public:
  constexpr FlopCount() = default;
  constexpr FlopCount(Quantity<FlopCountTag> q) : Quantity(q.value()) {}  // NOLINT
  static constexpr FlopCount Of(double n) { return FlopCount(n); }
  static constexpr FlopCount Giga(double n) { return FlopCount(n * 1e9); }
  static constexpr FlopCount Tera(double n) { return FlopCount(n * 1e12); }
  constexpr double count() const { return value_; }
  constexpr double gflop() const { return value_ / 1e9; }
  constexpr double tflop() const { return value_ / 1e12; }
  constexpr double pflop() const { return value_ / 1e15; }

 private:
  constexpr explicit FlopCount(double v) : Quantity(v) {}
};

class FlopPerSecond : public Quantity<FlopPerSecondTag> {
 public:
  constexpr FlopPerSecond() = default;
  constexpr FlopPerSecond(Quantity<FlopPerSecondTag> q) : Quantity(q.value()) {}  // NOLINT
  static constexpr FlopPerSecond Of(double n) { return FlopPerSecond(n); }
  static constexpr FlopPerSecond Tera(double n) { return FlopPerSecond(n * 1e12); }
  static constexpr FlopPerSecond Peta(double n) { return FlopPerSecond(n * 1e15); }
  constexpr double flop_per_s() const { return value_; }
  constexpr double tflop_per_s() const { return value_ / 1e12; }
  constexpr double pflop_per_s() const { return value_ / 1e15; }

 private:
  constexpr explicit FlopPerSecond(double v) : Quantity(v) {}
};

/// Byte rates. Decimal GB/s, as nccl-tests prints algbw and busbw.
class BytesPerSecond : public Quantity<BytesPerSecondTag> {
 public:
  constexpr BytesPerSecond() = default;
  constexpr BytesPerSecond(Quantity<BytesPerSecondTag> q) : Quantity(q.value()) {}  // NOLINT
  static constexpr BytesPerSecond Of(double n) { return BytesPerSecond(n); }
  static constexpr BytesPerSecond MBps(double n) { return BytesPerSecond(n * 1e6); }
  static constexpr BytesPerSecond GBps(double n) { return BytesPerSecond(n * 1e9); }
  static constexpr BytesPerSecond TBps(double n) { return BytesPerSecond(n * 1e12); }
  /// Link rates are quoted in bits: 400 Gb/s is 50 GB/s. The one bits-to-bytes conversion.
  static constexpr BytesPerSecond Gbps(double gigabits) {
    return BytesPerSecond(gigabits * 1e9 / 8);
  }
  constexpr double bytes_per_s() const { return value_; }
  constexpr double gb_per_s() const { return value_ / 1e9; }
  constexpr double tb_per_s() const { return value_ / 1e12; }
  constexpr double gbit_per_s() const { return value_ * 8 / 1e9; }

 private:
  constexpr explicit BytesPerSecond(double v) : Quantity(v) {}
};

// Cross-kind operators: only the physically meaningful ones.
constexpr Seconds operator/(FlopCount f, FlopPerSecond r) {
  return Seconds::Of(f.value() / r.value());
}
constexpr FlopPerSecond operator/(FlopCount f, Seconds t) {
  return FlopPerSecond::Of(f.value() / t.value());
}
constexpr FlopCount operator*(FlopPerSecond r, Seconds t) {
  return FlopCount::Of(r.value() * t.value());
}
constexpr Seconds operator/(Bytes b, BytesPerSecond r) {
  return Seconds::Of(b.value() / r.value());
}
constexpr BytesPerSecond operator/(Bytes b, Seconds t) {
  return BytesPerSecond::Of(b.value() / t.value());
}
constexpr Bytes operator*(BytesPerSecond r, Seconds t) {
  return Bytes::Count(r.value() * t.value());
}

// --- parsing: a unit is always required ------------------------------------
/// "96GB", "80GiB", "1.5 TiB", "512MiB". Decimal KB/MB/GB/TB, binary KiB/MiB/GiB/TiB, "B".
/// Bare "G"/"M"/"K" are rejected as ambiguous (nccl-tests reads G as GiB, others as GB).
Result<Bytes> ParseBytes(std::string_view text);
/// "400Gb/s" (bits), "50GB/s" (bytes), "900 GB/s", "4.0TB/s", "25Gbps". Case of b/B matters.
Result<BytesPerSecond> ParseBandwidth(std::string_view text);
/// "120s", "250ms", "40us", "5min", "2h".
Result<Seconds> ParseSeconds(std::string_view text);

// --- formatting: the unit is always printed ---------------------------------
std::string FormatGiB(Bytes b, int decimals = 2);             // "12.89 GiB"
std::string FormatGB(Bytes b, int decimals = 2);              // "13.84 GB"
std::string FormatGBAndGiB(Bytes b);                          // "13.84 GB (12.89 GiB)"
std::string FormatBytesAuto(Bytes b);                         // "512 B", "1.50 KiB", "12.89 GiB"
std::string FormatGBps(BytesPerSecond r, int decimals = 1);   // "450.0 GB/s"
std::string FormatTflops(FlopPerSecond r, int decimals = 1);  // "148.0 TFLOP/s"
std::string FormatSeconds(Seconds t);                         // "120 s", "3.2 ms", "15 us"

}  // namespace strata

#endif  // STRATA_CORE_UNITS_H_
