// Avro schemas as a navigable tree that keeps what Avro C drops: Iceberg's "field-id",
// "element-id", "key-id"/"value-id", logical types and their parameters. The same parse also
// compiles the schema for Avro C, which does the binary encoding and decoding.
//
// Avro C is handed a normalised copy rather than the original text, for three reasons:
//  - it rejects names that Iceberg allows (partition fields like "ts-day"; Java and pyiceberg
//    sanitise them, other writers may not), and names never affect the binary encoding;
//  - recursive schemas and arrays whose items encode to zero bytes would let a few corrupt bytes
//    drive unbounded recursion or allocation inside Avro C, so they are refused up front;
//  - attributes it does not understand (defaults, docs) cannot trip its parser.
// The copy keeps every record, union, array, map, enum and fixed in place, so a value decoded with
// it has exactly the shape of the tree below (field i of a record node is field i of the value).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/formats/avro/avro_c.h"

namespace lakesync::avro {

enum class AvroType {
  kNull, kBoolean, kInt, kLong, kFloat, kDouble, kBytes, kString, kRecord, kEnum, kArray, kMap, kUnion, kFixed
};

std::string_view AvroTypeName(AvroType type);

struct AvroNode;
using AvroNodePtr = std::shared_ptr<const AvroNode>;

struct AvroField {
  std::string name;                  // as written (possibly sanitised)
  std::optional<int32_t> field_id;   // Iceberg "field-id"
  std::string iceberg_name;          // "iceberg-field-name" when the writer sanitised `name`, else `name`
  AvroNodePtr type;
};

struct AvroNode {
  AvroType type = AvroType::kNull;
  std::string name;          // full name of a record, enum or fixed
  std::string logical_type;  // "date", "decimal", "uuid", "timestamp-micros", "map", ...
  int32_t precision = 0;     // decimal
  int32_t scale = 0;         // decimal
  int64_t size = 0;          // fixed
  std::optional<bool> adjust_to_utc;       // Iceberg's timestamp annotation
  std::optional<int32_t> element_id;       // arrays
  std::optional<int32_t> key_id;           // string-keyed maps
  std::optional<int32_t> value_id;         // string-keyed maps
  std::vector<AvroField> fields;           // records
  std::vector<AvroNodePtr> branches;       // unions
  size_t symbol_count = 0;                 // enums
  AvroNodePtr items;                       // array items, map values
  int64_t min_encoded_size = 0;            // fewest bytes one value can take

  // For a union of null and one other type, that type; otherwise this node.
  const AvroNode& NonNull() const;
  bool IsOptional() const { return type == AvroType::kUnion && &NonNull() != this; }
  // Index of a record field: by Iceberg field id when the field carries one, else by name
  // (`iceberg_name` or the written name). -1 when absent.
  int FindField(std::optional<int32_t> field_id, std::string_view name) const;
};

// A parsed writer schema: the tree, the original text and Avro C's compiled copy.
struct AvroSchema {
  AvroNodePtr root;
  std::string json;
  AvroSchemaHandle avro_c;
};

// Parses Avro schema JSON. Returns Corrupt for malformed JSON or schemas (undefined or duplicate
// names, fields without names, bad sizes), Unsupported for valid schemas we refuse to decode
// (recursive types, arrays of zero-byte items, fixed types over 1 MiB, nesting deeper than 64).
Result<AvroSchema> ParseAvroSchema(std::string_view json);

// A valid Avro name for an Iceberg field name, following Java's AvroSchemaUtil.makeCompatibleName
// and pyiceberg's make_compatible_name: a leading digit becomes "_<digit>", other characters outside
// [A-Za-z0-9_] become "_x<upper-case hex code point>". Unlike them it also escapes non-ASCII
// letters, which the Avro spec does not allow in names. Valid names are returned unchanged.
std::string MakeCompatibleAvroName(std::string_view name);

}  // namespace lakesync::avro
