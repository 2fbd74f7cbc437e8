// Evaluates a bound expression on one row of single values: a partition tuple, or a row held as
// literals. Uses the truth rules of expression.h (SQL three-valued logic, IEEE NaN).
#pragma once

#include <functional>
#include <optional>

#include "lakesync/iceberg/expr/expression.h"

namespace lakesync::iceberg {

// The value of a field (by id) in the row being evaluated; nullptr or a null Literal stands for null.
using FieldLookup = std::function<const Literal*(int32_t field_id)>;

// true, false, or nullopt for unknown (SQL NULL). A value whose storage does not match the field's type is
// widened where that is lossless (int to long, float to double); otherwise the result is InvalidArgument
// naming the column.
Result<std::optional<bool>> EvaluateLiterals(const BoundExpr& expr, const FieldLookup& lookup);

}  // namespace lakesync::iceberg
