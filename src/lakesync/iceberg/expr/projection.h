// Inclusive projection of a row filter onto a partition spec: an expression over the partition tuple
// that is true for every partition that may hold a matching row (Iceberg's "inclusive projection").
#pragma once

#include "lakesync/iceberg/expr/expression.h"
#include "lakesync/iceberg/model/partition_spec.h"
#include "lakesync/iceberg/model/schema.h"

namespace lakesync::iceberg {

// The reference to a partition field in a projected expression: field id and name of the partition
// field, type of the partition value (`spec.PartitionType(schema)`).
Result<BoundReference> PartitionFieldReference(const PartitionField& field, const Schema& schema);

// Projects `filter` (bound to `schema`) onto `spec`. Each predicate becomes the AND of its projections
// through every partition field whose source is the predicate's column (TRUE when there is none):
//   identity            the same predicate on the partition value;
//   bucket[N]           = and IN on the bucket numbers, IS [NOT] NULL; anything else TRUE;
//   truncate[W]         ranges widened to the truncated boundary (x < 15 -> t <= truncate(14)), =, IN,
//                       LIKE prefix; NOT LIKE only when the prefix fits in W characters;
//   year/month/day/hour ranges and = / IN on the period numbers; for periods before 1970 the projection
//                       also admits the next period, because writers that truncated toward zero
//                       (Iceberg Java before 0.13, iceberg-rust 0.10 for some instants) filed such
//                       values one period late — Java's reader admits them the same way;
//   void, unknown       TRUE.
// != and NOT IN project to TRUE except through identity. Returns InvalidArgument when a partition
// field's source is missing from the schema or cannot be transformed.
Result<BoundExpr> ProjectInclusive(const BoundExpr& filter, const PartitionSpec& spec, const Schema& schema);

}  // namespace lakesync::iceberg
