#include "lakesync/formats/parquet/row_group_units.h"

#include <parquet/metadata.h>

#include <algorithm>

namespace lakesync::parquet_io {

int ReadAheadWindow(const parquet::FileMetaData& metadata, int64_t budget_bytes) {
  const int groups = metadata.num_row_groups();
  if (groups <= 1) return 0;
  int64_t largest = 1;
  for (int g = 0; g < groups; ++g) largest = std::max(largest, metadata.RowGroup(g)->total_byte_size());
  const int64_t fit = budget_bytes / largest;
  if (fit < 2) return 0;
  EnsureThreadsConfigured();
  return static_cast<int>(std::min<int64_t>(OrderedStream<int>::DefaultWindow(), fit));
}

}  // namespace lakesync::parquet_io
