// Selecting columns of a schema by field id (read projections, key columns, equality-delete rows).
#pragma once

#include <cstdint>
#include <vector>

#include "lakesync/iceberg/model/schema.h"

namespace lakesync::parquet_io {

// The schema restricted to `field_ids`, in schema order. A selected field keeps its whole subtree; a
// field nested in structs keeps its parent structs, holding only the selected children. Identifier
// field ids are kept where selected. Returns InvalidArgument for an id not in the schema or one
// inside a list or map (those cannot be selected without their container).
Result<iceberg::SchemaPtr> SelectFields(const iceberg::Schema& schema, const std::vector<int32_t>& field_ids);

}  // namespace lakesync::parquet_io
