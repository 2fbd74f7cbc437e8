// A single Iceberg value (partition values, column bounds, filter constants) and its standard
// encodings: binary single-value serialization (spec Appendix D) used for bounds and partition
// summaries, and JSON single-value serialization (Appendix C) used for defaults.
//
// A Literal does not carry its Iceberg type: the field it belongs to gives it. Storage per type:
//   boolean → bool; int, date → int32_t; long, time, timestamp*, → int64_t; float; double;
//   string → std::string; uuid, fixed, binary → Bytes; decimal → Decimal (unscaled value).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "lakesync/common/status.h"
#include "lakesync/iceberg/model/types.h"

namespace lakesync::iceberg {

struct Bytes {
  std::string data;
  bool operator==(const Bytes&) const = default;
};

struct Decimal {
  __int128 unscaled = 0;
  bool operator==(const Decimal&) const = default;
};

class Literal {
 public:
  using Value = std::variant<std::monostate, bool, int32_t, int64_t, float, double, std::string, Bytes, Decimal>;

  Literal() = default;
  explicit Literal(Value v) : value_(std::move(v)) {}
  static Literal Null() { return Literal(); }

  bool is_null() const { return std::holds_alternative<std::monostate>(value_); }
  const Value& value() const { return value_; }

  template <typename T>
  const T& get() const { return std::get<T>(value_); }

  // Total order between two literals of the same Iceberg type; nulls sort first. Strings compare as
  // UTF-8 bytes (which is code-point order); binary as unsigned bytes; floats by IEEE value.
  int Compare(const Literal& other) const;
  bool operator==(const Literal& other) const { return value_ == other.value_; }

  // Appendix D binary single-value encoding (lower/upper bounds, partition summaries).
  Result<std::string> ToBytes(const Type& type) const;
  static Result<Literal> FromBytes(const Type& type, std::string_view bytes);

  // Appendix C JSON single-value encoding.
  Result<nlohmann::json> ToJson(const Type& type) const;
  static Result<Literal> FromJson(const Type& type, const nlohmann::json& json);

  // Human-readable rendering (ISO dates and times, decimals with their scale, hex for binary).
  std::string ToString(const Type& type) const;

 private:
  Value value_;
};

// Checks that a literal holds the storage alternative the type expects (null is always allowed).
bool LiteralMatchesType(const Literal& literal, const Type& type);

// A value stored under an older type, as a value of `type` after the type promotions the spec allows
// (int → long, float → double, decimal precision widening, v3 date → timestamp/timestamp_ns at
// midnight; not to the zoned timestamps, which the spec excludes): e.g. a partition value written before its source column was widened. A literal that
// already matches `type` is returned as it is. Returns InvalidArgument for any other difference.
Result<Literal> PromoteLiteral(const Literal& literal, const Type& type);

// Text helpers shared by the literal codecs, the CLI and filters.
std::string FormatDate(int32_t days_since_epoch);                  // 2017-11-16
std::string FormatTime(int64_t micros_of_day);                     // 22:31:08.123456
// ISO-8601 with the minimal fractional digits of the unit; `utc` appends "+00:00".
std::string FormatTimestamp(int64_t value, bool nanos, bool utc);
std::string FormatDecimal(__int128 unscaled, int32_t scale);       // 14.20
std::string FormatUuid(std::string_view bytes16);                  // 8-4-4-4-12 lower-case hex
Result<int32_t> ParseDate(std::string_view text);
Result<int64_t> ParseTime(std::string_view text);
// Accepts "2017-11-16T22:31:08[.fraction][Z|+hh:mm]" and a space instead of 'T'; returns micros or nanos.
Result<int64_t> ParseTimestamp(std::string_view text, bool nanos);
// Plain or scientific notation ("14.20", "1E-10"); rejects values that need rounding at `scale`.
Result<__int128> ParseDecimal(std::string_view text, int32_t scale);
Result<std::string> ParseUuid(std::string_view text);                 // 16 raw bytes
std::string Int128ToString(__int128 v);
// A decimal's unscaled value as its minimal big-endian two's complement bytes, written into `buf`:
// the spec's single-value form of a decimal and what the bucket transform hashes.
std::string_view MinimalBigEndian(__int128 unscaled, char (&buf)[16]);
// Proleptic Gregorian calendar conversions (days since 1970-01-01).
int64_t DaysFromCivil(int64_t year, unsigned month, unsigned day);
void CivilFromDays(int64_t days, int64_t& year, unsigned& month, unsigned& day);

}  // namespace lakesync::iceberg
