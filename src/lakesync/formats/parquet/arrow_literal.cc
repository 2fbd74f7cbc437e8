#include "lakesync/formats/parquet/arrow_literal.h"

#include <arrow/array.h>
#include <arrow/extension_type.h>
#include <arrow/scalar.h>
#include <arrow/type.h>
#include <arrow/util/decimal.h>

#include "lakesync/common/arithmetic.h"
#include "lakesync/iceberg/model/arrow_schema.h"

namespace lakesync::parquet_io {
namespace {

using iceberg::Literal;
using iceberg::TypeId;

bool IsNanosType(TypeId id) { return id == TypeId::kTimestampNs || id == TypeId::kTimestampTzNs; }

// Converts a count of `unit` to micros (or nanos when `nanos`), flooring when precision is lost.
int64_t ConvertTime(int64_t v, arrow::TimeUnit::type unit, bool nanos) {
  int64_t per_second = 1;
  switch (unit) {
    case arrow::TimeUnit::SECOND: per_second = 1; break;
    case arrow::TimeUnit::MILLI: per_second = 1000; break;
    case arrow::TimeUnit::MICRO: per_second = 1000000; break;
    case arrow::TimeUnit::NANO: per_second = 1000000000; break;
  }
  const int64_t target = nanos ? 1000000000 : 1000000;
  if (per_second == target) return v;
  if (per_second < target) return v * (target / per_second);
  return FloorDiv(v, per_second / target);
}

Result<Literal> IntegerLiteral(int64_t v, const iceberg::Type& type) {
  switch (type.id()) {
    case TypeId::kInt:
    case TypeId::kDate:
      if (v < INT32_MIN || v > INT32_MAX) return InvalidArgument("value {} does not fit {}", v, type.ToString());
      return Literal(static_cast<int32_t>(v));
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: return Literal(v);
    default: return InvalidArgument("an integer Arrow value cannot be read as {}", type.ToString());
  }
}

}  // namespace

Result<Literal> LiteralFromArray(const arrow::Array& in, int64_t index, const iceberg::Type& type) {
  if (index < 0 || index >= in.length()) {
    return InvalidArgument("index {} is outside an array of length {}", index, in.length());
  }
  if (in.IsNull(index)) return Literal::Null();
  const arrow::Array* array = &in;
  std::shared_ptr<arrow::Array> storage;
  if (in.type_id() == arrow::Type::EXTENSION) {
    storage = static_cast<const arrow::ExtensionArray&>(in).storage();
    array = storage.get();
  }
  const TypeId want = type.id();
  auto mismatch = [&]() {
    return InvalidArgument("an Arrow {} value cannot be read as Iceberg {}", array->type()->ToString(),
                           type.ToString());
  };
  switch (array->type_id()) {
    case arrow::Type::BOOL:
      if (want != TypeId::kBoolean) return mismatch();
      return Literal(static_cast<const arrow::BooleanArray&>(*array).Value(index));
    case arrow::Type::INT8: return IntegerLiteral(static_cast<const arrow::Int8Array&>(*array).Value(index), type);
    case arrow::Type::INT16: return IntegerLiteral(static_cast<const arrow::Int16Array&>(*array).Value(index), type);
    case arrow::Type::INT32: return IntegerLiteral(static_cast<const arrow::Int32Array&>(*array).Value(index), type);
    case arrow::Type::INT64: return IntegerLiteral(static_cast<const arrow::Int64Array&>(*array).Value(index), type);
    case arrow::Type::UINT8: return IntegerLiteral(static_cast<const arrow::UInt8Array&>(*array).Value(index), type);
    case arrow::Type::UINT16: return IntegerLiteral(static_cast<const arrow::UInt16Array&>(*array).Value(index), type);
    case arrow::Type::UINT32: return IntegerLiteral(static_cast<const arrow::UInt32Array&>(*array).Value(index), type);
    case arrow::Type::DATE32:
      if (want != TypeId::kDate) return mismatch();
      return Literal(static_cast<const arrow::Date32Array&>(*array).Value(index));
    case arrow::Type::TIME32: {
      if (want != TypeId::kTime) return mismatch();
      const auto& t = static_cast<const arrow::Time32Type&>(*array->type());
      return Literal(ConvertTime(static_cast<const arrow::Time32Array&>(*array).Value(index), t.unit(), false));
    }
    case arrow::Type::TIME64: {
      if (want != TypeId::kTime) return mismatch();
      const auto& t = static_cast<const arrow::Time64Type&>(*array->type());
      return Literal(ConvertTime(static_cast<const arrow::Time64Array&>(*array).Value(index), t.unit(), false));
    }
    case arrow::Type::TIMESTAMP: {
      if (want != TypeId::kTimestamp && want != TypeId::kTimestampTz && !IsNanosType(want)) return mismatch();
      const auto& t = static_cast<const arrow::TimestampType&>(*array->type());
      return Literal(
          ConvertTime(static_cast<const arrow::TimestampArray&>(*array).Value(index), t.unit(), IsNanosType(want)));
    }
    case arrow::Type::FLOAT: {
      const float v = static_cast<const arrow::FloatArray&>(*array).Value(index);
      if (want == TypeId::kFloat) return Literal(v);
      if (want == TypeId::kDouble) return Literal(static_cast<double>(v));
      return mismatch();
    }
    case arrow::Type::DOUBLE:
      if (want != TypeId::kDouble) return mismatch();
      return Literal(static_cast<const arrow::DoubleArray&>(*array).Value(index));
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::STRING_VIEW:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::BINARY_VIEW: {
      std::string value;
      if (array->type_id() == arrow::Type::STRING || array->type_id() == arrow::Type::BINARY) {
        value = std::string(static_cast<const arrow::BinaryArray&>(*array).GetView(index));
      } else if (array->type_id() == arrow::Type::LARGE_STRING || array->type_id() == arrow::Type::LARGE_BINARY) {
        value = std::string(static_cast<const arrow::LargeBinaryArray&>(*array).GetView(index));
      } else {
        value = std::string(static_cast<const arrow::BinaryViewArray&>(*array).GetView(index));
      }
      if (want == TypeId::kString) return Literal(std::move(value));
      if (want == TypeId::kBinary) return Literal(iceberg::Bytes{std::move(value)});
      if ((want == TypeId::kFixed && static_cast<int32_t>(value.size()) == type.length()) ||
          (want == TypeId::kUuid && value.size() == 16)) {
        return Literal(iceberg::Bytes{std::move(value)});
      }
      return mismatch();
    }
    case arrow::Type::FIXED_SIZE_BINARY: {
      const auto& a = static_cast<const arrow::FixedSizeBinaryArray&>(*array);
      std::string value(a.GetView(index));
      if ((want == TypeId::kFixed && static_cast<int32_t>(value.size()) == type.length()) ||
          (want == TypeId::kUuid && value.size() == 16) || want == TypeId::kBinary) {
        return Literal(iceberg::Bytes{std::move(value)});
      }
      return mismatch();
    }
    case arrow::Type::DECIMAL32:
    case arrow::Type::DECIMAL64:
    case arrow::Type::DECIMAL128: {
      if (want != TypeId::kDecimal) return mismatch();
      const auto& dt = static_cast<const arrow::DecimalType&>(*array->type());
      if (dt.scale() != type.scale()) {
        return InvalidArgument("a decimal of scale {} cannot be read as {}", dt.scale(), type.ToString());
      }
      __int128 unscaled = 0;
      if (array->type_id() == arrow::Type::DECIMAL128) {
        const arrow::Decimal128 d(static_cast<const arrow::Decimal128Array&>(*array).GetValue(index));
        unscaled = static_cast<__int128>(static_cast<unsigned __int128>(static_cast<uint64_t>(d.high_bits())) << 64 |
                                         d.low_bits());
      } else if (array->type_id() == arrow::Type::DECIMAL64) {
        const arrow::Decimal64 d(static_cast<const arrow::Decimal64Array&>(*array).GetValue(index));
        unscaled = d.value();
      } else {
        const arrow::Decimal32 d(static_cast<const arrow::Decimal32Array&>(*array).GetValue(index));
        unscaled = d.value();
      }
      return Literal(iceberg::Decimal{unscaled});
    }
    default: return mismatch();
  }
}

Result<std::shared_ptr<arrow::Scalar>> LiteralToScalar(const Literal& literal, const iceberg::Type& type) {
  ARROW_ASSIGN_OR_RAISE(auto arrow_type, iceberg::ToArrowType(type));
  if (literal.is_null()) return arrow::MakeNullScalar(arrow_type);
  if (!iceberg::LiteralMatchesType(literal, type)) {
    return InvalidArgument("value {} does not match type {}", literal.ToString(type), type.ToString());
  }
  switch (type.id()) {
    case TypeId::kBoolean: return std::make_shared<arrow::BooleanScalar>(literal.get<bool>());
    case TypeId::kInt: return std::make_shared<arrow::Int32Scalar>(literal.get<int32_t>());
    case TypeId::kLong: return std::make_shared<arrow::Int64Scalar>(literal.get<int64_t>());
    case TypeId::kFloat: return std::make_shared<arrow::FloatScalar>(literal.get<float>());
    case TypeId::kDouble: return std::make_shared<arrow::DoubleScalar>(literal.get<double>());
    case TypeId::kDate: return std::make_shared<arrow::Date32Scalar>(literal.get<int32_t>());
    case TypeId::kTime: return std::make_shared<arrow::Time64Scalar>(literal.get<int64_t>(), arrow_type);
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: return std::make_shared<arrow::TimestampScalar>(literal.get<int64_t>(), arrow_type);
    case TypeId::kString: return std::make_shared<arrow::StringScalar>(literal.get<std::string>());
    case TypeId::kBinary: return std::make_shared<arrow::BinaryScalar>(literal.get<iceberg::Bytes>().data);
    case TypeId::kUuid:
    case TypeId::kFixed: {
      const auto& bytes = literal.get<iceberg::Bytes>().data;
      const int32_t width = type.id() == TypeId::kUuid ? 16 : type.length();
      if (static_cast<int32_t>(bytes.size()) != width) {
        return InvalidArgument("a {} value must be {} bytes, got {}", type.ToString(), width, bytes.size());
      }
      return std::make_shared<arrow::FixedSizeBinaryScalar>(arrow::Buffer::FromString(bytes), arrow_type);
    }
    case TypeId::kDecimal: {
      const auto u = static_cast<unsigned __int128>(literal.get<iceberg::Decimal>().unscaled);
      const arrow::Decimal128 d(static_cast<int64_t>(static_cast<uint64_t>(u >> 64)), static_cast<uint64_t>(u));
      return std::make_shared<arrow::Decimal128Scalar>(d, arrow_type);
    }
    default: return Unsupported("no Arrow scalar for Iceberg type {}", type.ToString());
  }
}

}  // namespace lakesync::parquet_io
