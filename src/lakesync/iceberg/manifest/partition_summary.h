// Accumulates the manifest list's per-field partition summaries (spec "Manifest Lists",
// field_summary 508) over the partition tuples of a manifest's entries.
#pragma once

#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/model/literal.h"
#include "lakesync/iceberg/model/types.h"

namespace lakesync::iceberg {

class PartitionSummaryBuilder {
 public:
  // `partition_type` is the struct PartitionSpec::PartitionType returns.
  explicit PartitionSummaryBuilder(TypePtr partition_type);

  // Adds one partition tuple (one value per partition field, in spec order). Returns
  // InvalidArgument if the tuple has the wrong arity or a value does not match its field's type.
  Status Update(const std::vector<Literal>& partition);

  // One summary per partition field: contains_null, contains_nan (always set, false for types
  // without NaN, as Java and pyiceberg write it), and the Appendix D bytes of the smallest and
  // largest non-null, non-NaN value. For floating point -0.0 sorts below +0.0, so a summary of
  // both has lower bound -0.0 and upper bound +0.0 (spec note on signed zeros).
  Result<std::vector<PartitionFieldSummary>> Summaries() const;

 private:
  struct FieldStats {
    bool contains_null = false;
    bool contains_nan = false;
    Literal min;
    Literal max;
  };
  TypePtr partition_type_;
  std::vector<FieldStats> stats_;
};

}  // namespace lakesync::iceberg
