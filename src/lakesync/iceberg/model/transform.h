// Partition transforms (spec "Partition Transforms"): identity, bucket[N], truncate[W],
// year/month/day/hour and void, applied to single values. Vectorised application over Arrow arrays
// lives with the writers; both go through the same scalar rules here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "lakesync/common/arithmetic.h"
#include "lakesync/iceberg/model/literal.h"
#include "lakesync/iceberg/model/types.h"

namespace lakesync::iceberg {

class Transform {
 public:
  enum class Kind { kIdentity, kBucket, kTruncate, kYear, kMonth, kDay, kHour, kVoid, kUnknown };

  Transform() = default;
  Transform(Kind kind, int32_t param = 0, std::string raw = {}) : kind_(kind), param_(param), raw_(std::move(raw)) {}
  static Transform Identity() { return Transform(Kind::kIdentity); }
  static Transform Bucket(int32_t n) { return Transform(Kind::kBucket, n); }
  static Transform Truncate(int32_t w) { return Transform(Kind::kTruncate, w); }

  // Parses the metadata form: "identity", "bucket[16]", "truncate[4]", "day", ... Unknown names give
  // Kind::kUnknown (readers must tolerate them; writers refuse them) rather than an error.
  static Result<Transform> Parse(std::string_view text);

  Kind kind() const { return kind_; }
  int32_t param() const { return param_; }
  // Metadata form, e.g. "bucket[16]".
  std::string ToString() const;
  bool operator==(const Transform& o) const { return kind_ == o.kind_ && param_ == o.param_ && raw_ == o.raw_; }

  // Whether the transform accepts a source column of this type.
  bool CanTransform(const Type& source) const;
  // The partition value's type for a source type (day → date, bucket → int, ...).
  Result<TypePtr> ResultType(const TypePtr& source) const;
  // Applies the transform to one value of the source type; null maps to null.
  Result<Literal> Apply(const Type& source, const Literal& value) const;

  // True when ordering is preserved (a <= b implies t(a) <= t(b)), so ranges can be projected.
  bool PreservesOrder() const;

 private:
  Kind kind_ = Kind::kIdentity;
  int32_t param_ = 0;
  std::string raw_;  // the original text of an unknown transform
};

// murmur3_x86_32 with seed 0, as the bucket transform specifies.
int32_t Murmur3Hash32(std::string_view bytes);
// The 32-bit hash the bucket transform uses for a value (before masking and modulo).
Result<int32_t> BucketHash(const Type& type, const Literal& value);

// The per-value rules of the transforms, one place each, for both ways of applying them:
// Transform::Apply (one value: filters, partition values of a literal) and ApplyTransform
// (write/transform_arrow.h: a column, when writing). A partition value must not depend on which
// of the two computed it.
//
// bucket: the hash of an int, long, date, time or timestamp (int and date widened to long), as the
// spec's 8 little-endian bytes,
int32_t BucketHashOfLong(int64_t value);
// of a decimal's unscaled value, as its minimal big-endian bytes (the scale is not hashed),
int32_t BucketHashOfUnscaled(__int128 unscaled);
// and the bucket of a hash.
inline int32_t BucketOf(int32_t hash, int32_t buckets) { return static_cast<int32_t>((hash & INT32_MAX) % buckets); }
// truncate[W] of an int, long or decimal's unscaled value: the multiple of W at or below it (floored,
// so -1 truncates to -W),
template <typename T>
T TruncateInteger(T value, int64_t width) {
  const T w = width;
  return value - (((value % w) + w) % w);
}
// and of a string: the byte length of its first W code points.
size_t Utf8PrefixBytes(std::string_view s, int32_t code_points);
// Timestamps in nanoseconds are floored to microseconds before bucket and the time transforms.
inline int64_t TimestampMicros(TypeId id, int64_t value) {
  return id == TypeId::kTimestampNs || id == TypeId::kTimestampTzNs ? FloorDiv(value, 1000) : value;
}

// Time transform helpers (units since 1970-01-01, flooring for earlier values).
int32_t YearsFromDays(int32_t days);
int32_t MonthsFromDays(int32_t days);
int32_t DaysFromMicros(int64_t micros);
int32_t HoursFromMicros(int64_t micros);

}  // namespace lakesync::iceberg
