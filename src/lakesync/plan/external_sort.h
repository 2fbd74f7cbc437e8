// Sorting more rows than fit in memory (compaction's sorted bins, docs/maintenance.md): an external
// merge sort. Rows are buffered up to a memory limit; past it the buffer is sorted with Arrow's
// sort_indices and spilled as a sorted run into the change collapser's spill files (Arrow IPC in a
// private temporary directory, spill_store_internal.h: one spill mechanism for the whole engine).
// Finish merges the runs; below the limit nothing is spilled and Finish sorts in memory.
//
// Why our own merge: Arrow has no k-way merge of sorted streams (Acero's order_by sinks everything in
// memory), and the rules of a sort key (direction, null placement, multi-column, every type) should
// stay Arrow's. So the merge never compares rows itself: each step takes one window (a spilled batch)
// of every run, finds with sort_indices the run whose window ends lowest (its last row is the step's
// boundary: no row still on disk is below it), sorts the windows together and emits the rows up to
// the boundary row. At least the whole window that ends lowest (with a stable sort) is emitted per
// step, and the invariant "every row emitted sorts no later than every row not yet emitted" holds for
// any sort, stable or not.
//
// Memory: at most kMergeFanIn runs are merged at once, each holding one window of about
// memory_limit_bytes / (2 × kMergeFanIn); more runs are merged in passes first. A step needs about
// three times the windows (their concatenation, the indices, the output), so the sorter stays within
// about twice memory_limit_bytes whatever the input size. The directory and its files are removed when
// the sorter is destroyed, on success and on every error path alike.
#pragma once

#include <arrow/compute/api_vector.h>
#include <arrow/type_fwd.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lakesync/common/status.h"

namespace lakesync::plan {

namespace internal {
class SpillDirectory;
struct SpillBucket;
}  // namespace internal

struct ExternalSortOptions {
  std::vector<arrow::compute::SortKey> keys;  // columns of the batches, by name (at least one)
  int64_t memory_limit_bytes = 256LL << 20;    // buffered rows, counted with Arrow's buffer sizes
  // Parent of the spill directory (created on the first spill). Empty: the system temporary
  // directory ($TMPDIR).
  std::string spill_directory;
  int64_t output_batch_rows = 64 * 1024;  // Finish emits batches of at most this many rows
};

class ExternalSorter {
 public:
  static constexpr int kMergeFanIn = 16;

  // Errors: InvalidArgument for no keys, a key not in `schema`, a limit below 1.
  static Result<std::unique_ptr<ExternalSorter>> Make(std::shared_ptr<arrow::Schema> schema,
                                                      ExternalSortOptions options);
  ~ExternalSorter();
  ExternalSorter(const ExternalSorter&) = delete;
  ExternalSorter& operator=(const ExternalSorter&) = delete;

  // Takes rows (of the sorter's schema). Errors: those of sorting and of writing a spill file.
  Status Add(const std::shared_ptr<arrow::RecordBatch>& batch);
  // Emits every row added, sorted by the keys, in batches of at most output_batch_rows. Call once.
  Status Finish(const std::function<Status(const std::shared_ptr<arrow::RecordBatch>&)>& emit);

  int64_t runs_spilled() const { return runs_spilled_; }   // sorted runs written (merge passes included)
  int64_t bytes_spilled() const { return bytes_spilled_; }
  // The spill directory while it exists ("" before the first spill): for tests.
  std::string spill_path() const;

 private:
  ExternalSorter(std::shared_ptr<arrow::Schema> schema, ExternalSortOptions options);
  Result<std::shared_ptr<arrow::RecordBatch>> SortBuffered();
  Status SpillBuffered();
  Result<internal::SpillBucket> WriteRun(
      const std::function<Status(const std::function<Status(const std::shared_ptr<arrow::RecordBatch>&)>&)>& produce);
  Status Merge(const std::vector<internal::SpillBucket>& runs,
               const std::function<Status(const std::shared_ptr<arrow::RecordBatch>&)>& emit);
  int64_t WindowRows() const;

  std::shared_ptr<arrow::Schema> schema_;
  ExternalSortOptions options_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> buffered_;
  int64_t buffered_bytes_ = 0;
  int64_t rows_seen_ = 0, bytes_seen_ = 0;  // for the bytes a row takes, which sizes the windows
  std::unique_ptr<internal::SpillDirectory> directory_;
  std::vector<internal::SpillBucket> runs_;
  int64_t runs_spilled_ = 0, bytes_spilled_ = 0;
};

}  // namespace lakesync::plan
