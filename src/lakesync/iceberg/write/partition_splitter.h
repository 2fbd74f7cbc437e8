// Splits batches in a table schema by partition tuple: every spec field's transform is applied to a
// whole column at once (transform_arrow.h), rows are grouped by the resulting tuple, and each group
// comes back as one batch with its partition values.
#pragma once

#include <arrow/type_fwd.h>

#include <memory>
#include <string>
#include <vector>

#include "lakesync/iceberg/model/literal.h"
#include "lakesync/iceberg/model/partition_spec.h"
#include "lakesync/iceberg/model/schema.h"

namespace lakesync::iceberg {

struct PartitionedRows {
  std::vector<Literal> partition;              // one value per spec field, in spec order
  std::string key;                             // equal keys exactly for equal tuples
  std::shared_ptr<arrow::RecordBatch> rows;    // the rows of that partition, in input order
};

// A canonical byte string for a partition tuple (for maps keyed by partition).
std::string PartitionKey(const std::vector<Literal>& values, const std::vector<TypePtr>& types);

class PartitionSplitter {
 public:
  // Returns InvalidArgument when the spec does not fit the schema (missing source, a source inside a
  // list or map, a transform that does not accept its source type), Unsupported for unknown
  // transforms.
  static Result<std::unique_ptr<PartitionSplitter>> Make(SchemaPtr schema, PartitionSpecPtr spec);

  // One entry per distinct tuple, in order of first appearance. A batch of a single partition is
  // returned as is (no copy).
  Result<std::vector<PartitionedRows>> Split(const std::shared_ptr<arrow::RecordBatch>& batch) const;

  // The transformed columns of a batch, one per spec field (for tests and callers that route rows
  // themselves).
  Result<std::vector<std::shared_ptr<arrow::Array>>> Transform(const arrow::RecordBatch& batch) const;

  const std::vector<TypePtr>& result_types() const { return result_types_; }

 private:
  PartitionSplitter() = default;

  SchemaPtr schema_;
  PartitionSpecPtr spec_;
  std::vector<std::vector<int>> source_paths_;  // struct child indices from the top level
  std::vector<TypePtr> source_types_;
  std::vector<TypePtr> result_types_;
};

}  // namespace lakesync::iceberg
