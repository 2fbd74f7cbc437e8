// Converting a constant as typed in a filter to the Iceberg type of the column it is compared with.
#pragma once

#include <string_view>

#include "lakesync/iceberg/expr/expression.h"

namespace lakesync::iceberg::internal {

// The constant in the column's type. Constants the type cannot hold exactly are described by where
// they fall, so that comparisons can be rewritten exactly (`int_col < 5.5` is `int_col <= 5`):
struct ConvertedLiteral {
  enum class Kind {
    kExact,     // `value` is the constant
    kBetween,   // the constant lies strictly between `value` and the next value of the type
    kAboveMax,  // the constant is greater than every value of the type
    kBelowMin,  // the constant is less than every value of the type
  };
  Kind kind = Kind::kExact;
  Literal value;
};

// Returns InvalidArgument naming the column, its type and the constant when they cannot be compared
// (a number with a string column, a malformed date, a timestamp with a zone offset for a column
// without time zone, NaN, ...).
Result<ConvertedLiteral> ConvertLiteral(const UnboundLiteral& literal, const Type& type, std::string_view column);

}  // namespace lakesync::iceberg::internal
