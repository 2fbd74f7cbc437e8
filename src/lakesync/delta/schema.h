// A Delta table schema (metaData.schemaString, Spark's JSON schema) as lakesync reads it:
// - the Arrow output schema in logical column names, with Delta's types (byte → int8, short → int16,
//   timestamp → timestamp[us, UTC], timestamp_ntz → timestamp[us], decimal, nested struct/list/map);
// - an Iceberg read schema of the columns stored in data files (partition columns are not), named by
//   physical name and numbered by column-mapping id where there is one, so the project's Parquet
//   reader can match file columns by physical name (name mode, none) or by field id (id mode).
#pragma once

#include <arrow/type_fwd.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/iceberg/model/schema.h"

namespace lakesync::delta {

enum class ColumnMappingMode { kNone, kName, kId };

struct TableSchema {
  ColumnMappingMode mode = ColumnMappingMode::kNone;
  // Table columns in schema order, logical names, Delta's Arrow types.
  std::shared_ptr<arrow::Schema> output;
  // Data-file columns (every column that is not a partition column), physical names.
  iceberg::SchemaPtr read_schema;
  // Per output column: its index in read_schema's top-level fields, or -1 for a partition column.
  std::vector<int> read_index;
  // Per output column: the physical name (the key of partitionValues under column mapping).
  std::vector<std::string> physical_names;
  // Logical names, types, nullability and physical names, for "same schema" checks.
  std::string fingerprint;
};

// Parses schemaString. `partition_columns` are logical names (metaData.partitionColumns).
// Returns Corrupt for malformed JSON, InvalidArgument naming a partition column not in the schema,
// Unsupported for types lakesync cannot read (variant, interval, void, unknown names).
Result<TableSchema> ParseTableSchema(const std::string& schema_string, const std::vector<std::string>& partition_columns,
                                     ColumnMappingMode mode);

// Columns and nested fields renamed between two schemas of one table, old logical path → new
// ("qty" → "amount", "st.a" → "st.b", "st.a" → "st2.b" when its struct was renamed too): under
// column mapping a rename changes the logical name only and keeps the physical name, so fields are
// matched by their path of physical names. Only fields whose own name changed are listed (a field
// inside a renamed struct is not). Without column mapping on either side a rename cannot be told
// from a drop and an add: none.
std::map<std::string, std::string> RenamedColumns(const TableSchema& before, const TableSchema& after);

}  // namespace lakesync::delta
