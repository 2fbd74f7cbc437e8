#include "lakesync/iceberg/model/types.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <regex>

#include "lakesync/common/text.h"

namespace lakesync::iceberg {
namespace {

TypePtr Singleton(TypeId id) {
  // Primitive types without parameters are shared; a function-local static per id keeps it lazy.
  static const std::vector<TypePtr> kAll = [] {
    std::vector<TypePtr> all;
    for (int i = 0; i <= static_cast<int>(TypeId::kMap); ++i) {
      all.push_back(std::make_shared<const Type>(static_cast<TypeId>(i)));
    }
    return all;
  }();
  return kAll[static_cast<size_t>(id)];
}

std::string_view PrimitiveName(TypeId id) {
  switch (id) {
    case TypeId::kBoolean: return "boolean";
    case TypeId::kInt: return "int";
    case TypeId::kLong: return "long";
    case TypeId::kFloat: return "float";
    case TypeId::kDouble: return "double";
    case TypeId::kDate: return "date";
    case TypeId::kTime: return "time";
    case TypeId::kTimestamp: return "timestamp";
    case TypeId::kTimestampTz: return "timestamptz";
    case TypeId::kTimestampNs: return "timestamp_ns";
    case TypeId::kTimestampTzNs: return "timestamptz_ns";
    case TypeId::kString: return "string";
    case TypeId::kUuid: return "uuid";
    case TypeId::kBinary: return "binary";
    case TypeId::kUnknown: return "unknown";
    case TypeId::kVariant: return "variant";
    case TypeId::kGeometry: return "geometry";
    case TypeId::kGeography: return "geography";
    default: return "";
  }
}

std::string FieldToString(const NestedField& f) {
  return fmt::format("{}: {}: {} {}", f.id, f.name, f.required ? "required" : "optional", f.type->ToString());
}

}  // namespace

TypePtr Type::Boolean() { return Singleton(TypeId::kBoolean); }
TypePtr Type::Int() { return Singleton(TypeId::kInt); }
TypePtr Type::Long() { return Singleton(TypeId::kLong); }
TypePtr Type::Float() { return Singleton(TypeId::kFloat); }
TypePtr Type::Double() { return Singleton(TypeId::kDouble); }
TypePtr Type::Date() { return Singleton(TypeId::kDate); }
TypePtr Type::Time() { return Singleton(TypeId::kTime); }
TypePtr Type::Timestamp() { return Singleton(TypeId::kTimestamp); }
TypePtr Type::TimestampTz() { return Singleton(TypeId::kTimestampTz); }
TypePtr Type::TimestampNs() { return Singleton(TypeId::kTimestampNs); }
TypePtr Type::TimestampTzNs() { return Singleton(TypeId::kTimestampTzNs); }
TypePtr Type::String() { return Singleton(TypeId::kString); }
TypePtr Type::Uuid() { return Singleton(TypeId::kUuid); }
TypePtr Type::Binary() { return Singleton(TypeId::kBinary); }
TypePtr Type::Unknown() { return Singleton(TypeId::kUnknown); }
TypePtr Type::Variant() { return Singleton(TypeId::kVariant); }

TypePtr Type::Decimal(int32_t precision, int32_t scale) {
  auto t = std::make_shared<Type>(TypeId::kDecimal);
  t->precision_ = precision;
  t->scale_ = scale;
  return t;
}

TypePtr Type::Fixed(int32_t length) {
  auto t = std::make_shared<Type>(TypeId::kFixed);
  t->length_ = length;
  return t;
}

TypePtr Type::Geo(TypeId id, std::string params) {
  auto t = std::make_shared<Type>(id);
  t->geo_params_ = std::move(params);
  return t;
}

TypePtr Type::Struct(std::vector<NestedField> fields) {
  auto t = std::make_shared<Type>(TypeId::kStruct);
  t->fields_ = std::move(fields);
  return t;
}

TypePtr Type::List(NestedField element) {
  auto t = std::make_shared<Type>(TypeId::kList);
  element.name = "element";
  t->fields_.push_back(std::move(element));
  return t;
}

TypePtr Type::Map(NestedField key, NestedField value) {
  auto t = std::make_shared<Type>(TypeId::kMap);
  key.name = "key";
  key.required = true;  // map keys are always required
  value.name = "value";
  t->fields_.push_back(std::move(key));
  t->fields_.push_back(std::move(value));
  return t;
}

std::string Type::ToString() const {
  switch (id_) {
    case TypeId::kDecimal: return fmt::format("decimal({}, {})", precision_, scale_);
    case TypeId::kFixed: return fmt::format("fixed[{}]", length_);
    case TypeId::kGeometry:
    case TypeId::kGeography:
      return geo_params_.empty() ? std::string(PrimitiveName(id_))
                                 : fmt::format("{}({})", PrimitiveName(id_), geo_params_);
    case TypeId::kStruct: {
      std::string out = "struct<";
      for (size_t i = 0; i < fields_.size(); ++i) {
        if (i) out += ", ";
        out += FieldToString(fields_[i]);
      }
      return out + ">";
    }
    case TypeId::kList: return "list<" + FieldToString(element()) + ">";
    case TypeId::kMap: return "map<" + FieldToString(key()) + ", " + FieldToString(value()) + ">";
    default: return std::string(PrimitiveName(id_));
  }
}

bool Type::Equals(const Type& other) const {
  if (id_ != other.id_ || precision_ != other.precision_ || scale_ != other.scale_ ||
      length_ != other.length_ || geo_params_ != other.geo_params_ || fields_.size() != other.fields_.size()) {
    return false;
  }
  for (size_t i = 0; i < fields_.size(); ++i) {
    const auto& a = fields_[i];
    const auto& b = other.fields_[i];
    if (a.id != b.id || a.name != b.name || a.required != b.required || !a.type->Equals(*b.type)) return false;
  }
  return true;
}

Result<TypePtr> Type::ParsePrimitive(std::string_view name_view) {
  const std::string name(name_view);
  // Java lower-cases a type name before matching it (Types.fromPrimitiveString), so "LONG" and
  // "Decimal(10, 2)" are accepted; geo parameters (CRS names) keep their case.
  const std::string lower = AsciiLower(name);
  for (int i = 0; i < static_cast<int>(TypeId::kStruct); ++i) {
    const auto id = static_cast<TypeId>(i);
    if (id == TypeId::kDecimal || id == TypeId::kFixed) continue;
    if (PrimitiveName(id) == lower) return Singleton(id);
  }
  static const std::regex kDecimal(R"(^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$)");
  static const std::regex kFixed(R"(^fixed\[\s*(\d+)\s*\]$)");
  static const std::regex kGeo(R"(^(geometry|geography)\s*\(\s*(.*?)\s*\)$)", std::regex::icase);
  // Digits that do not fit an int are reported as out of range rather than thrown by std::stoi.
  auto to_int = [](const std::string& digits) {
    int v = -1;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    return ec == std::errc() && ptr == digits.data() + digits.size() ? v : -1;
  };
  std::smatch m;
  if (std::regex_match(lower, m, kDecimal)) {
    const int p = to_int(m[1]);
    const int s = to_int(m[2]);
    if (p < 1 || p > 38 || s < 0 || s > p) {
      return InvalidArgument("invalid decimal type '{}': precision must be 1..38 and scale <= precision", name);
    }
    return Decimal(p, s);
  }
  if (std::regex_match(lower, m, kFixed)) {
    const int len = to_int(m[1]);
    if (len < 1) return InvalidArgument("invalid fixed type '{}': length must be a positive int", name);
    return Fixed(len);
  }
  if (std::regex_match(name, m, kGeo)) {
    const bool geometry = lower.rfind("geometry", 0) == 0;
    return Geo(geometry ? TypeId::kGeometry : TypeId::kGeography, m[2]);
  }
  return Unsupported("unknown Iceberg type '{}'", name);
}

bool IsValidIdentifierType(const Type& type) {
  switch (type.id()) {
    case TypeId::kFloat:
    case TypeId::kDouble:
    case TypeId::kUnknown:
    case TypeId::kVariant:
    case TypeId::kGeometry:
    case TypeId::kGeography:
      return false;
    default:
      return type.is_primitive();
  }
}

}  // namespace lakesync::iceberg
