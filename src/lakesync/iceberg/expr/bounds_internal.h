// Reasoning about value ranges shared by the metrics and manifest evaluators.
#pragma once

#include <optional>
#include <vector>

#include "lakesync/iceberg/expr/expression.h"

namespace lakesync::iceberg::internal {

bool IsNaNLiteral(const Literal& v);

// Literal::Compare for two non-null values of one type, or nullopt when either is NaN (unordered).
std::optional<int> CompareOrdered(const Literal& a, const Literal& b);

// Whether some value v with lower <= v <= upper can satisfy `op` with `literals`. A missing or NaN bound
// is no bound (NaN bounds come from writers that let NaN into min/max). String bounds may be truncated
// (lower: a prefix of the minimum; upper: a prefix of the maximum with its last character incremented);
// every check here stays correct for such bounds. Predicates that bounds cannot decide (not_eq,
// not_in, not_starts_with, unary) give true.
bool RangeMightMatch(Operation op, const std::vector<Literal>& literals, const std::optional<Literal>& lower,
                     const std::optional<Literal>& upper);

// Whether both bounds are present and start with `prefix`, so that every non-null value does.
bool BoundsShareStringPrefix(const std::string& prefix, const std::optional<Literal>& lower,
                             const std::optional<Literal>& upper);

}  // namespace lakesync::iceberg::internal
