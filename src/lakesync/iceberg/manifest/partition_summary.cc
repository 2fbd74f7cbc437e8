#include "lakesync/iceberg/manifest/partition_summary.h"

#include <cmath>

namespace lakesync::iceberg {
namespace {

bool IsNaN(const Literal& v) {
  if (std::holds_alternative<float>(v.value())) return std::isnan(v.get<float>());
  if (std::holds_alternative<double>(v.value())) return std::isnan(v.get<double>());
  return false;
}

// Literal::Compare with signed zeros ordered (-0.0 < +0.0) so bounds keep their sign.
int CompareForBounds(const Literal& a, const Literal& b) {
  const int c = a.Compare(b);
  if (c != 0) return c;
  if (std::holds_alternative<float>(a.value()) && std::holds_alternative<float>(b.value())) {
    return static_cast<int>(std::signbit(b.get<float>())) - static_cast<int>(std::signbit(a.get<float>()));
  }
  if (std::holds_alternative<double>(a.value()) && std::holds_alternative<double>(b.value())) {
    return static_cast<int>(std::signbit(b.get<double>())) - static_cast<int>(std::signbit(a.get<double>()));
  }
  return 0;
}

}  // namespace

PartitionSummaryBuilder::PartitionSummaryBuilder(TypePtr partition_type)
    : partition_type_(std::move(partition_type)), stats_(partition_type_->fields().size()) {}

Status PartitionSummaryBuilder::Update(const std::vector<Literal>& partition) {
  const auto& fields = partition_type_->fields();
  if (partition.size() != fields.size()) {
    return InvalidArgument("a partition tuple has {} values but the spec has {} fields", partition.size(),
                           fields.size());
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    const Literal& v = partition[i];
    FieldStats& s = stats_[i];
    if (!LiteralMatchesType(v, *fields[i].type)) {
      return InvalidArgument("partition value for '{}' does not match type {}", fields[i].name,
                             fields[i].type->ToString());
    }
    if (v.is_null()) {
      s.contains_null = true;
    } else if (IsNaN(v)) {
      s.contains_nan = true;
    } else {
      if (s.min.is_null() || CompareForBounds(v, s.min) < 0) s.min = v;
      if (s.max.is_null() || CompareForBounds(v, s.max) > 0) s.max = v;
    }
  }
  return Status::OK();
}

Result<std::vector<PartitionFieldSummary>> PartitionSummaryBuilder::Summaries() const {
  std::vector<PartitionFieldSummary> out;
  const auto& fields = partition_type_->fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    const FieldStats& s = stats_[i];
    PartitionFieldSummary summary;
    summary.contains_null = s.contains_null;
    summary.contains_nan = s.contains_nan;
    if (!s.min.is_null()) {
      const std::string& name = fields[i].name;
      LS_ASSIGN_OR_RAISE_CTX(summary.lower_bound, s.min.ToBytes(*fields[i].type), "partition field '{}'", name);
      LS_ASSIGN_OR_RAISE_CTX(summary.upper_bound, s.max.ToBytes(*fields[i].type), "partition field '{}'", name);
    }
    out.push_back(std::move(summary));
  }
  return out;
}

}  // namespace lakesync::iceberg
