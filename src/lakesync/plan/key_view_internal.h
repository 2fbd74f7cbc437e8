// Which Arrow types can be equality keys of a change stream. Grouping and hash partitioning by key
// use the one key encoder (iceberg/model/key_columns.h) that equality deletes and key resolution
// use; floating-point columns, whose NaN and -0.0 make value equality differ from bit equality, are
// rejected as keys here.
#pragma once

#include <arrow/type_fwd.h>

#include <memory>
#include <string>

#include "lakesync/common/status.h"
#include "lakesync/iceberg/model/key_columns.h"

namespace lakesync::plan::internal {

// The array itself, or the storage of an extension array (e.g. arrow.uuid).
std::shared_ptr<arrow::Array> StorageArray(std::shared_ptr<arrow::Array> array);
std::shared_ptr<arrow::DataType> StorageType(std::shared_ptr<arrow::DataType> type);

// OK when `type` (after extension storage and dictionary values) can be an equality key; otherwise
// InvalidArgument naming `column` and the type.
Status CheckKeyType(const std::string& column, const std::shared_ptr<arrow::DataType>& type);

}  // namespace lakesync::plan::internal
