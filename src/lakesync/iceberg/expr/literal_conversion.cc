#include "lakesync/iceberg/expr/literal_conversion_internal.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include "lakesync/common/arithmetic.h"
#include "lakesync/common/text.h"

namespace lakesync::iceberg::internal {
namespace {

using Kind = UnboundLiteral::Kind;
using Converted = ConvertedLiteral;

constexpr int64_t kMicrosPerDay = 86400LL * 1000000LL;
constexpr int64_t kNanosPerDay = 86400LL * 1000000000LL;

bool IsNumeric(Kind k) { return k == Kind::kInteger || k == Kind::kDecimal || k == Kind::kFloat; }

// A decimal number held exactly: (-1)^negative * digits * 10^exponent.
struct ExactNumber {
  bool negative = false;
  std::string digits;  // without leading zeros; empty for zero
  int64_t exponent = 0;
};

std::optional<ExactNumber> ParseExactNumber(std::string_view text) {
  text = TrimSpace(text);
  ExactNumber n;
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) n.negative = text[i++] == '-';
  std::string digits;
  int64_t fraction_digits = 0;
  bool any_digit = false;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    digits += text[i++];
    any_digit = true;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      digits += text[i++];
      ++fraction_digits;
      any_digit = true;
    }
  }
  if (!any_digit) return std::nullopt;
  int64_t exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool negative_exp = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative_exp = text[i++] == '-';
    if (i >= text.size()) return std::nullopt;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      // Clamp: anything beyond 10^±100000 is out of range for every type anyway.
      exponent = std::min<int64_t>(exponent * 10 + (text[i++] - '0'), 100000);
    }
    if (negative_exp) exponent = -exponent;
  }
  if (i != text.size()) return std::nullopt;
  const size_t first = digits.find_first_not_of('0');
  n.digits = first == std::string::npos ? "" : digits.substr(first);
  n.exponent = exponent - fraction_digits;
  return n;
}

// floor(n * 10^scale) and whether that is exact; nullopt when it needs more than 38 digits.
struct Scaled {
  __int128 floor = 0;
  bool exact = true;
};

std::optional<Scaled> ToScaled(const ExactNumber& n, int32_t scale) {
  const int64_t k = n.exponent + scale;
  std::string int_part;
  std::string frac_part;
  if (n.digits.empty()) return Scaled{0, true};
  if (k >= 0) {
    if (static_cast<int64_t>(n.digits.size()) + k > 38) return std::nullopt;
    int_part = n.digits + std::string(static_cast<size_t>(k), '0');
  } else {
    const int64_t cut = -k;
    if (cut >= static_cast<int64_t>(n.digits.size())) {
      frac_part = n.digits;
    } else {
      int_part = n.digits.substr(0, n.digits.size() - static_cast<size_t>(cut));
      frac_part = n.digits.substr(n.digits.size() - static_cast<size_t>(cut));
    }
  }
  if (int_part.size() > 38) return std::nullopt;
  __int128 v = 0;
  for (char c : int_part) v = v * 10 + (c - '0');
  const bool exact = frac_part.find_first_not_of('0') == std::string::npos;
  if (n.negative) {
    v = -v;
    if (!exact) v -= 1;
  }
  return Scaled{v, exact};
}

__int128 Pow10(int32_t p) {
  __int128 v = 1;
  for (int32_t i = 0; i < p; ++i) v *= 10;
  return v;
}

// Places a scaled number within [min, max], producing the literal through `make`.
template <typename Make>
Converted Place(const std::optional<Scaled>& s, bool negative, __int128 min, __int128 max, const Make& make) {
  if (!s) return {negative ? Converted::Kind::kBelowMin : Converted::Kind::kAboveMax, Literal()};
  if (s->floor > max || (s->floor == max && !s->exact)) return {Converted::Kind::kAboveMax, Literal()};
  if (s->floor < min) return {Converted::Kind::kBelowMin, Literal()};
  return {s->exact ? Converted::Kind::kExact : Converted::Kind::kBetween, make(s->floor)};
}

// Whether an ISO timestamp text carries a zone ("Z", "+02:00", "-0500") after its time of day.
bool HasZone(std::string_view text) {
  const size_t sep = text.find_first_of("T ", 8);
  if (sep == std::string_view::npos) return false;
  return text.substr(sep + 1).find_first_of("Zz+-") != std::string_view::npos;
}

// Whether the leading "yyyy-mm-dd" of a date or timestamp text names a real calendar day (older
// ParseDate versions rolled "2024-02-30" over into March).
bool IsCalendarDate(std::string_view text, int32_t days) {
  const size_t sep = text.find_first_of("T ", 8);
  const std::string_view date = text.substr(0, sep);
  if (date.size() < 10) return true;
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, y, m, d);
  return fmt::format("{:02d}-{:02d}", m, d) == date.substr(date.size() - 5);
}

// [+-]yyyy[y...]-mm-dd: the shape of a date, whether or not the day exists.
bool LooksLikeDate(std::string_view text) {
  size_t i = (!text.empty() && (text[0] == '+' || text[0] == '-')) ? 1 : 0;
  const size_t year_start = i;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i - year_start < 4) return false;
  const std::string_view rest = text.substr(i);
  return rest.size() == 6 && rest[0] == '-' && rest[3] == '-' &&
         std::all_of(rest.begin() + 1, rest.begin() + 3, [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
         std::all_of(rest.begin() + 4, rest.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

bool HasTimeOfDay(std::string_view text) { return text.find_first_of("T ", 8) != std::string_view::npos; }

class Converter {
 public:
  Converter(const UnboundLiteral& lit, const Type& type, std::string_view column)
      : lit_(lit), type_(type), column_(column) {}

  Result<Converted> Convert() {
    switch (type_.id()) {
      case TypeId::kBoolean: return ToBoolean();
      case TypeId::kInt: return ToInteger(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
      case TypeId::kLong: return ToInteger(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
      case TypeId::kDecimal: return ToDecimal();
      case TypeId::kFloat: return ToFloating<float>();
      case TypeId::kDouble: return ToFloating<double>();
      case TypeId::kDate: return ToDate();
      case TypeId::kTime: return ToTime();
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz:
      case TypeId::kTimestampNs:
      case TypeId::kTimestampTzNs: return ToTimestamp();
      case TypeId::kString:
        if (lit_.kind == Kind::kString) return Exact(Literal(lit_.text));
        if (IsNumeric(lit_.kind) || lit_.kind == Kind::kBoolean) {
          return Mismatch(fmt::format(": quote the value ('{}') to compare it as text", lit_.text));
        }
        return Mismatch("");
      case TypeId::kUuid: {
        if (lit_.kind != Kind::kString) return Mismatch(": write the UUID as a quoted string");
        auto bytes = ParseUuid(TrimSpace(lit_.text));
        if (!bytes.ok()) return Invalid("is not a UUID");
        return Exact(Literal(Bytes{*std::move(bytes)}));
      }
      case TypeId::kFixed:
        if (lit_.kind != Kind::kString) return Mismatch("");
        if (static_cast<int32_t>(lit_.text.size()) != type_.length()) {
          return Invalid(fmt::format("has {} bytes, but the column holds exactly {}", lit_.text.size(), type_.length()));
        }
        return Exact(Literal(Bytes{lit_.text}));
      case TypeId::kBinary:
        if (lit_.kind != Kind::kString) return Mismatch("");
        return Exact(Literal(Bytes{lit_.text}));
      default:
        return InvalidArgument("column '{}' has type {}, which filters cannot use", column_, type_.ToString());
    }
  }

 private:
  static Converted Exact(Literal v) { return {Converted::Kind::kExact, std::move(v)}; }

  Status Mismatch(std::string_view hint) const {
    return InvalidArgument("cannot compare column '{}' of type {} with {}{}", column_, type_.ToString(),
                           lit_.ToString(), hint);
  }

  Status Invalid(std::string_view why) const {
    return InvalidArgument("value {} compared with column '{}' of type {} {}", lit_.ToString(), column_,
                           type_.ToString(), why);
  }

  Status CheckCalendar(std::string_view text, int32_t days) const {
    return IsCalendarDate(text, days) ? Status::OK() : Invalid("is not a valid date");
  }

  Result<Converted> ToBoolean() {
    if (lit_.kind == Kind::kBoolean) return Exact(Literal(lit_.text == "true"));
    if (lit_.kind == Kind::kString) {
      const std::string lower = AsciiLower(TrimSpace(lit_.text));
      if (lower == "true" || lower == "false") return Exact(Literal(lower == "true"));
      return Invalid("is not a boolean (true or false)");
    }
    return Mismatch("");
  }

  Result<ExactNumber> Number() {
    if (!IsNumeric(lit_.kind) && lit_.kind != Kind::kString) return Mismatch("");
    auto n = ParseExactNumber(lit_.text);
    if (!n) return Invalid("is not a number");
    return *n;
  }

  Result<Converted> ToInteger(int64_t min, int64_t max) {
    ARROW_ASSIGN_OR_RAISE(ExactNumber n, Number());
    const bool is_int = type_.id() == TypeId::kInt;
    return Place(ToScaled(n, 0), n.negative, min, max, [is_int](__int128 v) {
      return is_int ? Literal(static_cast<int32_t>(v)) : Literal(static_cast<int64_t>(v));
    });
  }

  Result<Converted> ToDecimal() {
    ARROW_ASSIGN_OR_RAISE(ExactNumber n, Number());
    const __int128 max = Pow10(type_.precision()) - 1;
    return Place(ToScaled(n, type_.scale()), n.negative, -max, max, [](__int128 v) { return Literal(Decimal{v}); });
  }

  template <typename T>
  Result<Converted> ToFloating() {
    if (!IsNumeric(lit_.kind) && lit_.kind != Kind::kString) return Mismatch("");
    std::string_view text = TrimSpace(lit_.text);
    if (!text.empty() && text.front() == '+') text.remove_prefix(1);
    T v{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc::result_out_of_range) return Invalid("is out of range");
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return Invalid("is not a number");
    if (std::isnan(v)) {
      return InvalidArgument("column '{}' cannot be compared with NaN: use '{} IS NAN' or '{} IS NOT NAN'", column_,
                             column_, column_);
    }
    return Exact(Literal(v));
  }

  // Parses the literal as an instant in micros (or nanos); `exact` is false when the text has more
  // fractional digits than the unit keeps (the value is then floored).
  Result<std::pair<int64_t, bool>> Instant(bool nanos) {
    const std::string_view text = TrimSpace(lit_.text);
    auto v = ParseTimestamp(text, nanos);
    if (v.ok()) {
      auto days = ParseDate(text.substr(0, std::min(text.find_first_of("T ", 8), text.size())));
      if (days.ok()) ARROW_RETURN_NOT_OK(CheckCalendar(text, *days));
      return std::make_pair(*v, true);
    }
    if (!nanos) {
      auto ns = ParseTimestamp(text, true);
      if (ns.ok()) return std::make_pair(FloorDiv(*ns, 1000), *ns % 1000 == 0);
    }
    return Invalid("is not a timestamp (expected 'yyyy-mm-dd hh:mm:ss[.ffffff][+hh:mm]')");
  }

  Result<Converted> ToDate() {
    if (lit_.kind == Kind::kDate || lit_.kind == Kind::kString) {
      auto days = ParseDate(TrimSpace(lit_.text));
      if (days.ok()) {
        ARROW_RETURN_NOT_OK(CheckCalendar(TrimSpace(lit_.text), *days));
        return Exact(Literal(*days));
      }
      if (lit_.kind == Kind::kDate || !HasTimeOfDay(TrimSpace(lit_.text))) {
        return Invalid(LooksLikeDate(TrimSpace(lit_.text)) ? "is not a valid date" : "is not a date (expected 'yyyy-mm-dd')");
      }
    } else if (lit_.kind != Kind::kTimestamp && lit_.kind != Kind::kTimestampTz) {
      return Mismatch(": write dates as DATE 'yyyy-mm-dd' or 'yyyy-mm-dd'");
    }
    ARROW_ASSIGN_OR_RAISE(auto instant, Instant(false));
    const int64_t days = FloorDiv(instant.first, kMicrosPerDay);
    const bool exact = instant.second && instant.first % kMicrosPerDay == 0;
    return Converted{exact ? Converted::Kind::kExact : Converted::Kind::kBetween, Literal(static_cast<int32_t>(days))};
  }

  Result<Converted> ToTime() {
    if (lit_.kind != Kind::kString) return Mismatch(": write times as 'hh:mm:ss[.ffffff]'");
    auto v = ParseTime(TrimSpace(lit_.text));
    if (!v.ok()) return Invalid("is not a time of day (expected 'hh:mm:ss[.ffffff]')");
    return Exact(Literal(*v));
  }

  Result<Converted> ToTimestamp() {
    const TypeId id = type_.id();
    const bool nanos = id == TypeId::kTimestampNs || id == TypeId::kTimestampTzNs;
    const bool zoned = id == TypeId::kTimestampTz || id == TypeId::kTimestampTzNs;
    if (lit_.kind == Kind::kDate) {
      auto days = ParseDate(TrimSpace(lit_.text));
      if (!days.ok()) return Invalid("is not a date (expected 'yyyy-mm-dd')");
      ARROW_RETURN_NOT_OK(CheckCalendar(TrimSpace(lit_.text), *days));
      const __int128 v = static_cast<__int128>(*days) * (nanos ? kNanosPerDay : kMicrosPerDay);
      if (v > std::numeric_limits<int64_t>::max()) return Converted{Converted::Kind::kAboveMax, Literal()};
      if (v < std::numeric_limits<int64_t>::min()) return Converted{Converted::Kind::kBelowMin, Literal()};
      return Exact(Literal(static_cast<int64_t>(v)));
    }
    if (lit_.kind != Kind::kString && lit_.kind != Kind::kTimestamp && lit_.kind != Kind::kTimestampTz) {
      return Mismatch(": write timestamps as TIMESTAMP 'yyyy-mm-dd hh:mm:ss' or a quoted string");
    }
    if (!zoned && HasZone(TrimSpace(lit_.text))) {
      return InvalidArgument("column '{}' is a {} without time zone and cannot be compared with {}, which has a "
                             "zone offset", column_, type_.ToString(), lit_.ToString());
    }
    ARROW_ASSIGN_OR_RAISE(auto instant, Instant(nanos));
    return Converted{instant.second ? Converted::Kind::kExact : Converted::Kind::kBetween, Literal(instant.first)};
  }

  const UnboundLiteral& lit_;
  const Type& type_;
  std::string_view column_;
};

}  // namespace

Result<ConvertedLiteral> ConvertLiteral(const UnboundLiteral& literal, const Type& type, std::string_view column) {
  return Converter(literal, type, column).Convert();
}

}  // namespace lakesync::iceberg::internal
