#include <parquet/schema.h>
#include <parquet/statistics.h>
#include <parquet/types.h>

#include "lakesync/common/arithmetic.h"
#include "lakesync/formats/parquet/parquet_stats_internal.h"

namespace lakesync::parquet_io::internal {
namespace {

using iceberg::Literal;
using iceberg::TypeId;

bool IsTimestamp(TypeId id) {
  return id == TypeId::kTimestamp || id == TypeId::kTimestampTz || id == TypeId::kTimestampNs ||
         id == TypeId::kTimestampTzNs;
}
bool IsNanos(TypeId id) { return id == TypeId::kTimestampNs || id == TypeId::kTimestampTzNs; }

// Big-endian two's complement (a Parquet FIXED/BINARY decimal) to an unscaled value.
std::optional<__int128> BigEndianToInt128(const uint8_t* p, int32_t len) {
  if (len <= 0 || len > 16) return std::nullopt;
  __int128 v = (p[0] & 0x80) ? -1 : 0;
  for (int32_t i = 0; i < len; ++i) v = static_cast<__int128>((static_cast<unsigned __int128>(v) << 8) | p[i]);
  return v;
}

// Units per second of a Parquet time/timestamp annotation.
int64_t PerSecond(parquet::LogicalType::TimeUnit::unit unit) {
  switch (unit) {
    case parquet::LogicalType::TimeUnit::MILLIS: return 1000;
    case parquet::LogicalType::TimeUnit::MICROS: return 1000000;
    case parquet::LogicalType::TimeUnit::NANOS: return 1000000000;
    default: return 0;
  }
}

std::optional<int64_t> ConvertUnit(int64_t v, int64_t from_per_second, int64_t to_per_second) {
  if (from_per_second <= 0) return std::nullopt;
  if (from_per_second == to_per_second) return v;
  if (from_per_second < to_per_second) return v * (to_per_second / from_per_second);
  return FloorDiv(v, from_per_second / to_per_second);
}

// Converts one integer stat value of a column annotated `lt` to the Iceberg type's literal.
std::optional<Literal> FromInteger(int64_t v, bool is_int32, const parquet::LogicalType& lt,
                                   const iceberg::Type& type) {
  const TypeId id = type.id();
  if (lt.is_int()) {
    if (!static_cast<const parquet::IntLogicalType&>(lt).is_signed()) return std::nullopt;
  }
  if (lt.is_decimal()) {
    if (id != TypeId::kDecimal) return std::nullopt;
    if (static_cast<const parquet::DecimalLogicalType&>(lt).scale() != type.scale()) return std::nullopt;
    return Literal(iceberg::Decimal{v});
  }
  if (lt.is_timestamp()) {
    if (!IsTimestamp(id)) return std::nullopt;
    const auto& ts = static_cast<const parquet::TimestampLogicalType&>(lt);
    auto out = ConvertUnit(v, PerSecond(ts.time_unit()), IsNanos(id) ? 1000000000 : 1000000);
    if (!out) return std::nullopt;
    return Literal(*out);
  }
  if (lt.is_time()) {
    if (id != TypeId::kTime) return std::nullopt;
    const auto& t = static_cast<const parquet::TimeLogicalType&>(lt);
    auto out = ConvertUnit(v, PerSecond(t.time_unit()), 1000000);
    if (!out) return std::nullopt;
    return Literal(*out);
  }
  if (lt.is_date()) {
    if (id != TypeId::kDate) return std::nullopt;
    return Literal(static_cast<int32_t>(v));
  }
  // Plain or signed-int annotated integers.
  switch (id) {
    case TypeId::kInt:
      if (!is_int32) return std::nullopt;
      return Literal(static_cast<int32_t>(v));
    case TypeId::kLong: return Literal(v);
    default: return std::nullopt;
  }
}

}  // namespace

ChunkBounds BoundsFromStatistics(const parquet::Statistics& stats, const iceberg::Type& type) {
  ChunkBounds out;
  if (!stats.HasMinMax()) return out;
  const parquet::ColumnDescriptor* descr = stats.descr();
  if (descr == nullptr || descr->sort_order() == parquet::SortOrder::UNKNOWN) return out;
  const auto& lt_ptr = descr->logical_type();
  const parquet::LogicalType& lt = *lt_ptr;
  const TypeId id = type.id();
  switch (stats.physical_type()) {
    case parquet::Type::BOOLEAN: {
      if (id != TypeId::kBoolean) return out;
      const auto& s = static_cast<const parquet::BoolStatistics&>(stats);
      out.min = Literal(s.min());
      out.max = Literal(s.max());
      return out;
    }
    case parquet::Type::INT32: {
      const auto& s = static_cast<const parquet::Int32Statistics&>(stats);
      out.min = FromInteger(s.min(), true, lt, type);
      out.max = FromInteger(s.max(), true, lt, type);
      break;
    }
    case parquet::Type::INT64: {
      const auto& s = static_cast<const parquet::Int64Statistics&>(stats);
      out.min = FromInteger(s.min(), false, lt, type);
      out.max = FromInteger(s.max(), false, lt, type);
      break;
    }
    case parquet::Type::FLOAT: {
      const auto& s = static_cast<const parquet::FloatStatistics&>(stats);
      if (id == TypeId::kFloat) {
        out.min = Literal(s.min());
        out.max = Literal(s.max());
      } else if (id == TypeId::kDouble) {
        out.min = Literal(static_cast<double>(s.min()));
        out.max = Literal(static_cast<double>(s.max()));
      }
      break;
    }
    case parquet::Type::DOUBLE: {
      if (id != TypeId::kDouble) return out;
      const auto& s = static_cast<const parquet::DoubleStatistics&>(stats);
      out.min = Literal(s.min());
      out.max = Literal(s.max());
      break;
    }
    case parquet::Type::BYTE_ARRAY: {
      const auto& s = static_cast<const parquet::ByteArrayStatistics&>(stats);
      const std::string lo(reinterpret_cast<const char*>(s.min().ptr), s.min().len);
      const std::string hi(reinterpret_cast<const char*>(s.max().ptr), s.max().len);
      if (lt.is_decimal()) {
        if (id != TypeId::kDecimal || static_cast<const parquet::DecimalLogicalType&>(lt).scale() != type.scale()) {
          return out;
        }
        auto a = BigEndianToInt128(s.min().ptr, static_cast<int32_t>(s.min().len));
        auto b = BigEndianToInt128(s.max().ptr, static_cast<int32_t>(s.max().len));
        if (a && b) {
          out.min = Literal(iceberg::Decimal{*a});
          out.max = Literal(iceberg::Decimal{*b});
        }
      } else if (id == TypeId::kString) {
        out.min = Literal(lo);
        out.max = Literal(hi);
      } else if (id == TypeId::kBinary) {
        out.min = Literal(iceberg::Bytes{lo});
        out.max = Literal(iceberg::Bytes{hi});
      }
      break;
    }
    case parquet::Type::FIXED_LEN_BYTE_ARRAY: {
      const auto& s = static_cast<const parquet::FLBAStatistics&>(stats);
      const int32_t len = descr->type_length();
      if (lt.is_decimal()) {
        if (id != TypeId::kDecimal || static_cast<const parquet::DecimalLogicalType&>(lt).scale() != type.scale()) {
          return out;
        }
        auto a = BigEndianToInt128(s.min().ptr, len);
        auto b = BigEndianToInt128(s.max().ptr, len);
        if (a && b) {
          out.min = Literal(iceberg::Decimal{*a});
          out.max = Literal(iceberg::Decimal{*b});
        }
      } else if (lt.is_float16()) {
        return out;
      } else if ((id == TypeId::kFixed && type.length() == len) || (id == TypeId::kUuid && len == 16) ||
                 id == TypeId::kBinary) {
        out.min = Literal(iceberg::Bytes{std::string(reinterpret_cast<const char*>(s.min().ptr), len)});
        out.max = Literal(iceberg::Bytes{std::string(reinterpret_cast<const char*>(s.max().ptr), len)});
      }
      break;
    }
    default: return out;  // INT96 timestamps order differently from their values
  }
  if (!out.min || !out.max) return ChunkBounds{};
  return out;
}

}  // namespace lakesync::parquet_io::internal
