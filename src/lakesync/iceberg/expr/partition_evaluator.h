// Partition pruning: a row filter projected onto a partition spec (projection.h), evaluated on a data
// file's partition tuple, or on a manifest's partition field summaries to skip whole manifests.
// Both are inclusive: they may keep a file or manifest without matches, never drop one with matches.
#pragma once

#include <unordered_map>
#include <vector>

#include "lakesync/iceberg/expr/expression.h"
#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/model/partition_spec.h"

namespace lakesync::iceberg {

class PartitionEvaluator {
 public:
  // `filter` is bound to `schema`. Errors as ProjectInclusive.
  static Result<PartitionEvaluator> Make(const BoundExpr& filter, const PartitionSpec& spec, const Schema& schema);

  // False only when no row of a file with this partition tuple (one value per spec field, in spec
  // order; null Literals for null values) can match. InvalidArgument when the tuple has the wrong
  // number of values or a value of the wrong type.
  Result<bool> MightMatch(const std::vector<Literal>& partition) const;

  const BoundExpr& projected() const { return projected_; }

 private:
  PartitionEvaluator(BoundExpr projected, std::unordered_map<int32_t, size_t> index, size_t size)
      : projected_(std::move(projected)), index_(std::move(index)), size_(size) {}

  BoundExpr projected_;
  std::unordered_map<int32_t, size_t> index_;  // partition field id -> position in the tuple
  size_t size_;
};

class ManifestEvaluator {
 public:
  // `filter` is bound to `schema`; `spec` is the manifest's partition spec. Errors as ProjectInclusive.
  static Result<ManifestEvaluator> Make(const BoundExpr& filter, const PartitionSpec& spec, const Schema& schema);

  // False only when no file tracked by the manifest can match, judged from its partition summaries
  // (contains_null, contains_nan, lower/upper bounds; an absent lower bound means every value is null or
  // NaN, as the spec says). A manifest without summaries always may match. Returns InvalidArgument when
  // the number of summaries differs from the spec's fields.
  Result<bool> MightMatch(const ManifestFile& manifest) const;
  Result<bool> MightMatch(const std::vector<PartitionFieldSummary>& summaries) const;

  const BoundExpr& projected() const { return projected_; }

 private:
  ManifestEvaluator(BoundExpr projected, std::unordered_map<int32_t, size_t> index, size_t size)
      : projected_(std::move(projected)), index_(std::move(index)), size_(size) {}

  BoundExpr projected_;
  std::unordered_map<int32_t, size_t> index_;
  size_t size_;
};

}  // namespace lakesync::iceberg
