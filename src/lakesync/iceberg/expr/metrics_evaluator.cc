#include "lakesync/iceberg/expr/metrics_evaluator.h"

#include <optional>

#include "lakesync/iceberg/expr/bounds_internal.h"

namespace lakesync::iceberg {
namespace {

std::optional<int64_t> Count(const std::map<int32_t, int64_t>& counts, int32_t id) {
  auto it = counts.find(id);
  if (it == counts.end()) return std::nullopt;
  return it->second;
}

std::optional<Literal> Bound(const std::map<int32_t, std::string>& bounds, const BoundReference& ref) {
  auto it = bounds.find(ref.field_id);
  if (it == bounds.end()) return std::nullopt;
  auto v = Literal::FromBytes(*ref.type, it->second);
  // A bound that does not decode as the column's current type says nothing usable: ignore it.
  if (!v.ok()) return std::nullopt;
  return *std::move(v);
}

class FileMetrics {
 public:
  explicit FileMetrics(const DataFile& file) : file_(file) {}

  bool Eval(const BoundExpr& e) const {
    switch (e.op()) {
      case Operation::kTrue: return true;
      case Operation::kFalse: return false;
      case Operation::kNot: return Eval(RewriteNot(e));  // not reached for rewritten filters
      case Operation::kAnd: return Eval(e.left()) && Eval(e.right());
      case Operation::kOr: return Eval(e.left()) || Eval(e.right());
      default: return Predicate(e);
    }
  }

 private:
  bool Predicate(const BoundExpr& e) const {
    const int32_t id = e.ref().field_id;
    const auto values = Count(file_.value_counts, id);
    const auto nulls = Count(file_.null_value_counts, id);
    const auto nans = Count(file_.nan_value_counts, id);
    // value_counts include nulls and NaNs.
    const bool nulls_only = values && nulls && *values == *nulls;
    const bool no_nulls = nulls && *nulls == 0;
    const bool nans_only = values && nans && *values == *nans;
    // No value that an ordering comparison, IN, LIKE or IS NOT NAN could accept.
    const bool nulls_or_nans_only = values && nulls && *values == *nulls + nans.value_or(0);

    switch (e.op()) {
      case Operation::kIsNull: return !no_nulls;
      case Operation::kNotNull: return !nulls_only;
      case Operation::kIsNan: return !nulls_only && !(nans && *nans == 0);
      case Operation::kNotNan: return !nans_only && !nulls_or_nans_only;
      case Operation::kNotEq:
      case Operation::kNotIn:
        // Bounds need not be values of the file, so they cannot show that every value equals X; only a
        // column of nulls (for which != is unknown) rules the file out. NaN != X holds.
        return !nulls_only;
      case Operation::kNotStartsWith:
        // Nulls do not satisfy NOT LIKE (it is unknown for them), so only the non-null values matter:
        // if both bounds start with the prefix, every value does.
        return !nulls_only &&
               !internal::BoundsShareStringPrefix(e.literal().get<std::string>(), Bound(file_.lower_bounds, e.ref()),
                                                  Bound(file_.upper_bounds, e.ref()));
      default: break;
    }
    if (nulls_or_nans_only) return false;
    return internal::RangeMightMatch(e.op(), e.literals(), Bound(file_.lower_bounds, e.ref()),
                                     Bound(file_.upper_bounds, e.ref()));
  }

  const DataFile& file_;
};

}  // namespace

InclusiveMetricsEvaluator::InclusiveMetricsEvaluator(const BoundExpr& filter) : filter_(RewriteNot(filter)) {}

bool InclusiveMetricsEvaluator::MightMatch(const DataFile& file) const {
  if (file.record_count == 0) return false;
  if (file.record_count < 0) return true;
  return FileMetrics(file).Eval(filter_);
}

}  // namespace lakesync::iceberg
