// The per-key decision over one in-memory slice of prepared changes (see change_collapser.h for the
// rules): sort by key, sequence and kind rank, then walk each key's run of changes.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/plan/change_batch_preparer_internal.h"
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

// `full`: rows of `layout.prepared_schema` (output columns, then sequence (int64) and rank (int8)),
// all valid. `narrow`: null, or UPDATE_BEFORE and DELETE rows of `layout.narrow_schema` (never
// written; a narrow row and a full row never tie on (key, sequence, rank), so putting the narrow rows
// after the full ones keeps the rule's input order). Rows come out ordered by key; delete images hold
// nulls in the columns `layout` drops. Errors: Arrow compute errors (e.g. a key type its sort kernel
// does not support).
Result<KernelResult> CollapseInMemory(const std::shared_ptr<arrow::RecordBatch>& full,
                                      const std::shared_ptr<arrow::RecordBatch>& narrow, const CollapseLayout& layout,
                                      bool upsert);

}  // namespace lakesync::plan::internal
