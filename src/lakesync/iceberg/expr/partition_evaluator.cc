#include "lakesync/iceberg/expr/partition_evaluator.h"

#include "lakesync/iceberg/expr/bounds_internal.h"
#include "lakesync/iceberg/expr/literal_evaluator.h"
#include "lakesync/iceberg/expr/projection.h"

namespace lakesync::iceberg {
namespace {

std::unordered_map<int32_t, size_t> IndexFields(const PartitionSpec& spec) {
  std::unordered_map<int32_t, size_t> index;
  for (size_t i = 0; i < spec.fields().size(); ++i) index.emplace(spec.fields()[i].field_id, i);
  return index;
}

std::optional<Literal> Decode(const Type& type, const std::optional<std::string>& bytes) {
  if (!bytes) return std::nullopt;
  auto v = Literal::FromBytes(type, *bytes);
  if (!v.ok()) return std::nullopt;
  return *std::move(v);
}

bool SummaryMightMatch(const BoundExpr& e, const PartitionFieldSummary& s) {
  const Type& type = *e.ref().type;
  const bool floating = type.id() == TypeId::kFloat || type.id() == TypeId::kDouble;
  const bool no_nans = !floating || (s.contains_nan.has_value() && !*s.contains_nan);
  // The spec leaves lower_bound null exactly when every value is null or NaN. Without a null or NaN
  // reported either, the summary describes no values (or an incomplete writer): assume nothing.
  const bool only_null_or_nan = !s.lower_bound.has_value() && (s.contains_null || s.contains_nan.value_or(false));
  const auto lower = Decode(type, s.lower_bound);
  const auto upper = Decode(type, s.upper_bound);
  switch (e.op()) {
    case Operation::kIsNull: return s.contains_null;
    case Operation::kNotNull: return !(only_null_or_nan && no_nans);
    case Operation::kIsNan: return !no_nans;
    case Operation::kNotNan: return !only_null_or_nan;
    case Operation::kNotEq:
    case Operation::kNotIn: return true;
    case Operation::kNotStartsWith:
      return !only_null_or_nan && !internal::BoundsShareStringPrefix(e.literal().get<std::string>(), lower, upper);
    default: break;
  }
  if (only_null_or_nan) return false;
  return internal::RangeMightMatch(e.op(), e.literals(), lower, upper);
}

bool EvalSummaries(const BoundExpr& e, const std::vector<PartitionFieldSummary>& summaries,
                   const std::unordered_map<int32_t, size_t>& index) {
  switch (e.op()) {
    case Operation::kTrue: return true;
    case Operation::kFalse: return false;
    case Operation::kNot: return EvalSummaries(RewriteNot(e), summaries, index);
    case Operation::kAnd: return EvalSummaries(e.left(), summaries, index) && EvalSummaries(e.right(), summaries, index);
    case Operation::kOr: return EvalSummaries(e.left(), summaries, index) || EvalSummaries(e.right(), summaries, index);
    default: {
      auto it = index.find(e.ref().field_id);
      if (it == index.end()) return true;
      return SummaryMightMatch(e, summaries[it->second]);
    }
  }
}

}  // namespace

Result<PartitionEvaluator> PartitionEvaluator::Make(const BoundExpr& filter, const PartitionSpec& spec,
                                                    const Schema& schema) {
  ARROW_ASSIGN_OR_RAISE(auto projected, ProjectInclusive(filter, spec, schema));
  return PartitionEvaluator(std::move(projected), IndexFields(spec), spec.fields().size());
}

Result<bool> PartitionEvaluator::MightMatch(const std::vector<Literal>& partition) const {
  if (partition.size() != size_) {
    return InvalidArgument("partition tuple has {} values, but the spec has {} fields", partition.size(), size_);
  }
  // Transforms map null to null and other values to non-null values, so a partition predicate that is
  // unknown (null partition value) means the source values are null and the row filter is unknown too.
  ARROW_ASSIGN_OR_RAISE(auto result, EvaluateLiterals(projected_, [&](int32_t id) -> const Literal* {
                          auto it = index_.find(id);
                          return it == index_.end() ? nullptr : &partition[it->second];
                        }));
  return result.value_or(false);
}

Result<ManifestEvaluator> ManifestEvaluator::Make(const BoundExpr& filter, const PartitionSpec& spec,
                                                  const Schema& schema) {
  ARROW_ASSIGN_OR_RAISE(auto projected, ProjectInclusive(filter, spec, schema));
  return ManifestEvaluator(std::move(projected), IndexFields(spec), spec.fields().size());
}

Result<bool> ManifestEvaluator::MightMatch(const ManifestFile& manifest) const {
  if (manifest.partitions.empty()) return size_ == 0 ? EvalSummaries(projected_, {}, index_) : true;
  return MightMatch(manifest.partitions);
}

Result<bool> ManifestEvaluator::MightMatch(const std::vector<PartitionFieldSummary>& summaries) const {
  if (summaries.size() != size_) {
    return InvalidArgument("manifest has {} partition summaries, but its spec has {} fields", summaries.size(), size_);
  }
  return EvalSummaries(projected_, summaries, index_);
}

}  // namespace lakesync::iceberg
