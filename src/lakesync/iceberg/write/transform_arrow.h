// Partition transforms over whole Arrow arrays: the vectorised counterpart of Transform::Apply,
// following the same rules (and checked against it in tests).
#pragma once

#include <arrow/type_fwd.h>

#include <memory>
#include <vector>

#include "lakesync/iceberg/model/schema.h"
#include "lakesync/iceberg/model/transform.h"

namespace lakesync::iceberg {

// Applies `transform` to `source`, an array of Iceberg type `source_type` in the Arrow layout
// ToArrowType gives it. The result has the Arrow layout of the transform's result type: int32 for
// bucket/year/month/hour, date32 for day, the source layout for identity/truncate/void; nulls stay
// null. Returns InvalidArgument when the transform does not apply to the type, Unsupported for
// unknown transforms.
Result<std::shared_ptr<arrow::Array>> ApplyTransform(const Transform& transform, const Type& source_type,
                                                     const std::shared_ptr<arrow::Array>& source);

// The source column of a transform (a partition field's, a sort field's) may be a top-level column or
// a field inside structs (spec: not inside a list or map). SourceFieldPath finds the child indices
// from the top level down to it; InvalidArgument naming `what` when the id is absent or inside a list
// or map. SourceColumn follows the path in a batch laid out like the schema; a null struct makes its
// fields null (Arrow's flattened child), which is how partitioning and sorting both see them.
Result<std::vector<int>> SourceFieldPath(const Schema& schema, int32_t source_id, std::string_view what);
Result<std::shared_ptr<arrow::Array>> SourceColumn(const arrow::RecordBatch& batch, const std::vector<int>& path);

}  // namespace lakesync::iceberg
