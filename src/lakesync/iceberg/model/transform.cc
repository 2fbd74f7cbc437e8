#include "lakesync/iceberg/model/transform.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <regex>

#include "lakesync/common/arithmetic.h"

namespace lakesync::iceberg {
namespace {

bool IsTimestamp(TypeId id) {
  return id == TypeId::kTimestamp || id == TypeId::kTimestampTz || id == TypeId::kTimestampNs ||
         id == TypeId::kTimestampTzNs;
}

inline uint32_t Rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

}  // namespace

int32_t Murmur3Hash32(std::string_view data) {
  // MurmurHash3_x86_32 (public domain, Austin Appleby), seed 0.
  const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
  const size_t len = data.size();
  const size_t nblocks = len / 4;
  uint32_t h1 = 0;
  const uint32_t c1 = 0xcc9e2d51;
  const uint32_t c2 = 0x1b873593;
  for (size_t i = 0; i < nblocks; ++i) {
    uint32_t k1;
    std::memcpy(&k1, bytes + i * 4, 4);
    k1 *= c1;
    k1 = Rotl32(k1, 15);
    k1 *= c2;
    h1 ^= k1;
    h1 = Rotl32(h1, 13);
    h1 = h1 * 5 + 0xe6546b64;
  }
  const uint8_t* tail = bytes + nblocks * 4;
  uint32_t k1 = 0;
  switch (len & 3) {
    case 3: k1 ^= static_cast<uint32_t>(tail[2]) << 16; [[fallthrough]];
    case 2: k1 ^= static_cast<uint32_t>(tail[1]) << 8; [[fallthrough]];
    case 1:
      k1 ^= tail[0];
      k1 *= c1;
      k1 = Rotl32(k1, 15);
      k1 *= c2;
      h1 ^= k1;
  }
  h1 ^= static_cast<uint32_t>(len);
  h1 ^= h1 >> 16;
  h1 *= 0x85ebca6b;
  h1 ^= h1 >> 13;
  h1 *= 0xc2b2ae35;
  h1 ^= h1 >> 16;
  return static_cast<int32_t>(h1);
}

int32_t BucketHashOfLong(int64_t value) {
  char buf[8];
  std::memcpy(buf, &value, 8);  // little-endian host (checked in literal.cc)
  return Murmur3Hash32(std::string_view(buf, 8));
}

int32_t BucketHashOfUnscaled(__int128 unscaled) {
  char buf[16];
  return Murmur3Hash32(MinimalBigEndian(unscaled, buf));
}

size_t Utf8PrefixBytes(std::string_view s, int32_t code_points) {
  size_t i = 0;
  for (int32_t count = 0; i < s.size() && count < code_points; ++count) {
    const auto c = static_cast<unsigned char>(s[i]);
    i += c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 1;
  }
  return std::min(i, s.size());
}

Result<int32_t> BucketHash(const Type& type, const Literal& value) {
  switch (type.id()) {
    case TypeId::kInt:
    case TypeId::kDate: return BucketHashOfLong(value.get<int32_t>());
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: return BucketHashOfLong(TimestampMicros(type.id(), value.get<int64_t>()));
    case TypeId::kString: return Murmur3Hash32(value.get<std::string>());
    case TypeId::kUuid:
    case TypeId::kFixed:
    case TypeId::kBinary: return Murmur3Hash32(value.get<Bytes>().data);
    case TypeId::kDecimal: return BucketHashOfUnscaled(value.get<Decimal>().unscaled);
    default: return InvalidArgument("cannot bucket values of type {}", type.ToString());
  }
}

int32_t YearsFromDays(int32_t days) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, y, m, d);
  return static_cast<int32_t>(y - 1970);
}

int32_t MonthsFromDays(int32_t days) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, y, m, d);
  return static_cast<int32_t>((y - 1970) * 12 + (static_cast<int64_t>(m) - 1));
}

int32_t DaysFromMicros(int64_t micros) { return static_cast<int32_t>(FloorDiv(micros, 86400LL * 1000000)); }
int32_t HoursFromMicros(int64_t micros) { return static_cast<int32_t>(FloorDiv(micros, 3600LL * 1000000)); }

Result<Transform> Transform::Parse(std::string_view text) {
  static const std::regex kParam(R"(^(bucket|truncate)\[\s*(\d+)\s*\]$)");
  const std::string t(text);
  if (t == "identity") return Transform(Kind::kIdentity);
  if (t == "year") return Transform(Kind::kYear);
  if (t == "month") return Transform(Kind::kMonth);
  if (t == "day") return Transform(Kind::kDay);
  if (t == "hour") return Transform(Kind::kHour);
  if (t == "void") return Transform(Kind::kVoid);
  std::smatch m;
  if (std::regex_match(t, m, kParam)) {
    // from_chars instead of std::stoll: a parameter too long for 64 bits must be an error, not a throw.
    const std::string digits = m[2];
    long long n = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec != std::errc() || ptr != digits.data() + digits.size() || n <= 0 || n > INT32_MAX) {
      return InvalidArgument("transform '{}' needs a positive parameter", t);
    }
    return Transform(m[1] == "bucket" ? Kind::kBucket : Kind::kTruncate, static_cast<int32_t>(n));
  }
  return Transform(Kind::kUnknown, 0, t);
}

std::string Transform::ToString() const {
  switch (kind_) {
    case Kind::kIdentity: return "identity";
    case Kind::kBucket: return fmt::format("bucket[{}]", param_);
    case Kind::kTruncate: return fmt::format("truncate[{}]", param_);
    case Kind::kYear: return "year";
    case Kind::kMonth: return "month";
    case Kind::kDay: return "day";
    case Kind::kHour: return "hour";
    case Kind::kVoid: return "void";
    case Kind::kUnknown: return raw_;
  }
  return raw_;
}

bool Transform::CanTransform(const Type& source) const {
  const TypeId id = source.id();
  switch (kind_) {
    case Kind::kIdentity:
      return source.is_primitive() && id != TypeId::kVariant && id != TypeId::kGeometry &&
             id != TypeId::kGeography;
    case Kind::kVoid: return true;
    case Kind::kBucket:
      return id == TypeId::kInt || id == TypeId::kLong || id == TypeId::kDecimal || id == TypeId::kDate ||
             id == TypeId::kTime || IsTimestamp(id) || id == TypeId::kString || id == TypeId::kUuid ||
             id == TypeId::kFixed || id == TypeId::kBinary;
    case Kind::kTruncate:
      return id == TypeId::kInt || id == TypeId::kLong || id == TypeId::kDecimal || id == TypeId::kString ||
             id == TypeId::kBinary;
    case Kind::kYear:
    case Kind::kMonth:
    case Kind::kDay: return id == TypeId::kDate || IsTimestamp(id);
    case Kind::kHour: return IsTimestamp(id);
    case Kind::kUnknown: return false;
  }
  return false;
}

Result<TypePtr> Transform::ResultType(const TypePtr& source) const {
  if (!CanTransform(*source)) {
    return InvalidArgument("transform {} cannot be applied to a {} column", ToString(), source->ToString());
  }
  switch (kind_) {
    case Kind::kIdentity:
    case Kind::kTruncate:
    case Kind::kVoid: return source;
    case Kind::kDay: return Type::Date();
    default: return Type::Int();
  }
}

bool Transform::PreservesOrder() const {
  return kind_ != Kind::kBucket && kind_ != Kind::kVoid && kind_ != Kind::kUnknown;
}

Result<Literal> Transform::Apply(const Type& source, const Literal& value) const {
  if (kind_ == Kind::kVoid || value.is_null()) return Literal::Null();
  if (!CanTransform(source)) {
    return InvalidArgument("transform {} cannot be applied to a {} value", ToString(), source.ToString());
  }
  if (!LiteralMatchesType(value, source)) {
    return InvalidArgument("value does not match the source type {} of transform {}", source.ToString(), ToString());
  }
  const TypeId id = source.id();
  switch (kind_) {
    case Kind::kIdentity: return value;
    case Kind::kBucket: {
      ARROW_ASSIGN_OR_RAISE(int32_t h, BucketHash(source, value));
      return Literal(BucketOf(h, param_));
    }
    case Kind::kTruncate: {
      const int64_t w = param_;
      switch (id) {
        case TypeId::kInt: return Literal(static_cast<int32_t>(TruncateInteger<int64_t>(value.get<int32_t>(), w)));
        case TypeId::kLong: return Literal(TruncateInteger(value.get<int64_t>(), w));
        case TypeId::kDecimal: return Literal(Decimal{TruncateInteger(value.get<Decimal>().unscaled, w)});
        case TypeId::kString: {
          const auto& s = value.get<std::string>();
          return Literal(s.substr(0, Utf8PrefixBytes(s, param_)));
        }
        default: {
          const auto& b = value.get<Bytes>().data;
          return Literal(Bytes{b.substr(0, static_cast<size_t>(param_))});
        }
      }
    }
    case Kind::kYear:
    case Kind::kMonth:
    case Kind::kDay:
    case Kind::kHour: {
      int64_t micros = 0;
      int32_t days = 0;
      if (id == TypeId::kDate) {
        days = value.get<int32_t>();
      } else {
        micros = TimestampMicros(id, value.get<int64_t>());
        days = DaysFromMicros(micros);
      }
      if (kind_ == Kind::kYear) return Literal(YearsFromDays(days));
      if (kind_ == Kind::kMonth) return Literal(MonthsFromDays(days));
      if (kind_ == Kind::kDay) return Literal(days);
      return Literal(HoursFromMicros(micros));
    }
    default: return Unsupported("cannot apply unknown transform '{}'", ToString());
  }
}

}  // namespace lakesync::iceberg
