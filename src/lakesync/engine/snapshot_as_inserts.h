// An initial import reads a table's snapshot as a change stream of inserts. The rows get the same
// control columns (with constant values) as the source's change stream, in the same order, so the
// target table created from the import matches the changes that follow it.
#pragma once

#include <arrow/record_batch.h>
#include <arrow/scalar.h>

#include <map>
#include <memory>
#include <string>

#include "lakesync/common/status.h"

namespace lakesync::engine {

// `output_schema`: the rows' columns followed by the control columns; each control column takes
// its value from `constants` (by name; cast to the column's type).
// Errors: InvalidArgument when the rows' columns do not match the leading columns of
// `output_schema` by name, or a control column has no constant.
Result<std::shared_ptr<arrow::RecordBatchReader>> SnapshotAsInserts(
    std::shared_ptr<arrow::RecordBatchReader> rows, std::shared_ptr<arrow::Schema> output_schema,
    std::map<std::string, std::shared_ptr<arrow::Scalar>> constants);

}  // namespace lakesync::engine
