// Iceberg schema <-> Arrow schema. Arrow fields carry the Iceberg field id in the metadata key
// "PARQUET:field_id", which Arrow's Parquet writer stores as the Parquet field_id Iceberg requires.
#pragma once

#include <arrow/type_fwd.h>

#include <memory>

#include "lakesync/iceberg/model/schema.h"

namespace lakesync::iceberg {

inline constexpr char kArrowFieldIdKey[] = "PARQUET:field_id";

// uuid maps to fixed_size_binary(16), the layout the engine computes on; with `uuid_extension` it is
// the canonical arrow.uuid extension type instead (same layout), for output that should say "uuid".
Result<std::shared_ptr<arrow::DataType>> ToArrowType(const Type& type, bool uuid_extension = false);
Result<std::shared_ptr<arrow::Field>> ToArrowField(const NestedField& field, bool uuid_extension = false);
Result<std::shared_ptr<arrow::Schema>> ToArrowSchema(const Schema& schema, bool uuid_extension = false);

// The Iceberg type for an Arrow type, with nested field ids taken from "PARQUET:field_id" metadata.
// When `assign_fresh_ids` is set, ids in the metadata are ignored and new ones assigned the way Java
// does (each struct's fields first, then their children), starting at 1.
// `data` declared as `type`, which has the same physical layout (extension wrappers such as
// arrow.uuid differ): buffers are shared, only the declared types change, recursively. Readers use it
// to give decoded columns the exact types of their output schema.
std::shared_ptr<arrow::ArrayData> RetypeArrayData(const std::shared_ptr<arrow::ArrayData>& data,
                                                  const std::shared_ptr<arrow::DataType>& type);

Result<SchemaPtr> FromArrowSchema(const arrow::Schema& schema, bool assign_fresh_ids, int32_t schema_id = 0);

// The field id stored on an Arrow field, or -1.
int32_t ArrowFieldId(const arrow::Field& field);

}  // namespace lakesync::iceberg
