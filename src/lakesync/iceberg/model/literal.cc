#include "lakesync/iceberg/model/literal.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <regex>
#include <utility>

#include "lakesync/common/arithmetic.h"

namespace lakesync::iceberg {
namespace {

static_assert(std::endian::native == std::endian::little, "lakesync assumes a little-endian host");

template <typename T>
std::string LittleEndian(T v) {
  std::string out(sizeof(T), '\0');
  std::memcpy(out.data(), &v, sizeof(T));
  return out;
}

template <typename T>
Result<T> ReadLittleEndian(std::string_view bytes, const Type& type) {
  if (bytes.size() != sizeof(T)) {
    return Corrupt("a {} value must be {} bytes, got {}", type.ToString(), sizeof(T), bytes.size());
  }
  T v;
  std::memcpy(&v, bytes.data(), sizeof(T));
  return v;
}

}  // namespace

// Civil-from-days and days-from-civil (proleptic Gregorian), after H. Hinnant's public-domain algorithms.
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void CivilFromDays(int64_t z, int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
}

namespace {

std::string FormatFraction(int64_t fraction, int digits) {
  if (fraction == 0) return "";
  std::string s = fmt::format("{:0{}d}", fraction, digits);
  while (!s.empty() && s.back() == '0') s.pop_back();
  return "." + s;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string ToHex(std::string_view bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0xf]);
  }
  return out;
}

Result<std::string> FromHex(std::string_view hex) {
  if (hex.size() % 2) return InvalidArgument("hex string '{}' has an odd length", hex);
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = HexValue(hex[i]);
    const int lo = HexValue(hex[i + 1]);
    if (hi < 0 || lo < 0) return InvalidArgument("'{}' is not a hex string", hex);
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

template <typename T>
int Cmp(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

}  // namespace

std::string Int128ToString(__int128 v) {
  if (v == 0) return "0";
  const bool neg = v < 0;
  auto u = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u) {
    s.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  if (neg) s.push_back('-');
  std::reverse(s.begin(), s.end());
  return s;
}

std::string_view MinimalBigEndian(__int128 unscaled, char (&buf)[16]) {
  auto u = static_cast<unsigned __int128>(unscaled);
  for (int i = 15; i >= 0; --i) {
    buf[i] = static_cast<char>(u & 0xff);
    u >>= 8;
  }
  // Drop leading bytes that only repeat the sign of the byte after them.
  int start = 0;
  while (start < 15) {
    const auto b0 = static_cast<unsigned char>(buf[start]);
    const auto b1 = static_cast<unsigned char>(buf[start + 1]);
    if ((b0 == 0x00 && !(b1 & 0x80)) || (b0 == 0xff && (b1 & 0x80))) {
      ++start;
    } else {
      break;
    }
  }
  return std::string_view(buf + start, static_cast<size_t>(16 - start));
}

std::string FormatDate(int32_t days) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, y, m, d);
  // ISO-8601 expanded years, as Java's LocalDate writes them: four digits after the sign, and a sign
  // for years before 0000 and after 9999 ("-0001-01-01", "+10000-01-01").
  const char* sign = y < 0 ? "-" : (y > 9999 ? "+" : "");
  return fmt::format("{}{:04d}-{:02d}-{:02d}", sign, y < 0 ? -y : y, m, d);
}

std::string FormatTime(int64_t micros) {
  const int64_t secs = micros / 1000000;
  return fmt::format("{:02d}:{:02d}:{:02d}{}", secs / 3600, (secs / 60) % 60, secs % 60,
                     FormatFraction(micros % 1000000, 6));
}

std::string FormatTimestamp(int64_t value, bool nanos, bool utc) {
  const int64_t per_sec = nanos ? 1000000000LL : 1000000LL;
  const int64_t secs = FloorDiv(value, per_sec);
  const int64_t frac = value - secs * per_sec;
  const int64_t days = FloorDiv(secs, 86400);
  const int64_t sod = secs - days * 86400;
  return fmt::format("{}T{:02d}:{:02d}:{:02d}{}{}", FormatDate(static_cast<int32_t>(days)), sod / 3600,
                     (sod / 60) % 60, sod % 60, FormatFraction(frac, nanos ? 9 : 6), utc ? "+00:00" : "");
}

std::string FormatDecimal(__int128 unscaled, int32_t scale) {
  const bool neg = unscaled < 0;
  std::string digits = Int128ToString(neg ? -unscaled : unscaled);
  if (scale > 0) {
    if (static_cast<int32_t>(digits.size()) <= scale) {
      digits.insert(0, static_cast<size_t>(scale) - digits.size() + 1, '0');
    }
    digits.insert(digits.size() - static_cast<size_t>(scale), ".");
  }
  return neg ? "-" + digits : digits;
}

std::string FormatUuid(std::string_view b) {
  const std::string h = ToHex(b);
  if (h.size() != 32) return h;
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20);
}

Result<int32_t> ParseDate(std::string_view text) {
  static const std::regex kDate(R"(^([+-]?\d{4,9})-(\d{2})-(\d{2})$)");
  std::cmatch m;
  if (!std::regex_match(text.begin(), text.end(), m, kDate)) {
    return InvalidArgument("'{}' is not a date (expected YYYY-MM-DD)", text);
  }
  const int64_t y = std::stoll(m[1]);
  const unsigned mo = static_cast<unsigned>(std::stoi(m[2]));
  const unsigned d = static_cast<unsigned>(std::stoi(m[3]));
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return InvalidArgument("'{}' is not a valid date", text);
  const int64_t days = DaysFromCivil(y, mo, d);
  // Days past the end of the month ("2017-02-30") would silently roll over into the next month.
  int64_t y2;
  unsigned mo2, d2;
  CivilFromDays(days, y2, mo2, d2);
  if (mo2 != mo || d2 != d || days < INT32_MIN || days > INT32_MAX) {
    return InvalidArgument("'{}' is not a valid date", text);
  }
  return static_cast<int32_t>(days);
}

namespace {

// Parses "HH:MM[:SS[.fraction]]" into units of 10^-digits seconds of the day.
Result<int64_t> ParseTimeOfDay(std::string_view text, int digits) {
  static const std::regex kTime(R"(^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$)");
  std::cmatch m;
  if (!std::regex_match(text.begin(), text.end(), m, kTime)) {
    return InvalidArgument("'{}' is not a time of day (expected HH:MM:SS[.ffffff])", text);
  }
  const int64_t h = std::stoll(m[1]);
  const int64_t mi = std::stoll(m[2]);
  const int64_t s = m[3].matched ? std::stoll(m[3]) : 0;
  if (h > 23 || mi > 59 || s > 60) return InvalidArgument("'{}' is not a valid time of day", text);
  std::string frac = m[4].matched ? m[4].str() : "";
  if (static_cast<int>(frac.size()) > digits) {
    if (frac.find_first_not_of('0', static_cast<size_t>(digits)) != std::string::npos) {
      return InvalidArgument("'{}' has more fractional digits than the type keeps ({})", text, digits);
    }
    frac.resize(static_cast<size_t>(digits));
  }
  frac.append(static_cast<size_t>(digits) - frac.size(), '0');
  int64_t scale = 1;
  for (int i = 0; i < digits; ++i) scale *= 10;
  return ((h * 60 + mi) * 60 + s) * scale + (digits ? std::stoll(frac) : 0);
}

}  // namespace

Result<int64_t> ParseTime(std::string_view text) { return ParseTimeOfDay(text, 6); }

Result<int64_t> ParseTimestamp(std::string_view text, bool nanos) {
  static const std::regex kTs(R"(^([+-]?\d{4,9}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?))?(Z|[+-]\d{2}:?\d{2})?$)");
  std::cmatch m;
  if (!std::regex_match(text.begin(), text.end(), m, kTs)) {
    return InvalidArgument("'{}' is not an ISO-8601 timestamp (expected YYYY-MM-DDTHH:MM:SS[.ffffff][Z])", text);
  }
  LS_ASSIGN_OR_RAISE_CTX(int32_t days, ParseDate(m[1].str()), "timestamp '{}'", text);
  const int digits = nanos ? 9 : 6;
  int64_t tod = 0;
  if (m[2].matched) {
    LS_ASSIGN_OR_RAISE_CTX(tod, ParseTimeOfDay(m[2].str(), digits), "timestamp '{}'", text);
  }
  const int64_t per_sec = nanos ? 1000000000LL : 1000000LL;
  int64_t value = static_cast<int64_t>(days) * 86400 * per_sec + tod;
  if (m[3].matched && m[3].str() != "Z") {
    std::string off = m[3].str();
    off.erase(std::remove(off.begin(), off.end(), ':'), off.end());
    const int sign = off[0] == '-' ? -1 : 1;
    const int64_t minutes = std::stoll(off.substr(1, 2)) * 60 + std::stoll(off.substr(3, 2));
    value -= sign * minutes * 60 * per_sec;
  }
  return value;
}

Result<__int128> ParseDecimal(std::string_view text, int32_t scale) {
  // Plain ("14.20") or scientific ("1E-10", "2E+20"): Python's str(Decimal), which pyiceberg writes for
  // defaults, switches to scientific notation for small values such as 0 at scale 10 ("0E-10").
  static const std::regex kDec(R"(^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,4}))?$)");
  std::cmatch m;
  if (!std::regex_match(text.begin(), text.end(), m, kDec) || (m[2].length() == 0 && m[3].length() == 0)) {
    return InvalidArgument("'{}' is not a decimal number", text);
  }
  // The value is digits * 10^(exponent - fraction length); at `scale` the unscaled value is
  // digits * 10^shift.
  std::string digits = m[2].str() + m[3].str();
  const int64_t exponent = m[4].matched ? std::stoll(m[4].str()) : 0;
  const int64_t shift = exponent - static_cast<int64_t>(m[3].length()) + scale;
  // Leading zeros are not significant: "-0.999…" at scale 38 has 38 digits, not 39.
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
  if (shift < 0) {
    const size_t drop = static_cast<size_t>(-shift);
    const size_t keep = digits.size() > drop ? digits.size() - drop : 0;
    if (digits.find_first_not_of('0', keep) != std::string::npos) {
      return InvalidArgument("'{}' has more than {} decimal places", text, scale);
    }
    digits.resize(keep);
  } else if (!digits.empty()) {
    if (shift > 38) return InvalidArgument("'{}' has more than 38 digits", text);
    digits.append(static_cast<size_t>(shift), '0');
  }
  if (digits.size() > 38) return InvalidArgument("'{}' has more than 38 digits", text);
  __int128 v = 0;
  for (char c : digits) v = v * 10 + (c - '0');
  return m[1] == "-" ? -v : v;
}

Result<std::string> ParseUuid(std::string_view text) {
  std::string hex;
  for (char c : text) {
    if (c != '-') hex.push_back(c);
  }
  if (hex.size() != 32) return InvalidArgument("'{}' is not a UUID", text);
  return FromHex(hex);
}

bool LiteralMatchesType(const Literal& lit, const Type& type) {
  const auto& v = lit.value();
  if (lit.is_null()) return true;
  switch (type.id()) {
    case TypeId::kBoolean: return std::holds_alternative<bool>(v);
    case TypeId::kInt:
    case TypeId::kDate: return std::holds_alternative<int32_t>(v);
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: return std::holds_alternative<int64_t>(v);
    case TypeId::kFloat: return std::holds_alternative<float>(v);
    case TypeId::kDouble: return std::holds_alternative<double>(v);
    case TypeId::kString: return std::holds_alternative<std::string>(v);
    case TypeId::kUuid:
    case TypeId::kFixed:
    case TypeId::kBinary: return std::holds_alternative<Bytes>(v);
    case TypeId::kDecimal: return std::holds_alternative<Decimal>(v);
    default: return false;
  }
}

Result<Literal> PromoteLiteral(const Literal& lit, const Type& type) {
  if (LiteralMatchesType(lit, type)) return lit;
  const auto& v = lit.value();
  switch (type.id()) {
    case TypeId::kLong:
      if (std::holds_alternative<int32_t>(v)) return Literal(int64_t{std::get<int32_t>(v)});
      break;
    case TypeId::kDouble:
      if (std::holds_alternative<float>(v)) return Literal(static_cast<double>(std::get<float>(v)));
      break;
    // Only to timestamps without a zone: a date is not an instant (spec "Schema Evolution").
    case TypeId::kTimestamp:
      if (std::holds_alternative<int32_t>(v)) return Literal(int64_t{std::get<int32_t>(v)} * 86400LL * 1000000LL);
      break;
    case TypeId::kTimestampNs:
      if (std::holds_alternative<int32_t>(v)) {
        return Literal(int64_t{std::get<int32_t>(v)} * 86400LL * 1000000000LL);
      }
      break;
    default:
      break;
  }
  return InvalidArgument("a value stored under another type cannot be read as {} (not a type promotion the spec "
                         "allows)", type.ToString());
}

int Literal::Compare(const Literal& other) const {
  if (is_null() || other.is_null()) return Cmp(other.is_null(), is_null());
  return std::visit(
      [&](const auto& a) -> int {
        using T = std::decay_t<decltype(a)>;
        if (!std::holds_alternative<T>(other.value_)) return Cmp(value_.index(), other.value_.index());
        const T& b = std::get<T>(other.value_);
        if constexpr (std::is_same_v<T, std::monostate>) {
          return 0;
        } else if constexpr (std::is_same_v<T, Bytes>) {
          return Cmp(std::string_view(a.data), std::string_view(b.data));  // char_traits<char> compares as unsigned
        } else if constexpr (std::is_same_v<T, Decimal>) {
          return Cmp(a.unscaled, b.unscaled);
        } else {
          return Cmp(a, b);
        }
      },
      value_);
}

Result<std::string> Literal::ToBytes(const Type& type) const {
  if (is_null()) return InvalidArgument("null has no single-value binary form");
  if (!LiteralMatchesType(*this, type)) {
    return InvalidArgument("value does not match type {}", type.ToString());
  }
  switch (type.id()) {
    case TypeId::kBoolean: return std::string(1, get<bool>() ? '\x01' : '\x00');
    case TypeId::kInt:
    case TypeId::kDate: return LittleEndian(get<int32_t>());
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: return LittleEndian(get<int64_t>());
    case TypeId::kFloat: return LittleEndian(get<float>());
    case TypeId::kDouble: return LittleEndian(get<double>());
    case TypeId::kString: return get<std::string>();
    case TypeId::kUuid:
    case TypeId::kFixed:
    case TypeId::kBinary: return get<Bytes>().data;
    case TypeId::kDecimal: {
      char buf[16];
      return std::string(MinimalBigEndian(get<Decimal>().unscaled, buf));
    }
    default: return Unsupported("no binary single-value form for type {}", type.ToString());
  }
}

Result<Literal> Literal::FromBytes(const Type& type, std::string_view bytes) {
  switch (type.id()) {
    case TypeId::kBoolean:
      if (bytes.size() != 1) return Corrupt("a boolean value must be 1 byte, got {}", bytes.size());
      return Literal(bytes[0] != 0);
    case TypeId::kInt:
    case TypeId::kDate: {
      ARROW_ASSIGN_OR_RAISE(auto v, ReadLittleEndian<int32_t>(bytes, type));
      return Literal(v);
    }
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      // Java writes 4-byte bounds for long columns promoted from int: accept them.
      if (type.id() == TypeId::kLong && bytes.size() == 4) {
        ARROW_ASSIGN_OR_RAISE(auto v, ReadLittleEndian<int32_t>(bytes, type));
        return Literal(static_cast<int64_t>(v));
      }
      ARROW_ASSIGN_OR_RAISE(auto v, ReadLittleEndian<int64_t>(bytes, type));
      return Literal(v);
    }
    case TypeId::kFloat: {
      ARROW_ASSIGN_OR_RAISE(auto v, ReadLittleEndian<float>(bytes, type));
      return Literal(v);
    }
    case TypeId::kDouble: {
      if (bytes.size() == 4) {  // promoted from float
        ARROW_ASSIGN_OR_RAISE(auto v, ReadLittleEndian<float>(bytes, type));
        return Literal(static_cast<double>(v));
      }
      ARROW_ASSIGN_OR_RAISE(auto v, ReadLittleEndian<double>(bytes, type));
      return Literal(v);
    }
    case TypeId::kString: return Literal(std::string(bytes));
    case TypeId::kUuid:
    case TypeId::kFixed:
    case TypeId::kBinary: return Literal(Bytes{std::string(bytes)});
    case TypeId::kDecimal: {
      if (bytes.empty() || bytes.size() > 16) return Corrupt("a decimal value must be 1..16 bytes, got {}", bytes.size());
      __int128 v = (static_cast<unsigned char>(bytes[0]) & 0x80) ? -1 : 0;
      for (unsigned char c : bytes) v = static_cast<__int128>((static_cast<unsigned __int128>(v) << 8) | c);
      return Literal(Decimal{v});
    }
    default: return Unsupported("no binary single-value form for type {}", type.ToString());
  }
}

Result<nlohmann::json> Literal::ToJson(const Type& type) const {
  if (is_null()) return nlohmann::json(nullptr);
  if (!LiteralMatchesType(*this, type)) return InvalidArgument("value does not match type {}", type.ToString());
  switch (type.id()) {
    case TypeId::kBoolean: return nlohmann::json(get<bool>());
    case TypeId::kInt: return nlohmann::json(get<int32_t>());
    case TypeId::kLong: return nlohmann::json(get<int64_t>());
    case TypeId::kFloat: return nlohmann::json(get<float>());
    case TypeId::kDouble: return nlohmann::json(get<double>());
    case TypeId::kDecimal: return nlohmann::json(FormatDecimal(get<Decimal>().unscaled, type.scale()));
    case TypeId::kDate: return nlohmann::json(FormatDate(get<int32_t>()));
    case TypeId::kTime: return nlohmann::json(FormatTime(get<int64_t>()));
    case TypeId::kTimestamp: return nlohmann::json(FormatTimestamp(get<int64_t>(), false, false));
    case TypeId::kTimestampTz: return nlohmann::json(FormatTimestamp(get<int64_t>(), false, true));
    case TypeId::kTimestampNs: return nlohmann::json(FormatTimestamp(get<int64_t>(), true, false));
    case TypeId::kTimestampTzNs: return nlohmann::json(FormatTimestamp(get<int64_t>(), true, true));
    case TypeId::kString: return nlohmann::json(get<std::string>());
    case TypeId::kUuid: return nlohmann::json(FormatUuid(get<Bytes>().data));
    case TypeId::kFixed:
    case TypeId::kBinary: return nlohmann::json(ToHex(get<Bytes>().data));
    default: return Unsupported("no JSON single-value form for type {}", type.ToString());
  }
}

Result<Literal> Literal::FromJson(const Type& type, const nlohmann::json& j) {
  if (j.is_null()) return Literal();
  auto expect = [&](bool ok) -> Status {
    return ok ? Status::OK() : InvalidArgument("JSON value {} is not a valid {}", j.dump(), type.ToString());
  };
  switch (type.id()) {
    case TypeId::kBoolean:
      ARROW_RETURN_NOT_OK(expect(j.is_boolean()));
      return Literal(j.get<bool>());
    case TypeId::kInt: {
      // Out-of-range numbers must not wrap silently into another value.
      const bool fits = j.is_number_unsigned() ? std::in_range<int32_t>(j.get<uint64_t>())
                                               : j.is_number_integer() && std::in_range<int32_t>(j.get<int64_t>());
      ARROW_RETURN_NOT_OK(expect(fits));
      return Literal(static_cast<int32_t>(j.get<int64_t>()));
    }
    case TypeId::kLong: {
      const bool fits = j.is_number_unsigned() ? std::in_range<int64_t>(j.get<uint64_t>()) : j.is_number_integer();
      ARROW_RETURN_NOT_OK(expect(fits));
      return Literal(j.get<int64_t>());
    }
    case TypeId::kFloat:
      ARROW_RETURN_NOT_OK(expect(j.is_number()));
      return Literal(j.get<float>());
    case TypeId::kDouble:
      ARROW_RETURN_NOT_OK(expect(j.is_number()));
      return Literal(j.get<double>());
    default:
      break;
  }
  ARROW_RETURN_NOT_OK(expect(j.is_string()));
  const std::string s = j.get<std::string>();
  switch (type.id()) {
    case TypeId::kDecimal: {
      ARROW_ASSIGN_OR_RAISE(auto v, ParseDecimal(s, type.scale()));
      return Literal(Decimal{v});
    }
    case TypeId::kDate: {
      ARROW_ASSIGN_OR_RAISE(auto v, ParseDate(s));
      return Literal(v);
    }
    case TypeId::kTime: {
      ARROW_ASSIGN_OR_RAISE(auto v, ParseTime(s));
      return Literal(v);
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      const bool nanos = type.id() == TypeId::kTimestampNs || type.id() == TypeId::kTimestampTzNs;
      ARROW_ASSIGN_OR_RAISE(auto v, ParseTimestamp(s, nanos));
      return Literal(v);
    }
    case TypeId::kString: return Literal(s);
    case TypeId::kUuid: {
      ARROW_ASSIGN_OR_RAISE(auto v, ParseUuid(s));
      return Literal(Bytes{std::move(v)});
    }
    case TypeId::kFixed:
    case TypeId::kBinary: {
      ARROW_ASSIGN_OR_RAISE(auto v, FromHex(s));
      return Literal(Bytes{std::move(v)});
    }
    default: return Unsupported("no JSON single-value form for type {}", type.ToString());
  }
}

std::string Literal::ToString(const Type& type) const {
  if (is_null()) return "null";
  if (!LiteralMatchesType(*this, type)) return "<mismatched value>";
  switch (type.id()) {
    case TypeId::kBoolean: return get<bool>() ? "true" : "false";
    case TypeId::kInt: return std::to_string(get<int32_t>());
    case TypeId::kLong: return std::to_string(get<int64_t>());
    case TypeId::kFloat: return fmt::format("{}", get<float>());
    case TypeId::kDouble: return fmt::format("{}", get<double>());
    default: {
      auto j = ToJson(type);
      return j.ok() ? j->get<std::string>() : "<unprintable>";
    }
  }
}

}  // namespace lakesync::iceberg
