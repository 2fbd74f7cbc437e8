// Iceberg's type system (format/spec.md "Schemas and Data Types"), v2 and v3.
// Types are immutable values shared through TypePtr; nested types own their child fields.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lakesync/common/status.h"

namespace lakesync::iceberg {

enum class TypeId {
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kDecimal,
  kDate,
  kTime,
  kTimestamp,
  kTimestampTz,
  kTimestampNs,    // v3
  kTimestampTzNs,  // v3
  kString,
  kUuid,
  kFixed,
  kBinary,
  kUnknown,    // v3: a column whose type is not known yet; always null
  kVariant,    // v3
  kGeometry,   // v3
  kGeography,  // v3
  kStruct,
  kList,
  kMap,
};

class Type;
using TypePtr = std::shared_ptr<const Type>;

// A field of a struct, the element of a list or the key/value of a map. `id` is the Iceberg field id.
struct NestedField {
  int32_t id = 0;
  std::string name;
  bool required = false;
  TypePtr type;
  std::string doc;
  // v3 default values, kept as their JSON single-value form (spec Appendix C).
  std::optional<nlohmann::json> initial_default;
  std::optional<nlohmann::json> write_default;
};

class Type {
 public:
  TypeId id() const { return id_; }
  bool is_primitive() const { return id_ < TypeId::kStruct; }
  bool is_nested() const { return !is_primitive(); }

  // decimal(P, S)
  int32_t precision() const { return precision_; }
  int32_t scale() const { return scale_; }
  // fixed[L]
  int32_t length() const { return length_; }

  // struct: its fields; list: {element}; map: {key, value}.
  const std::vector<NestedField>& fields() const { return fields_; }
  const NestedField& element() const { return fields_.at(0); }
  const NestedField& key() const { return fields_.at(0); }
  const NestedField& value() const { return fields_.at(1); }

  // Iceberg's name for the type: "long", "decimal(9, 2)", "fixed[16]", "struct<1: id: required long>"…
  std::string ToString() const;
  bool Equals(const Type& other) const;

  static TypePtr Boolean();
  static TypePtr Int();
  static TypePtr Long();
  static TypePtr Float();
  static TypePtr Double();
  static TypePtr Date();
  static TypePtr Time();
  static TypePtr Timestamp();
  static TypePtr TimestampTz();
  static TypePtr TimestampNs();
  static TypePtr TimestampTzNs();
  static TypePtr String();
  static TypePtr Uuid();
  static TypePtr Binary();
  static TypePtr Unknown();
  static TypePtr Variant();
  static TypePtr Decimal(int32_t precision, int32_t scale);
  static TypePtr Fixed(int32_t length);
  // Geometry/geography keep their parameters verbatim ("geometry(srid:4326)").
  static TypePtr Geo(TypeId id, std::string params);
  static TypePtr Struct(std::vector<NestedField> fields);
  static TypePtr List(NestedField element);
  static TypePtr Map(NestedField key, NestedField value);

  // Parses a primitive type name as written in metadata JSON ("decimal(10,2)", "fixed[4]", ...).
  static Result<TypePtr> ParsePrimitive(std::string_view name);

  const std::string& geo_params() const { return geo_params_; }

  explicit Type(TypeId id) : id_(id) {}

 private:
  TypeId id_;
  int32_t precision_ = 0;
  int32_t scale_ = 0;
  int32_t length_ = 0;
  std::string geo_params_;
  std::vector<NestedField> fields_;
};

// True for types whose values are ordered in metrics and can be identifier (key) fields.
bool IsValidIdentifierType(const Type& type);

}  // namespace lakesync::iceberg
