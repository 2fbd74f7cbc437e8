#include "lakesync/formats/parquet/parquet_metrics.h"

#include <parquet/exception.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>
#include <parquet/statistics.h>

#include <algorithm>
#include <set>
#include <unordered_map>

#include "lakesync/formats/parquet/parquet_stats_internal.h"

namespace lakesync::parquet_io {
namespace {

using iceberg::Literal;
using iceberg::TypeId;

struct LeafInfo {
  const iceberg::Type* type = nullptr;
  bool bounds_allowed = false;  // reached through structs only
};

void IndexLeaves(const iceberg::NestedField& field, bool through_structs_only,
                 std::unordered_map<int32_t, LeafInfo>& out) {
  const iceberg::Type& type = *field.type;
  if (type.is_primitive()) {
    out[field.id] = LeafInfo{&type, through_structs_only};
    return;
  }
  const bool child_allowed = through_structs_only && type.id() == TypeId::kStruct;
  for (const auto& child : type.fields()) IndexLeaves(child, child_allowed, out);
}

Literal FloatingLiteral(double v, const iceberg::Type& type) {
  if (type.id() == TypeId::kFloat) return Literal(static_cast<float>(v));
  return Literal(v);
}

// Truncates a bound for `mode`; nullopt drops the bound (no upper bound of that length exists).
std::optional<Literal> Truncate(const Literal& v, const iceberg::Type& type, const MetricsMode& mode, bool upper) {
  if (mode.kind != MetricsMode::Kind::kTruncate) return v;
  switch (type.id()) {
    case TypeId::kString: {
      const auto& s = v.get<std::string>();
      if (!upper) return Literal(TruncateUtf8Lower(s, mode.length));
      auto t = TruncateUtf8Upper(s, mode.length);
      if (!t) return std::nullopt;
      return Literal(*t);
    }
    case TypeId::kBinary:
    case TypeId::kFixed: {
      // Java truncates fixed like binary (ParquetUtil); a reader gets a shorter prefix as bound.
      const auto& b = v.get<iceberg::Bytes>().data;
      if (!upper) return Literal(iceberg::Bytes{TruncateBinaryLower(b, mode.length)});
      auto t = TruncateBinaryUpper(b, mode.length);
      if (!t) return std::nullopt;
      return Literal(iceberg::Bytes{*t});
    }
    default: return v;
  }
}

}  // namespace

void ParquetFileMetrics::ApplyTo(iceberg::DataFile& file) const {
  file.record_count = record_count;
  file.file_size_in_bytes = file_size_in_bytes;
  file.column_sizes = column_sizes;
  file.value_counts = value_counts;
  file.null_value_counts = null_value_counts;
  file.nan_value_counts = nan_value_counts;
  file.lower_bounds = lower_bounds;
  file.upper_bounds = upper_bounds;
  file.split_offsets = split_offsets;
}

Result<ParquetFileMetrics> MetricsFromFooter(const parquet::FileMetaData& metadata, const iceberg::Schema& schema,
                                             const MetricsConfig& config,
                                             const std::map<int32_t, FloatingStats>& floating, int64_t file_size) {
  std::unordered_map<int32_t, LeafInfo> leaves;
  for (const auto& f : schema.fields()) IndexLeaves(f, true, leaves);

  ParquetFileMetrics m;
  m.record_count = metadata.num_rows();
  m.file_size_in_bytes = file_size;
  std::map<int32_t, Literal> mins, maxs;
  std::set<int32_t> missing_stats, bad_bounds;
  try {
    const parquet::SchemaDescriptor* descr = metadata.schema();
    std::vector<int32_t> ids(static_cast<size_t>(metadata.num_columns()), -1);
    for (int c = 0; c < metadata.num_columns(); ++c) {
      ids[static_cast<size_t>(c)] = descr->Column(c)->schema_node()->field_id();
    }
    for (int rg = 0; rg < metadata.num_row_groups(); ++rg) {
      auto row_group = metadata.RowGroup(rg);
      if (row_group->num_columns() > 0) {
        auto first = row_group->ColumnChunk(0);
        int64_t start = first->data_page_offset();
        if (first->has_dictionary_page() && first->dictionary_page_offset() > 0 &&
            first->dictionary_page_offset() < start) {
          start = first->dictionary_page_offset();
        }
        m.split_offsets.push_back(start);
      }
      for (int c = 0; c < row_group->num_columns(); ++c) {
        const int32_t id = ids[static_cast<size_t>(c)];
        auto leaf = leaves.find(id);
        if (id < 0 || leaf == leaves.end()) continue;
        const MetricsMode mode = config.ModeFor(id);
        if (mode.kind == MetricsMode::Kind::kNone) continue;
        auto chunk = row_group->ColumnChunk(c);
        m.column_sizes[id] += chunk->total_compressed_size();
        m.value_counts[id] += chunk->num_values();
        std::shared_ptr<parquet::Statistics> stats = chunk->is_stats_set() ? chunk->statistics() : nullptr;
        if (!stats || !stats->HasNullCount()) {
          missing_stats.insert(id);
          continue;
        }
        m.null_value_counts[id] += stats->null_count();
        const iceberg::Type& type = *leaf->second.type;
        const bool is_floating = type.id() == TypeId::kFloat || type.id() == TypeId::kDouble;
        if (!mode.has_bounds() || !leaf->second.bounds_allowed || (is_floating && floating.count(id))) continue;
        const int64_t non_null = chunk->num_values() - stats->null_count();
        if (!stats->HasMinMax()) {
          // A chunk with values but without min/max (e.g. values over the statistics size limit)
          // leaves the file's range unknown.
          if (non_null > 0) bad_bounds.insert(id);
          continue;
        }
        internal::ChunkBounds b = internal::BoundsFromStatistics(*stats, type);
        if (!b.min || !b.max) {
          bad_bounds.insert(id);
          continue;
        }
        if (auto it = mins.find(id); it == mins.end() || b.min->Compare(it->second) < 0) mins[id] = *b.min;
        if (auto it = maxs.find(id); it == maxs.end() || b.max->Compare(it->second) > 0) maxs[id] = *b.max;
      }
    }
  } catch (const std::exception& e) {
    return Corrupt("reading Parquet footer metrics: {}", e.what());
  }
  std::sort(m.split_offsets.begin(), m.split_offsets.end());

  for (const auto& [id, fs] : floating) {
    auto leaf = leaves.find(id);
    if (leaf == leaves.end()) continue;
    const MetricsMode mode = config.ModeFor(id);
    if (mode.kind == MetricsMode::Kind::kNone) continue;
    m.nan_value_counts[id] = fs.nan_count;
    if (mode.has_bounds() && leaf->second.bounds_allowed && fs.min && fs.max) {
      mins[id] = FloatingLiteral(*fs.min, *leaf->second.type);
      maxs[id] = FloatingLiteral(*fs.max, *leaf->second.type);
    }
  }
  for (int32_t id : missing_stats) {
    m.null_value_counts.erase(id);
    mins.erase(id);
    maxs.erase(id);
  }
  for (int32_t id : bad_bounds) {
    mins.erase(id);
    maxs.erase(id);
  }
  for (const auto& [id, v] : mins) {
    const iceberg::Type& type = *leaves.at(id).type;
    auto t = Truncate(v, type, config.ModeFor(id), false);
    if (!t) continue;
    ARROW_ASSIGN_OR_RAISE(m.lower_bounds[id], t->ToBytes(type));
  }
  for (const auto& [id, v] : maxs) {
    const iceberg::Type& type = *leaves.at(id).type;
    auto t = Truncate(v, type, config.ModeFor(id), true);
    if (!t) continue;
    ARROW_ASSIGN_OR_RAISE(m.upper_bounds[id], t->ToBytes(type));
  }
  return m;
}

}  // namespace lakesync::parquet_io
