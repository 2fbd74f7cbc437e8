// Zero-copy changes of an Arrow array's declared type where the memory layout stays the same: used
// to hand Arrow's Parquet writer the exact field names and annotations Iceberg wants, and to give
// read batches the read schema's nested field names and ids.
#pragma once

#include <arrow/type_fwd.h>

#include <memory>

#include "lakesync/iceberg/model/types.h"

namespace lakesync::parquet_io::internal {

// The Arrow type handed to Arrow's Parquet writer for an Iceberg type: ToArrowType's layout, with map
// entries named "key_value" and uuid as the arrow.uuid extension (written with the UUID annotation).
Result<std::shared_ptr<arrow::DataType>> ParquetWriterType(const iceberg::Type& type);
Result<std::shared_ptr<arrow::Field>> ParquetWriterField(const iceberg::NestedField& field);

// `data` declared as `type`, which must have the same physical layout (same nesting, only names,
// nullability flags, metadata or extension wrappers differ). Buffers are shared.
std::shared_ptr<arrow::ArrayData> Retype(const std::shared_ptr<arrow::ArrayData>& data,
                                         const std::shared_ptr<arrow::DataType>& type);

// True when `a` and `b` have the same layout in the sense of Retype.
bool SameLayout(const arrow::DataType& a, const arrow::DataType& b);

}  // namespace lakesync::parquet_io::internal
