#include "lakesync/iceberg/write/transform_arrow.h"

#include <arrow/array.h>
#include <arrow/array/builder_binary.h>
#include <arrow/array/builder_decimal.h>
#include <arrow/array/builder_primitive.h>
#include <arrow/array/util.h>
#include <arrow/extension_type.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <arrow/util/decimal.h>

#include "lakesync/iceberg/model/arrow_schema.h"

namespace lakesync::iceberg {
namespace {

__int128 Unscaled(const arrow::Decimal128Array& a, int64_t i) {
  const arrow::Decimal128 d(a.GetValue(i));
  return static_cast<__int128>(static_cast<unsigned __int128>(static_cast<uint64_t>(d.high_bits())) << 64 |
                               d.low_bits());
}

// Fills an int32 (or date32) array with f(i) for every non-null slot of `source`.
template <typename Builder, typename F>
Result<std::shared_ptr<arrow::Array>> MapToInt32(const arrow::Array& source, F&& f) {
  Builder b;
  ARROW_RETURN_NOT_OK(b.Reserve(source.length()));
  const bool nulls = source.null_count() > 0;
  for (int64_t i = 0; i < source.length(); ++i) {
    if (nulls && source.IsNull(i)) {
      b.UnsafeAppendNull();
    } else {
      b.UnsafeAppend(f(i));
    }
  }
  return b.Finish();
}

Result<std::shared_ptr<arrow::Array>> Bucket(int32_t n, const Type& type, const arrow::Array& a) {
  auto mod = [n](int32_t h) { return BucketOf(h, n); };
  switch (type.id()) {
    case TypeId::kInt:
    case TypeId::kDate: {
      const auto* v = a.data()->GetValues<int32_t>(1);
      return MapToInt32<arrow::Int32Builder>(a, [&](int64_t i) { return mod(BucketHashOfLong(v[i])); });
    }
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      const auto* v = a.data()->GetValues<int64_t>(1);
      const TypeId id = type.id();
      return MapToInt32<arrow::Int32Builder>(
          a, [&](int64_t i) { return mod(BucketHashOfLong(TimestampMicros(id, v[i]))); });
    }
    case TypeId::kString:
    case TypeId::kBinary: {
      const auto& b = static_cast<const arrow::BinaryArray&>(a);
      return MapToInt32<arrow::Int32Builder>(a, [&](int64_t i) { return mod(Murmur3Hash32(b.GetView(i))); });
    }
    case TypeId::kUuid:
    case TypeId::kFixed: {
      const auto& b = static_cast<const arrow::FixedSizeBinaryArray&>(a);
      return MapToInt32<arrow::Int32Builder>(a, [&](int64_t i) { return mod(Murmur3Hash32(b.GetView(i))); });
    }
    case TypeId::kDecimal: {
      const auto& d = static_cast<const arrow::Decimal128Array&>(a);
      return MapToInt32<arrow::Int32Builder>(a, [&](int64_t i) { return mod(BucketHashOfUnscaled(Unscaled(d, i))); });
    }
    default: return InvalidArgument("cannot bucket a {} column", type.ToString());
  }
}

Result<std::shared_ptr<arrow::Array>> Truncate(int32_t width, const Type& type,
                                               const std::shared_ptr<arrow::Array>& a) {
  const int64_t w = width;
  const bool nulls = a->null_count() > 0;
  switch (type.id()) {
    case TypeId::kInt: {
      const auto* v = a->data()->GetValues<int32_t>(1);
      return MapToInt32<arrow::Int32Builder>(
          *a, [&](int64_t i) { return static_cast<int32_t>(TruncateInteger<int64_t>(v[i], w)); });
    }
    case TypeId::kLong: {
      const auto* v = a->data()->GetValues<int64_t>(1);
      arrow::Int64Builder b;
      ARROW_RETURN_NOT_OK(b.Reserve(a->length()));
      for (int64_t i = 0; i < a->length(); ++i) {
        if (nulls && a->IsNull(i)) {
          b.UnsafeAppendNull();
        } else {
          b.UnsafeAppend(TruncateInteger(v[i], w));
        }
      }
      return b.Finish();
    }
    case TypeId::kDecimal: {
      const auto& d = static_cast<const arrow::Decimal128Array&>(*a);
      arrow::Decimal128Builder b(a->type());
      ARROW_RETURN_NOT_OK(b.Reserve(a->length()));
      for (int64_t i = 0; i < a->length(); ++i) {
        if (nulls && a->IsNull(i)) {
          b.UnsafeAppendNull();
          continue;
        }
        const auto u = static_cast<unsigned __int128>(TruncateInteger(Unscaled(d, i), w));
        b.UnsafeAppend(
            arrow::Decimal128(static_cast<int64_t>(static_cast<uint64_t>(u >> 64)), static_cast<uint64_t>(u)));
      }
      return b.Finish();
    }
    case TypeId::kString:
    case TypeId::kBinary: {
      const auto& s = static_cast<const arrow::BinaryArray&>(*a);
      std::unique_ptr<arrow::BinaryBuilder> b = type.id() == TypeId::kString ? std::make_unique<arrow::StringBuilder>()
                                                                             : std::make_unique<arrow::BinaryBuilder>();
      ARROW_RETURN_NOT_OK(b->Reserve(a->length()));
      for (int64_t i = 0; i < a->length(); ++i) {
        if (nulls && a->IsNull(i)) {
          ARROW_RETURN_NOT_OK(b->AppendNull());
          continue;
        }
        std::string_view v = s.GetView(i);
        const size_t n = type.id() == TypeId::kString ? Utf8PrefixBytes(v, width)
                                                      : std::min(v.size(), static_cast<size_t>(width));
        ARROW_RETURN_NOT_OK(b->Append(v.substr(0, n)));
      }
      return b->Finish();
    }
    default: return InvalidArgument("cannot truncate a {} column", type.ToString());
  }
}

Result<std::shared_ptr<arrow::Array>> TimeTransform(Transform::Kind kind, const Type& type, const arrow::Array& a) {
  if (type.id() == TypeId::kDate) {
    const auto* v = a.data()->GetValues<int32_t>(1);
    switch (kind) {
      case Transform::Kind::kYear:
        return MapToInt32<arrow::Int32Builder>(a, [&](int64_t i) { return YearsFromDays(v[i]); });
      case Transform::Kind::kMonth:
        return MapToInt32<arrow::Int32Builder>(a, [&](int64_t i) { return MonthsFromDays(v[i]); });
      case Transform::Kind::kDay: return MapToInt32<arrow::Date32Builder>(a, [&](int64_t i) { return v[i]; });
      default: return InvalidArgument("cannot take hours of a date column");
    }
  }
  const auto* v = a.data()->GetValues<int64_t>(1);
  const TypeId id = type.id();
  auto micros = [&](int64_t i) { return TimestampMicros(id, v[i]); };
  switch (kind) {
    case Transform::Kind::kYear:
      return MapToInt32<arrow::Int32Builder>(a, [&](int64_t i) { return YearsFromDays(DaysFromMicros(micros(i))); });
    case Transform::Kind::kMonth:
      return MapToInt32<arrow::Int32Builder>(a, [&](int64_t i) { return MonthsFromDays(DaysFromMicros(micros(i))); });
    case Transform::Kind::kDay:
      return MapToInt32<arrow::Date32Builder>(a, [&](int64_t i) { return DaysFromMicros(micros(i)); });
    default: return MapToInt32<arrow::Int32Builder>(a, [&](int64_t i) { return HoursFromMicros(micros(i)); });
  }
}

}  // namespace

Result<std::shared_ptr<arrow::Array>> ApplyTransform(const Transform& transform, const Type& source_type,
                                                     const std::shared_ptr<arrow::Array>& source) {
  if (!transform.CanTransform(source_type)) {
    return InvalidArgument("transform {} cannot be applied to a {} column", transform.ToString(),
                           source_type.ToString());
  }
  ARROW_ASSIGN_OR_RAISE(auto expected, ToArrowType(source_type));
  std::shared_ptr<arrow::Array> a = source;
  if (source->type_id() == arrow::Type::EXTENSION) a = static_cast<const arrow::ExtensionArray&>(*source).storage();
  if (!a->type()->Equals(*expected, /*check_metadata=*/false)) {
    return InvalidArgument("a {} column must arrive as Arrow {}, got {}", source_type.ToString(), expected->ToString(),
                           a->type()->ToString());
  }
  switch (transform.kind()) {
    case Transform::Kind::kIdentity: return a;
    case Transform::Kind::kVoid: return arrow::MakeArrayOfNull(expected, a->length());
    case Transform::Kind::kBucket: return Bucket(transform.param(), source_type, *a);
    case Transform::Kind::kTruncate: return Truncate(transform.param(), source_type, a);
    case Transform::Kind::kYear:
    case Transform::Kind::kMonth:
    case Transform::Kind::kDay:
    case Transform::Kind::kHour: return TimeTransform(transform.kind(), source_type, *a);
    default: return Unsupported("cannot apply the unknown transform '{}'", transform.ToString());
  }
}

namespace {

// Depth-first through structs only: a field under a list or map has no path.
bool FindStructPath(const std::vector<NestedField>& fields, int32_t id, std::vector<int>& path) {
  for (size_t i = 0; i < fields.size(); ++i) {
    path.push_back(static_cast<int>(i));
    if (fields[i].id == id) return true;
    if (fields[i].type->id() == TypeId::kStruct && FindStructPath(fields[i].type->fields(), id, path)) return true;
    path.pop_back();
  }
  return false;
}

}  // namespace

Result<std::vector<int>> SourceFieldPath(const Schema& schema, int32_t source_id, std::string_view what) {
  std::vector<int> path;
  if (FindStructPath(schema.fields(), source_id, path)) return path;
  if (schema.FindFieldById(source_id) == nullptr) {
    return InvalidArgument("{}: source field id {} is not in the schema", what, source_id);
  }
  return InvalidArgument("{}: source column {} is inside a list or map", what, schema.FindColumnName(source_id));
}

Result<std::shared_ptr<arrow::Array>> SourceColumn(const arrow::RecordBatch& batch, const std::vector<int>& path) {
  if (path.empty() || path[0] >= batch.num_columns()) {
    return InvalidArgument("the batch has no column at the source field's position");
  }
  std::shared_ptr<arrow::Array> column = batch.column(path[0]);
  for (size_t d = 1; d < path.size(); ++d) {
    if (column->type_id() != arrow::Type::STRUCT || path[d] >= column->type()->num_fields()) {
      return InvalidArgument("the batch's column {} is not the struct the schema says", batch.schema()->field(path[0])->name());
    }
    ARROW_ASSIGN_OR_RAISE(column, static_cast<const arrow::StructArray&>(*column).GetFlattenedField(path[d]));
  }
  return column;
}

}  // namespace lakesync::iceberg
