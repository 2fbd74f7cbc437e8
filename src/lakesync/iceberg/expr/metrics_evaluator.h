// File pruning from column metrics: decides from a data file's value/null/NaN counts and lower/upper
// bounds whether the file may contain rows matching a filter. Inclusive: it may keep a file without
// matches, but never drops one with matches. Follows the rules of Iceberg's InclusiveMetricsEvaluator
// with lakesync's truth rules (expression.h): nulls never satisfy a predicate other than IS NULL, and
// NaN never satisfies an ordering comparison.
#pragma once

#include "lakesync/iceberg/expr/expression.h"
#include "lakesync/iceberg/model/data_file.h"

namespace lakesync::iceberg {

class InclusiveMetricsEvaluator {
 public:
  // `filter` is bound to the table schema (Bind); NOTs are pushed down here if still present.
  explicit InclusiveMetricsEvaluator(const BoundExpr& filter);

  // False only when no row of `file` can match. Missing metrics, bounds that do not decode as the
  // column's type (e.g. written before a type promotion) and NaN bounds count as unknown. A file with
  // record_count 0 never matches; a negative record_count (unknown) always may.
  bool MightMatch(const DataFile& file) const;

  const BoundExpr& filter() const { return filter_; }

 private:
  BoundExpr filter_;
};

}  // namespace lakesync::iceberg
