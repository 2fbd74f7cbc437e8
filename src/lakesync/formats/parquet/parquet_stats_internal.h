// Parquet column-chunk statistics as Iceberg values. Shared by the writer's metrics (bounds come from
// the footer, as Java's ParquetUtil.footerMetrics takes them) and the reader's row-group filter.
#pragma once

#include <optional>

#include "lakesync/iceberg/model/literal.h"

namespace parquet {
class Statistics;
}

namespace lakesync::parquet_io::internal {

struct ChunkBounds {
  std::optional<iceberg::Literal> min;
  std::optional<iceberg::Literal> max;
};

// The chunk's min/max as literals of Iceberg type `type`, or nothing where the statistics have no
// min/max, or the Parquet type's order is not Iceberg's (INT96, unsigned integers, unknown sort
// order, a decimal of another scale, a mismatched physical type). Timestamps and times are
// converted to the Iceberg unit (ms → µs exact; ns → µs floored, which keeps a valid bound).
ChunkBounds BoundsFromStatistics(const parquet::Statistics& stats, const iceberg::Type& type);

}  // namespace lakesync::parquet_io::internal
