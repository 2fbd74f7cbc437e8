// The per-key decision over one in-memory slice of prepared changes (see change_collapser.h for the
// rules): sort by key, sequence and kind rank, then walk each key's run of changes.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/plan/change_collapser.h"

namespace lakesync::plan::internal {

struct KernelResult {
  CollapsedPart part;
  int64_t keys = 0;
};

// The rows of `prepared` (as below) in collapse order: by key, then sequence, then kind rank, rows
// with all three equal in input order (a stable sort). Arrow's SortIndices gives this order for any
// key; a single integer-like key (integers, dates, times, timestamps, durations) is sorted here
// instead, with the same result (see the .cc for why).
Result<std::vector<uint64_t>> SortChanges(const arrow::RecordBatch& prepared, const std::vector<int>& key_positions,
                                          int sequence_position, int rank_position);

// `prepared`: output columns, then sequence (int64) and rank (int8), all rows valid.
// `key_positions`: the key columns among the output columns. Rows come out ordered by key.
// Errors: Arrow compute errors (e.g. a key type its sort kernel does not support).
Result<KernelResult> CollapseInMemory(const std::shared_ptr<arrow::RecordBatch>& prepared,
                                      const std::vector<int>& key_positions,
                                      const std::shared_ptr<arrow::Schema>& output_schema, bool upsert);

}  // namespace lakesync::plan::internal
