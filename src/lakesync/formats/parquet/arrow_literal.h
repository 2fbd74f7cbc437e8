// Single values between Arrow and Iceberg: one element of an Arrow array as an Iceberg Literal
// (partition values, test expectations), and an Iceberg Literal as an Arrow scalar (v3 initial
// defaults filled in by the reader).
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>

#include "lakesync/iceberg/model/literal.h"

namespace lakesync::parquet_io {

// The element at `index` of `array` as a Literal of Iceberg type `type` (null when the slot is null).
// Integer widening (int → long), float → double, string ↔ binary and every timestamp unit are
// converted; timestamps are floored to the Iceberg unit (micros, or nanos for the _ns types).
// Returns InvalidArgument when the Arrow type cannot represent `type` (e.g. a date as a string), or
// a decimal's scale differs.
Result<iceberg::Literal> LiteralFromArray(const arrow::Array& array, int64_t index, const iceberg::Type& type);

// A scalar of the Arrow type ToArrowType(type) gives, holding `literal` (a null scalar for null).
// Returns InvalidArgument when the literal does not hold the type's storage.
Result<std::shared_ptr<arrow::Scalar>> LiteralToScalar(const iceberg::Literal& literal, const iceberg::Type& type);

}  // namespace lakesync::parquet_io
