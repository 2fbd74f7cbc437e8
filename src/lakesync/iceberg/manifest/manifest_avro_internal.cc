#include "lakesync/iceberg/manifest/manifest_avro_internal.h"

#include "lakesync/formats/avro/avro_value.h"

namespace lakesync::iceberg::internal {
namespace {

// Keys keep their insertion order so schemas read like Java's ({"type", "name", "fields"}).
using json = nlohmann::ordered_json;

json Optional(json type) { return json::array({"null", std::move(type)}); }

json Field(std::string_view name, json type, int32_t id) {
  return json{{"name", name}, {"type", std::move(type)}, {"field-id", id}};
}

json OptionalField(std::string_view name, json type, int32_t id) {
  return json{{"name", name}, {"type", Optional(std::move(type))}, {"default", nullptr}, {"field-id", id}};
}

// An int-keyed map: Avro maps only take string keys, so the spec stores these as arrays of
// key/value records with the "map" logical type (Appendix A).
json IntKeyedMap(int32_t key_id, int32_t value_id, std::string_view value_type) {
  json record = {{"type", "record"},
                 {"name", fmt::format("k{}_v{}", key_id, value_id)},
                 {"fields", json::array({Field("key", "int", key_id), Field("value", value_type, value_id)})}};
  return json{{"type", "array"}, {"logicalType", "map"}, {"items", std::move(record)}};
}

json Array(std::string_view item_type, int32_t element_id) {
  return json{{"type", "array"}, {"items", item_type}, {"element-id", element_id}};
}

Status WrongLiteral(const Type& type) {
  return InvalidArgument("partition value does not match its type {}", type.ToString());
}

Status Mismatch(const Type& expected, const avro_value_t& value) {
  return Corrupt("expected a {} value, found Avro {}", expected.ToString(), avro::AvroValueTypeName(value));
}

// Two's-complement big-endian bytes of `v` in exactly `size` bytes.
Result<std::string> DecimalToFixed(__int128 v, int32_t size) {
  if (size <= 0 || size > 16) return InvalidArgument("decimal fixed size {} is out of range", size);
  if (size < 16) {
    const __int128 limit = static_cast<__int128>(1) << (8 * size - 1);
    if (v >= limit || v < -limit) return InvalidArgument("decimal value does not fit in {} bytes", size);
  }
  // The low `size` bytes of the 128-bit two's complement (DecimalRequiredBytes never exceeds 16).
  std::string out(static_cast<size_t>(size), '\0');
  auto u = static_cast<unsigned __int128>(v);
  for (int32_t i = size - 1; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>(static_cast<uint8_t>(u & 0xFF));
    u >>= 8;
  }
  return out;
}

Result<__int128> DecimalFromBytes(std::string_view bytes) {
  if (bytes.empty()) return Corrupt("a decimal value has no bytes");
  // Bytes beyond 16 must only repeat the sign.
  const bool negative = static_cast<unsigned char>(bytes[0]) & 0x80;
  while (bytes.size() > 16) {
    const auto lead = static_cast<unsigned char>(bytes[0]);
    if (lead != (negative ? 0xFF : 0x00)) {
      return Corrupt("a decimal value of {} bytes does not fit 128 bits", bytes.size());
    }
    bytes.remove_prefix(1);
  }
  __int128 v = negative ? -1 : 0;
  for (unsigned char c : bytes) v = static_cast<__int128>((static_cast<unsigned __int128>(v) << 8) | c);
  return v;
}

}  // namespace

int32_t DecimalRequiredBytes(int32_t precision) {
  // 10^precision must be at most 2^(8 * bytes - 1).
  unsigned __int128 power = 1;
  for (int32_t i = 0; i < precision && i < 38; ++i) power *= 10;
  for (int32_t bytes = 1; bytes < 16; ++bytes) {
    if (power <= (static_cast<unsigned __int128>(1) << (8 * bytes - 1))) return bytes;
  }
  return 16;
}

Result<json> AvroTypeFor(const Type& type, std::set<std::string>* defined) {
  auto named = [&](std::string name, json definition) -> json {
    if (!defined->insert(name).second) return name;
    definition["name"] = std::move(name);
    return definition;
  };
  switch (type.id()) {
    case TypeId::kBoolean: return json("boolean");
    case TypeId::kInt: return json("int");
    case TypeId::kLong: return json("long");
    case TypeId::kFloat: return json("float");
    case TypeId::kDouble: return json("double");
    case TypeId::kString: return json("string");
    case TypeId::kBinary:
    case TypeId::kGeometry:
    case TypeId::kGeography: return json("bytes");
    case TypeId::kUnknown: return json("null");
    case TypeId::kDate: return json{{"type", "int"}, {"logicalType", "date"}};
    case TypeId::kTime: return json{{"type", "long"}, {"logicalType", "time-micros"}};
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      return json{{"type", "long"},
                  {"logicalType", "timestamp-micros"},
                  {"adjust-to-utc", type.id() == TypeId::kTimestampTz}};
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      return json{{"type", "long"},
                  {"logicalType", "timestamp-nanos"},
                  {"adjust-to-utc", type.id() == TypeId::kTimestampTzNs}};
    case TypeId::kUuid: return named("uuid_fixed", json{{"type", "fixed"}, {"size", 16}, {"logicalType", "uuid"}});
    case TypeId::kFixed:
      return named(fmt::format("fixed_{}", type.length()), json{{"type", "fixed"}, {"size", type.length()}});
    case TypeId::kDecimal:
      return named(fmt::format("decimal_{}_{}", type.precision(), type.scale()),
                   json{{"type", "fixed"},
                        {"size", DecimalRequiredBytes(type.precision())},
                        {"logicalType", "decimal"},
                        {"precision", type.precision()},
                        {"scale", type.scale()}});
    default: return InvalidArgument("type {} cannot be a partition value", type.ToString());
  }
}

Result<std::string> ManifestEntrySchemaJson(int format_version, const Type& partition_type) {
  if (format_version != 2 && format_version != 3) {
    return InvalidArgument("manifests are written for format version 2 or 3, not {}", format_version);
  }
  if (partition_type.id() != TypeId::kStruct) return InvalidArgument("the partition type must be a struct");
  std::set<std::string> defined;
  json partition_fields = json::array();
  for (const auto& f : partition_type.fields()) {
    ARROW_ASSIGN_OR_RAISE(json type, AvroTypeFor(*f.type, &defined));
    json field = f.type->id() == TypeId::kUnknown
                     ? json{{"name", ""}, {"type", "null"}, {"default", nullptr}, {"field-id", f.id}}
                     : OptionalField("", std::move(type), f.id);
    const std::string name = avro::MakeCompatibleAvroName(f.name);
    field["name"] = name;
    if (name != f.name) field["iceberg-field-name"] = f.name;
    partition_fields.push_back(std::move(field));
  }
  json data_file = json::array({
      Field("content", "int", entry_field::kContent),
      Field("file_path", "string", entry_field::kFilePath),
      Field("file_format", "string", entry_field::kFileFormat),
      Field("partition", json{{"type", "record"}, {"name", "r102"}, {"fields", std::move(partition_fields)}},
            entry_field::kPartition),
      Field("record_count", "long", entry_field::kRecordCount),
      Field("file_size_in_bytes", "long", entry_field::kFileSize),
      OptionalField("column_sizes", IntKeyedMap(117, 118, "long"), entry_field::kColumnSizes),
      OptionalField("value_counts", IntKeyedMap(119, 120, "long"), entry_field::kValueCounts),
      OptionalField("null_value_counts", IntKeyedMap(121, 122, "long"), entry_field::kNullValueCounts),
      OptionalField("nan_value_counts", IntKeyedMap(138, 139, "long"), entry_field::kNanValueCounts),
      OptionalField("lower_bounds", IntKeyedMap(126, 127, "bytes"), entry_field::kLowerBounds),
      OptionalField("upper_bounds", IntKeyedMap(129, 130, "bytes"), entry_field::kUpperBounds),
      OptionalField("key_metadata", "bytes", entry_field::kKeyMetadata),
      OptionalField("split_offsets", Array("long", 133), entry_field::kSplitOffsets),
      OptionalField("equality_ids", Array("int", 136), entry_field::kEqualityIds),
      OptionalField("sort_order_id", "int", entry_field::kSortOrderId),
  });
  if (format_version >= 3) data_file.push_back(OptionalField("first_row_id", "long", entry_field::kFirstRowId));
  data_file.push_back(OptionalField("referenced_data_file", "string", entry_field::kReferencedDataFile));
  if (format_version >= 3) {
    data_file.push_back(OptionalField("content_offset", "long", entry_field::kContentOffset));
    data_file.push_back(OptionalField("content_size_in_bytes", "long", entry_field::kContentSize));
  }
  json data_file_record = {{"type", "record"}, {"name", "r2"}, {"fields", std::move(data_file)}};
  json entry = {{"type", "record"},
                {"name", "manifest_entry"},
                {"fields", json::array({
                               Field("status", "int", entry_field::kStatus),
                               OptionalField("snapshot_id", "long", entry_field::kSnapshotId),
                               OptionalField("sequence_number", "long", entry_field::kSequenceNumber),
                               OptionalField("file_sequence_number", "long", entry_field::kFileSequenceNumber),
                               Field("data_file", std::move(data_file_record), entry_field::kDataFile),
                           })}};
  return entry.dump();
}

Result<std::string> ManifestListSchemaJson(int format_version) {
  if (format_version != 2 && format_version != 3) {
    return InvalidArgument("manifest lists are written for format version 2 or 3, not {}", format_version);
  }
  json summary = {{"type", "record"},
                  {"name", "r508"},
                  {"fields", json::array({
                                 Field("contains_null", "boolean", list_field::kContainsNull),
                                 OptionalField("contains_nan", "boolean", list_field::kContainsNan),
                                 OptionalField("lower_bound", "bytes", list_field::kLowerBound),
                                 OptionalField("upper_bound", "bytes", list_field::kUpperBound),
                             })}};
  json fields = json::array({
      Field("manifest_path", "string", list_field::kManifestPath),
      Field("manifest_length", "long", list_field::kManifestLength),
      Field("partition_spec_id", "int", list_field::kPartitionSpecId),
      Field("content", "int", list_field::kContent),
      Field("sequence_number", "long", list_field::kSequenceNumber),
      Field("min_sequence_number", "long", list_field::kMinSequenceNumber),
      Field("added_snapshot_id", "long", list_field::kAddedSnapshotId),
      Field("added_files_count", "int", list_field::kAddedFilesCount),
      Field("existing_files_count", "int", list_field::kExistingFilesCount),
      Field("deleted_files_count", "int", list_field::kDeletedFilesCount),
      Field("added_rows_count", "long", list_field::kAddedRowsCount),
      Field("existing_rows_count", "long", list_field::kExistingRowsCount),
      Field("deleted_rows_count", "long", list_field::kDeletedRowsCount),
      OptionalField("partitions",
                    json{{"type", "array"}, {"items", std::move(summary)}, {"element-id", list_field::kFieldSummary}},
                    list_field::kPartitions),
      OptionalField("key_metadata", "bytes", list_field::kKeyMetadata),
  });
  if (format_version >= 3) fields.push_back(OptionalField("first_row_id", "long", list_field::kFirstRowId));
  return json{{"type", "record"}, {"name", "manifest_file"}, {"fields", std::move(fields)}}.dump();
}

Status WriteLiteral(avro_value_t* value, const Type& type, const Literal& literal) {
  if (!LiteralMatchesType(literal, type)) return WrongLiteral(type);
  switch (type.id()) {
    case TypeId::kBoolean: return avro::WriteBool(value, literal.get<bool>());
    case TypeId::kInt:
    case TypeId::kDate: return avro::WriteInt(value, literal.get<int32_t>());
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: return avro::WriteLong(value, literal.get<int64_t>());
    case TypeId::kFloat: return avro::WriteFloat(value, literal.get<float>());
    case TypeId::kDouble: return avro::WriteDouble(value, literal.get<double>());
    case TypeId::kString: return avro::WriteString(value, literal.get<std::string>());
    case TypeId::kBinary: return avro::WriteBytes(value, literal.get<Bytes>().data);
    case TypeId::kUuid:
    case TypeId::kFixed: return avro::WriteFixed(value, literal.get<Bytes>().data);
    case TypeId::kDecimal: {
      ARROW_ASSIGN_OR_RAISE(std::string fixed,
                            DecimalToFixed(literal.get<Decimal>().unscaled, DecimalRequiredBytes(type.precision())));
      return avro::WriteFixed(value, fixed);
    }
    default: return InvalidArgument("type {} cannot be a partition value", type.ToString());
  }
}

Result<Literal> ReadLiteral(const avro_value_t& value, const Type& expected) {
  const avro_type_t avro_type = avro_value_get_type(&value);
  switch (expected.id()) {
    case TypeId::kBoolean: {
      ARROW_ASSIGN_OR_RAISE(bool v, avro::ReadBool(value));
      return Literal(v);
    }
    case TypeId::kInt:
    case TypeId::kDate: {
      ARROW_ASSIGN_OR_RAISE(int32_t v, avro::ReadInt(value));
      return Literal(v);
    }
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      ARROW_ASSIGN_OR_RAISE(int64_t v, avro::ReadLong(value));
      return Literal(v);
    }
    case TypeId::kFloat: {
      ARROW_ASSIGN_OR_RAISE(float v, avro::ReadFloat(value));
      return Literal(v);
    }
    case TypeId::kDouble: {
      ARROW_ASSIGN_OR_RAISE(double v, avro::ReadDouble(value));
      return Literal(v);
    }
    case TypeId::kString: {
      if (avro_type != AVRO_STRING && avro_type != AVRO_BYTES) return Mismatch(expected, value);
      ARROW_ASSIGN_OR_RAISE(std::string v, avro::ReadString(value));
      return Literal(std::move(v));
    }
    case TypeId::kBinary:
    case TypeId::kFixed:
    case TypeId::kGeometry:
    case TypeId::kGeography: {
      if (avro_type != AVRO_BYTES && avro_type != AVRO_FIXED) return Mismatch(expected, value);
      ARROW_ASSIGN_OR_RAISE(std::string v, avro::ReadBytes(value));
      if (expected.id() == TypeId::kFixed && static_cast<int32_t>(v.size()) != expected.length()) {
        return Corrupt("a {} value has {} bytes", expected.ToString(), v.size());
      }
      return Literal(Bytes{std::move(v)});
    }
    case TypeId::kUuid: {
      if (avro_type == AVRO_STRING) {
        ARROW_ASSIGN_OR_RAISE(std::string text, avro::ReadString(value));
        ARROW_ASSIGN_OR_RAISE(std::string raw, ParseUuid(text));
        return Literal(Bytes{std::move(raw)});
      }
      if (avro_type != AVRO_BYTES && avro_type != AVRO_FIXED) return Mismatch(expected, value);
      ARROW_ASSIGN_OR_RAISE(std::string v, avro::ReadBytes(value));
      if (v.size() != 16) return Corrupt("a uuid value has {} bytes", v.size());
      return Literal(Bytes{std::move(v)});
    }
    case TypeId::kDecimal: {
      if (avro_type == AVRO_INT32 || avro_type == AVRO_INT64) {  // decimals promoted from small ints
        ARROW_ASSIGN_OR_RAISE(int64_t v, avro::ReadLong(value));
        return Literal(Decimal{v});
      }
      if (avro_type != AVRO_BYTES && avro_type != AVRO_FIXED) return Mismatch(expected, value);
      ARROW_ASSIGN_OR_RAISE(std::string v, avro::ReadBytes(value));
      ARROW_ASSIGN_OR_RAISE(__int128 unscaled, DecimalFromBytes(v));
      return Literal(Decimal{unscaled});
    }
    case TypeId::kUnknown:
      return Corrupt("a value of unknown type must be null, found Avro {}", avro::AvroValueTypeName(value));
    default: return Unsupported("partition values of type {} are not supported", expected.ToString());
  }
}

TypePtr InferIcebergType(const avro::AvroNode& node) {
  const avro::AvroNode& n = node.NonNull();
  const std::string& logical = n.logical_type;
  switch (n.type) {
    case avro::AvroType::kBoolean: return Type::Boolean();
    case avro::AvroType::kInt: return logical == "date" ? Type::Date() : Type::Int();
    case avro::AvroType::kLong: {
      const bool utc = n.adjust_to_utc.value_or(false);
      if (logical == "time-micros") return Type::Time();
      if (logical == "timestamp-micros") return utc ? Type::TimestampTz() : Type::Timestamp();
      if (logical == "timestamp-nanos") return utc ? Type::TimestampTzNs() : Type::TimestampNs();
      return Type::Long();
    }
    case avro::AvroType::kFloat: return Type::Float();
    case avro::AvroType::kDouble: return Type::Double();
    case avro::AvroType::kString: return logical == "uuid" ? Type::Uuid() : Type::String();
    case avro::AvroType::kBytes: return logical == "decimal" ? Type::Decimal(n.precision, n.scale) : Type::Binary();
    case avro::AvroType::kFixed:
      if (logical == "decimal") return Type::Decimal(n.precision, n.scale);
      if (logical == "uuid" && n.size == 16) return Type::Uuid();
      return Type::Fixed(static_cast<int32_t>(n.size));
    default: return Type::Unknown();
  }
}

// The value of field `index` of a record, or nullopt when the writer has no such field or wrote null.
Result<std::optional<avro_value_t>> OptionalChild(const avro_value_t& record, int index) {
  if (index < 0) return std::nullopt;
  ARROW_ASSIGN_OR_RAISE(avro_value_t child, avro::ChildAt(record, static_cast<size_t>(index)));
  return avro::NonNullValue(child);
}

Result<avro_value_t> RequiredChild(const avro_value_t& record, int index) {
  ARROW_ASSIGN_OR_RAISE(auto child, OptionalChild(record, index));
  if (!child) return Corrupt("required value is null");
  return *child;
}

Result<std::optional<int64_t>> OptionalLong(const avro_value_t& record, int index) {
  ARROW_ASSIGN_OR_RAISE(auto child, OptionalChild(record, index));
  if (!child) return std::nullopt;
  return avro::ReadLong(*child);
}

std::string_view StatusName(ManifestEntryStatus status) {
  switch (status) {
    case ManifestEntryStatus::kExisting: return "EXISTING";
    case ManifestEntryStatus::kAdded: return "ADDED";
    case ManifestEntryStatus::kDeleted: return "DELETED";
  }
  return "?";
}

}  // namespace lakesync::iceberg::internal
