#include <arrow/array.h>
#include <arrow/record_batch.h>

#include <cmath>

#include "lakesync/formats/parquet/floating_stats_internal.h"

namespace lakesync::parquet_io::internal {
namespace {

// Iceberg order for floating values: by value, -0.0 before +0.0 (Java's Float.compare, NaN aside).
bool FloatLess(double a, double b) {
  if (a == b) return std::signbit(a) && !std::signbit(b);
  return a < b;
}

template <typename ArrayType>
void Accumulate(const ArrayType& values, const std::vector<uint8_t>* present, bool bounds, FloatingStats& out) {
  const int64_t n = values.length();
  const bool has_nulls = values.null_count() > 0;
  int64_t nans = 0;
  double lo = 0, hi = 0;
  bool any = false;
  for (int64_t i = 0; i < n; ++i) {
    if (present && !(*present)[static_cast<size_t>(i)]) continue;
    if (has_nulls && values.IsNull(i)) continue;
    const double v = static_cast<double>(values.Value(i));
    if (std::isnan(v)) {
      ++nans;
      continue;
    }
    if (!bounds) continue;
    if (!any) {
      lo = hi = v;
      any = true;
    } else {
      if (FloatLess(v, lo)) lo = v;
      if (FloatLess(hi, v)) hi = v;
    }
  }
  out.nan_count += nans;
  if (any) {
    if (!out.min || FloatLess(lo, *out.min)) out.min = lo;
    if (!out.max || FloatLess(*out.max, hi)) out.max = hi;
  }
}

}  // namespace

FloatingStatsCollector::FloatingStatsCollector(const iceberg::Schema& schema) {
  for (size_t i = 0; i < schema.fields().size(); ++i) {
    std::vector<Step> steps;
    Collect(schema.fields()[i], static_cast<int>(i), steps, true);
  }
  for (const auto& leaf : leaves_) stats_[leaf.field_id];
}

void FloatingStatsCollector::Collect(const iceberg::NestedField& field, int top_level, std::vector<Step>& steps,
                                     bool bounds) {
  const iceberg::Type& type = *field.type;
  switch (type.id()) {
    case iceberg::TypeId::kFloat:
    case iceberg::TypeId::kDouble: leaves_.push_back(Leaf{field.id, top_level, steps, bounds}); return;
    case iceberg::TypeId::kStruct:
      for (size_t i = 0; i < type.fields().size(); ++i) {
        steps.push_back(Step{Step::Kind::kStructChild, static_cast<int>(i)});
        Collect(type.fields()[i], top_level, steps, bounds);
        steps.pop_back();
      }
      return;
    case iceberg::TypeId::kList:
      steps.push_back(Step{Step::Kind::kListElement, 0});
      Collect(type.element(), top_level, steps, false);
      steps.pop_back();
      return;
    case iceberg::TypeId::kMap:
      steps.push_back(Step{Step::Kind::kMapKey, 0});
      Collect(type.key(), top_level, steps, false);
      steps.back().kind = Step::Kind::kMapValue;
      Collect(type.value(), top_level, steps, false);
      steps.pop_back();
      return;
    default: return;
  }
}

Status FloatingStatsCollector::Update(const arrow::RecordBatch& batch) {
  for (const auto& leaf : leaves_) {
    if (leaf.top_level >= batch.num_columns()) return InvalidArgument("batch has too few columns");
    std::shared_ptr<arrow::Array> array = batch.column(leaf.top_level);
    // `present[i]` marks slots of `array` that hold a value of the leaf's column; null when all do.
    std::unique_ptr<std::vector<uint8_t>> present;
    for (const Step& step : leaf.steps) {
      if (step.kind == Step::Kind::kStructChild) {
        const auto& s = static_cast<const arrow::StructArray&>(*array);
        if (s.null_count() > 0) {
          if (!present) present = std::make_unique<std::vector<uint8_t>>(static_cast<size_t>(s.length()), 1);
          for (int64_t i = 0; i < s.length(); ++i) {
            if (s.IsNull(i)) (*present)[static_cast<size_t>(i)] = 0;
          }
        }
        array = s.field(step.index);
        continue;
      }
      // Lists and maps share the offsets layout (MapArray is a ListArray of key/value structs).
      const auto& l = static_cast<const arrow::ListArray&>(*array);
      std::shared_ptr<arrow::Array> values;
      if (step.kind == Step::Kind::kListElement) {
        values = l.values();
      } else {
        const auto& m = static_cast<const arrow::MapArray&>(*array);
        values = step.kind == Step::Kind::kMapKey ? m.keys() : m.items();
      }
      auto child = std::make_unique<std::vector<uint8_t>>(static_cast<size_t>(values->length()), 0);
      for (int64_t i = 0; i < l.length(); ++i) {
        if (l.IsNull(i) || (present && !(*present)[static_cast<size_t>(i)])) continue;
        for (int64_t k = l.value_offset(i); k < l.value_offset(i + 1); ++k) (*child)[static_cast<size_t>(k)] = 1;
      }
      present = std::move(child);
      array = values;
    }
    FloatingStats& out = stats_[leaf.field_id];
    if (array->type_id() == arrow::Type::FLOAT) {
      Accumulate(static_cast<const arrow::FloatArray&>(*array), present.get(), leaf.bounds, out);
    } else if (array->type_id() == arrow::Type::DOUBLE) {
      Accumulate(static_cast<const arrow::DoubleArray&>(*array), present.get(), leaf.bounds, out);
    } else {
      return InvalidArgument("field id {} should be float or double in the batch, found {}", leaf.field_id,
                             array->type()->ToString());
    }
  }
  return Status::OK();
}

}  // namespace lakesync::parquet_io::internal
