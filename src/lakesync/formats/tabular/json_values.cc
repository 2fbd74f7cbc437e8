// Rendering Arrow values as JSON text in the JSON Lines contract of tabular.h.
#include "lakesync/formats/tabular/json_values_internal.h"

#include <arrow/array.h>
#include <arrow/extension_type.h>
#include <arrow/scalar.h>
#include <arrow/type.h>
#include <arrow/util/base64.h>
#include <arrow/util/decimal.h>
#include <fmt/format.h>

#include <cmath>

#include "lakesync/iceberg/model/literal.h"

namespace lakesync::tabular {
void AppendJsonString(std::string& out, std::string_view s) {
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          out += fmt::format("\\u{:04x}", c);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

namespace {

template <typename T>
void AppendFloat(std::string& out, T v) {
  if (std::isnan(v)) {
    out += "\"NaN\"";
  } else if (std::isinf(v)) {
    out += v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  } else if (v == 0 && std::signbit(v)) {
    out += "-0.0";  // "-0" would read back as the integer 0, losing the sign
  } else {
    out += fmt::format("{}", v);  // shortest representation that round-trips
  }
}

int64_t ToMicrosOrNanos(int64_t v, arrow::TimeUnit::type unit, bool& nanos) {
  switch (unit) {
    case arrow::TimeUnit::SECOND: nanos = false; return v * 1000000;
    case arrow::TimeUnit::MILLI: nanos = false; return v * 1000;
    case arrow::TimeUnit::MICRO: nanos = false; return v;
    case arrow::TimeUnit::NANO: nanos = true; return v;
  }
  return v;
}

std::string TimestampText(int64_t v, const arrow::TimestampType& type) {
  bool nanos = false;
  const int64_t value = ToMicrosOrNanos(v, type.unit(), nanos);
  std::string s = iceberg::FormatTimestamp(value, nanos, /*utc=*/false);
  if (!type.timezone().empty()) s += "Z";  // stored as UTC instants
  return s;
}

}  // namespace

Status AppendJsonValue(std::string& out, const arrow::Array& array, int64_t i) {
  if (array.IsNull(i)) {
    out += "null";
    return Status::OK();
  }
  using arrow::Type;
  switch (array.type_id()) {
    case Type::NA: out += "null"; break;
    case Type::BOOL: out += static_cast<const arrow::BooleanArray&>(array).Value(i) ? "true" : "false"; break;
    case Type::INT8: out += std::to_string(static_cast<const arrow::Int8Array&>(array).Value(i)); break;
    case Type::INT16: out += std::to_string(static_cast<const arrow::Int16Array&>(array).Value(i)); break;
    case Type::INT32: out += std::to_string(static_cast<const arrow::Int32Array&>(array).Value(i)); break;
    case Type::INT64: out += std::to_string(static_cast<const arrow::Int64Array&>(array).Value(i)); break;
    case Type::UINT8: out += std::to_string(static_cast<const arrow::UInt8Array&>(array).Value(i)); break;
    case Type::UINT16: out += std::to_string(static_cast<const arrow::UInt16Array&>(array).Value(i)); break;
    case Type::UINT32: out += std::to_string(static_cast<const arrow::UInt32Array&>(array).Value(i)); break;
    case Type::UINT64: out += std::to_string(static_cast<const arrow::UInt64Array&>(array).Value(i)); break;
    case Type::FLOAT: AppendFloat(out, static_cast<const arrow::FloatArray&>(array).Value(i)); break;
    case Type::DOUBLE: AppendFloat(out, static_cast<const arrow::DoubleArray&>(array).Value(i)); break;
    case Type::STRING: AppendJsonString(out, static_cast<const arrow::StringArray&>(array).GetView(i)); break;
    case Type::LARGE_STRING:
      AppendJsonString(out, static_cast<const arrow::LargeStringArray&>(array).GetView(i));
      break;
    case Type::STRING_VIEW:
      AppendJsonString(out, static_cast<const arrow::StringViewArray&>(array).GetView(i));
      break;
    case Type::BINARY:
      AppendJsonString(out, arrow::util::base64_encode(static_cast<const arrow::BinaryArray&>(array).GetView(i)));
      break;
    case Type::LARGE_BINARY:
      AppendJsonString(out,
                       arrow::util::base64_encode(static_cast<const arrow::LargeBinaryArray&>(array).GetView(i)));
      break;
    case Type::FIXED_SIZE_BINARY:
      AppendJsonString(out,
                       arrow::util::base64_encode(static_cast<const arrow::FixedSizeBinaryArray&>(array).GetView(i)));
      break;
    case Type::DATE32:
      AppendJsonString(out, iceberg::FormatDate(static_cast<const arrow::Date32Array&>(array).Value(i)));
      break;
    case Type::DATE64:
      AppendJsonString(out, iceberg::FormatDate(static_cast<int32_t>(
                                static_cast<const arrow::Date64Array&>(array).Value(i) / 86400000)));
      break;
    case Type::TIME64: {
      const auto& a = static_cast<const arrow::Time64Array&>(array);
      const auto unit = static_cast<const arrow::Time64Type&>(*a.type()).unit();
      const int64_t v = a.Value(i);
      AppendJsonString(out, iceberg::FormatTime(unit == arrow::TimeUnit::NANO ? v / 1000 : v));
      break;
    }
    case Type::TIME32: {
      const auto& a = static_cast<const arrow::Time32Array&>(array);
      const auto unit = static_cast<const arrow::Time32Type&>(*a.type()).unit();
      const int64_t v = a.Value(i);
      AppendJsonString(out, iceberg::FormatTime(unit == arrow::TimeUnit::SECOND ? v * 1000000 : v * 1000));
      break;
    }
    case Type::TIMESTAMP: {
      const auto& a = static_cast<const arrow::TimestampArray&>(array);
      AppendJsonString(out, TimestampText(a.Value(i), static_cast<const arrow::TimestampType&>(*a.type())));
      break;
    }
    case Type::DECIMAL128: {
      // Plain digits with exactly `scale` decimals ("0.0000000568", never "5.68E-8").
      const auto& a = static_cast<const arrow::Decimal128Array&>(array);
      const arrow::Decimal128 v(a.GetValue(i));
      const __int128 unscaled = static_cast<__int128>(static_cast<unsigned __int128>(
                                    static_cast<uint64_t>(v.high_bits())) << 64 | v.low_bits());
      const int32_t scale = static_cast<const arrow::Decimal128Type&>(*a.type()).scale();
      AppendJsonString(out, iceberg::FormatDecimal(unscaled, scale));
      break;
    }
    case Type::DECIMAL64:
    case Type::DECIMAL32:
    case Type::DECIMAL256: {
      AppendJsonString(out, array.GetScalar(i).ValueOrDie()->ToString());
      break;
    }
    case Type::STRUCT: {
      const auto& a = static_cast<const arrow::StructArray&>(array);
      out.push_back('{');
      for (int f = 0; f < a.num_fields(); ++f) {
        if (f) out.push_back(',');
        AppendJsonString(out, a.struct_type()->field(f)->name());
        out.push_back(':');
        ARROW_RETURN_NOT_OK(AppendJsonValue(out, *a.field(f), i));
      }
      out.push_back('}');
      break;
    }
    case Type::LIST:
    case Type::LARGE_LIST: {
      std::shared_ptr<arrow::Array> values;
      int64_t begin, end;
      if (array.type_id() == Type::LIST) {
        const auto& a = static_cast<const arrow::ListArray&>(array);
        values = a.values();
        begin = a.value_offset(i);
        end = begin + a.value_length(i);
      } else {
        const auto& a = static_cast<const arrow::LargeListArray&>(array);
        values = a.values();
        begin = a.value_offset(i);
        end = begin + a.value_length(i);
      }
      out.push_back('[');
      for (int64_t k = begin; k < end; ++k) {
        if (k > begin) out.push_back(',');
        ARROW_RETURN_NOT_OK(AppendJsonValue(out, *values, k));
      }
      out.push_back(']');
      break;
    }
    case Type::MAP: {
      const auto& a = static_cast<const arrow::MapArray&>(array);
      const int64_t begin = a.value_offset(i);
      const int64_t end = begin + a.value_length(i);
      const auto key_type = a.keys()->type_id();
      const bool object = key_type == Type::STRING || key_type == Type::LARGE_STRING;
      out.push_back(object ? '{' : '[');
      for (int64_t k = begin; k < end; ++k) {
        if (k > begin) out.push_back(',');
        if (object) {
          ARROW_RETURN_NOT_OK(AppendJsonValue(out, *a.keys(), k));
          out.push_back(':');
          ARROW_RETURN_NOT_OK(AppendJsonValue(out, *a.items(), k));
        } else {
          out += "{\"key\":";
          ARROW_RETURN_NOT_OK(AppendJsonValue(out, *a.keys(), k));
          out += ",\"value\":";
          ARROW_RETURN_NOT_OK(AppendJsonValue(out, *a.items(), k));
          out.push_back('}');
        }
      }
      out.push_back(object ? '}' : ']');
      break;
    }
    case Type::EXTENSION: {
      const auto& ext = static_cast<const arrow::ExtensionArray&>(array);
      if (ext.extension_type()->extension_name() == "arrow.uuid") {
        AppendJsonString(out, iceberg::FormatUuid(
                                  static_cast<const arrow::FixedSizeBinaryArray&>(*ext.storage()).GetView(i)));
        break;
      }
      return AppendJsonValue(out, *ext.storage(), i);
    }
    default:
      return Unsupported("cannot render Arrow type {} as JSON", array.type()->ToString());
  }
  return Status::OK();
}

Status AppendDisplayValue(std::string& out, const arrow::Array& array, int64_t i) {
  // Text cells: strings as they are, temporal and decimal values without JSON quotes, the rest as JSON.
  if (array.IsNull(i)) {
    out += "null";
    return Status::OK();
  }
  switch (array.type_id()) {
    case arrow::Type::STRING: out += static_cast<const arrow::StringArray&>(array).GetView(i); return Status::OK();
    case arrow::Type::LARGE_STRING:
      out += static_cast<const arrow::LargeStringArray&>(array).GetView(i);
      return Status::OK();
    case arrow::Type::STRUCT:
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::MAP: return AppendJsonValue(out, array, i);
    default: break;
  }
  std::string json;
  ARROW_RETURN_NOT_OK(AppendJsonValue(json, array, i));
  if (json.size() >= 2 && json.front() == '"') json = json.substr(1, json.size() - 2);
  out += json;
  return Status::OK();
}

}  // namespace lakesync::tabular
