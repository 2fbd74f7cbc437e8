// An initial import reads a table's snapshot as a change stream of inserts. The rows get the same
// control columns (with constant values) as the source's change stream, in the same order, so the
// target table created from the import matches the changes that follow it.
#pragma once

#include <arrow/record_batch.h>
#include <arrow/scalar.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lakesync/common/status.h"

namespace lakesync::engine {

// `output_schema`: the rows' columns followed by the control columns; each control column takes
// its value from `constants` (by name; cast to the column's type).
// Errors: InvalidArgument when the rows' columns do not match the leading columns of
// `output_schema` by name, or a control column has no constant.
Result<std::shared_ptr<arrow::RecordBatchReader>> SnapshotAsInserts(
    std::shared_ptr<arrow::RecordBatchReader> rows, std::shared_ptr<arrow::Schema> output_schema,
    std::map<std::string, std::shared_ptr<arrow::Scalar>> constants);

// A Delta version's snapshot (a Delta table's or a shared table's) as the inserts of a Delta change
// feed: the rows, then the metadata columns asked for (_change_type, _commit_version,
// _commit_timestamp), in their order, with the version's values. `commit_timestamp_ms` is called only
// when _commit_timestamp is asked for (a shared table answers it with a request).
Result<std::shared_ptr<arrow::RecordBatchReader>> DeltaSnapshotAsInserts(
    std::shared_ptr<arrow::RecordBatchReader> rows, const std::vector<std::string>& metadata_columns, int64_t version,
    const std::function<Result<int64_t>()>& commit_timestamp_ms);

}  // namespace lakesync::engine
