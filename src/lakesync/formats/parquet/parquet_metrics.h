// Iceberg column metrics of a Parquet file (spec "Manifests": column_sizes … upper_bounds,
// split_offsets), computed from the file footer the way Java's ParquetUtil.footerMetrics does:
// - column_sizes: compressed bytes of every chunk of the leaf column;
// - value_counts: the chunks' num_values, so a repeated leaf counts its element slots (nulls and
//   empty/null lists included), like Java and pyiceberg;
// - null_value_counts: the chunks' statistics null counts;
// - lower/upper bounds: chunk statistics merged in Iceberg order, truncated per metrics mode; only
//   for primitive fields reached through structs alone (never inside a list or map, like Java);
// - nan_value_counts and float/double bounds: from FloatingStats the writer gathered while writing
//   (Parquet statistics carry no NaN count); without them float bounds come from the statistics.
// A field whose chunk lacks statistics loses its null count and bounds (Java does the same).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/model/metrics_config.h"
#include "lakesync/iceberg/model/schema.h"

namespace parquet {
class FileMetaData;
}

namespace lakesync::parquet_io {

// Which metrics a column records is an Iceberg table setting (iceberg/model/metrics_config.h).
using iceberg::MetricsConfig;
using iceberg::MetricsMode;
using iceberg::TruncateBinaryLower;
using iceberg::TruncateBinaryUpper;
using iceberg::TruncateUtf8Lower;
using iceberg::TruncateUtf8Upper;

struct ParquetFileMetrics {
  int64_t record_count = 0;
  int64_t file_size_in_bytes = 0;
  std::map<int32_t, int64_t> column_sizes;
  std::map<int32_t, int64_t> value_counts;
  std::map<int32_t, int64_t> null_value_counts;
  std::map<int32_t, int64_t> nan_value_counts;
  std::map<int32_t, std::string> lower_bounds;  // Appendix D bytes
  std::map<int32_t, std::string> upper_bounds;
  std::vector<int64_t> split_offsets;  // row-group start offsets, ascending

  // Copies every field above into `file` (content, path and partition are the caller's).
  void ApplyTo(iceberg::DataFile& file) const;
};

// What the writer saw in one float/double leaf: NaNs, and min/max of the other non-null values
// (-0.0 sorts before +0.0). Floats are held as doubles, which represent them exactly.
struct FloatingStats {
  int64_t nan_count = 0;
  std::optional<double> min;
  std::optional<double> max;
};

// Metrics of a file with Parquet field ids for `schema`. Leaf columns without an id, or with an id
// not in the schema, are skipped. Returns Corrupt when the footer is inconsistent.
Result<ParquetFileMetrics> MetricsFromFooter(const parquet::FileMetaData& metadata, const iceberg::Schema& schema,
                                             const MetricsConfig& config,
                                             const std::map<int32_t, FloatingStats>& floating, int64_t file_size);

}  // namespace lakesync::parquet_io
