// Partition transforms over whole Arrow arrays: the vectorised counterpart of Transform::Apply,
// following the same rules (and checked against it in tests).
#pragma once

#include <arrow/type_fwd.h>

#include <memory>

#include "lakesync/iceberg/model/transform.h"

namespace lakesync::iceberg {

// Applies `transform` to `source`, an array of Iceberg type `source_type` in the Arrow layout
// ToArrowType gives it. The result has the Arrow layout of the transform's result type: int32 for
// bucket/year/month/hour, date32 for day, the source layout for identity/truncate/void; nulls stay
// null. Returns InvalidArgument when the transform does not apply to the type, Unsupported for
// unknown transforms.
Result<std::shared_ptr<arrow::Array>> ApplyTransform(const Transform& transform, const Type& source_type,
                                                     const std::shared_ptr<arrow::Array>& source);

}  // namespace lakesync::iceberg
