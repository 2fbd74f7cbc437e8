// Row filtering: evaluates a bound filter on Arrow record batches with Arrow compute kernels
// (equal/less/..., is_null, is_in, starts_with, is_nan, and_kleene/or_kleene, invert).
//
// Finding columns: each level of a column's path (top-level field, then struct children) is matched by
// Iceberg field id, read from the Arrow field metadata "PARQUET:field_id" (what lakesync's readers and
// ToArrowSchema produce). At a level where no field carries an id, the field is matched by name
// instead (batches built by hand or by readers that drop metadata). A column that is absent from the
// batch reads as all nulls, as Iceberg reads columns a file was written without. Fields nested in
// structs inherit their parents' nulls.
//
// Types: constants are converted to Arrow scalars of the column's own Arrow type when that is exact
// (int8 columns, millisecond timestamps, large strings, decimal64, ...); otherwise the column is cast to
// the Iceberg type's Arrow type (ToArrowType) and compared there, so no comparison is ever rounded.
// Dictionary-encoded columns are decoded, extension columns (arrow.uuid) compared by their storage.
#pragma once

#include <arrow/type_fwd.h>

#include <memory>

#include "lakesync/iceberg/expr/expression.h"

namespace lakesync::iceberg {

// One boolean per row, never null: true where the filter is true. Rows where it is false or unknown
// (SQL NULL, e.g. a comparison with a null value) are not selected. Returns InvalidArgument when a
// column has an Arrow type that cannot be compared with the filter's values, or a path element that is
// not a struct.
Result<std::shared_ptr<arrow::BooleanArray>> EvaluateRowFilter(const BoundExpr& filter, const arrow::RecordBatch& batch);

// The rows of `batch` the filter selects (all columns kept). Errors as EvaluateRowFilter.
Result<std::shared_ptr<arrow::RecordBatch>> FilterRecordBatch(const BoundExpr& filter,
                                                              const std::shared_ptr<arrow::RecordBatch>& batch);

// A literal as an Arrow scalar of ToArrowType(type) (decimal128, date32, time64[us], timestamp[us|ns]
// with "UTC" for zoned types, fixed_size_binary(16) for uuid, ...). InvalidArgument for a literal that
// does not match `type`.
Result<std::shared_ptr<arrow::Scalar>> LiteralToArrowScalar(const Literal& literal, const Type& type);

}  // namespace lakesync::iceberg
