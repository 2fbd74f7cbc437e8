// Compaction (`lakesync table compact`, docs/maintenance.md): rewrites data files that carry many
// deleted rows or are small into fewer, larger files, with their deletes applied, in one `replace`
// snapshot.
//
// Candidates are the live data files (of those that may hold rows matching `where`) whose deleted-row
// ratio is at least `min_deleted_ratio` — deletion vectors, position deletes and equality deletes all
// count — or that are smaller than `small_file_ratio` × the target size. They are grouped by partition
// (spec id + partition tuple) and bin-packed up to the target size; a bin of one file without deletes
// is left alone (rewriting it would change nothing). Each bin is read through the one data-file reader
// (iceberg/scan, deletes applied), sorted by the table's sort order when it has one (fields inside
// structs too; within sort_memory_bytes, spilling sorted runs beyond it), and written by the
// table's data writer (iceberg/write, table/append.h) in the current partition spec.
//
// Data sequence numbers (spec "Sequence Number Inheritance", "Scan Planning"): the new files are added
// with the data sequence number of the snapshot the rewrite read (Java's
// RewriteFiles.dataSequenceNumber, Spark's use-starting-sequence-number). Every equality delete with a
// number up to that one that could hit a rewritten row was applied while reading, and none of them
// applies to the new files (seq(new) < seq(E) is false); every equality delete committed later
// (concurrently, or by the next sync) has a higher number and does apply. So rewritten rows are neither
// resurrected nor escape later deletes. Any number between the rewritten files' own and the read
// snapshot's would do; the read snapshot's is the one that needs no per-bin bookkeeping.
//
// Delete files removed with the rewritten data files: their deletion vectors (always); position delete
// files all of whose live target files are rewritten; equality delete files that no live data file
// outside the rewrite could still be affected by (same partition or a global delete, and an older data
// sequence number). Others stay: they no longer match a rewritten row, so they are harmless.
//
// Concurrency: the commit checks that every rewritten file is still live and gained no new deletion
// vector or position delete file since the plan (an equality delete committed meanwhile is fine, see
// above); otherwise the files written are deleted and the rewrite is planned again from the new state,
// at most `max_attempts` times, then given up with kCommitConflict. A kill -9 midway leaves only
// files recorded as pending (table/pending_files.h), which the next writer or remove-orphans deletes.
//
// v3 row lineage (spec "Row Lineage"): every rewritten row keeps its `_row_id` and
// `_last_updated_sequence_number` (the rows are unchanged), read through the one reader's lineage
// columns (inherited values made explicit) and written as the reserved columns of the new files.
// The new files still get a first_row_id when committed (the table's next-row-id advances by their
// rows), but no row of theirs inherits it: every stored _row_id is set.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/table/table.h"

namespace lakesync::maintenance {

struct CompactOptions {
  std::string where;  // only files that may hold rows matching this filter (`scan --filter` syntax)
  // Default: the table property write.target-file-size-bytes, else 512 MiB (Iceberg's default).
  std::optional<int64_t> target_file_size;
  // Files whose deleted rows are at least this fraction of their rows are rewritten (Iceberg's
  // rewrite_data_files delete-ratio-threshold default, 0.3).
  double min_deleted_ratio = 0.3;
  // Files smaller than this fraction of the target are rewritten (Iceberg's min-file-size-bytes
  // default, 75% of the target).
  double small_file_ratio = 0.75;
  // At most this many input files per run (0: no limit): bounds one run's work (the job's
  // maintenance block). Whole bins are taken, in plan order, until the next would pass it.
  int64_t max_files = 0;
  // Time budget (budget.h): bins are rewritten in plan order until it is spent (at least one bin, so
  // every run makes progress); the bins finished are committed, the rest are left for the next run
  // (bins_left, files_left). None: no limit. Zero: exactly one bin.
  std::optional<std::chrono::milliseconds> max_duration;
  // Memory for sorting one bin by the table's sort order (rows decoded, counted with Arrow's buffer
  // sizes): a bin beyond it is sorted in runs spilled to temporary files and merged
  // (plan/external_sort.h), so a sorted compaction needs about twice this, whatever the bin's size.
  int64_t sort_memory_bytes = 256LL << 20;
  std::string sort_spill_directory;  // parent of the spill directory; empty: the system's ($TMPDIR)
  bool dry_run = false;  // plan only: write nothing, commit nothing
  int max_attempts = 4;  // plans made when a concurrent commit touched the rewritten files
};

struct CompactResult {
  int64_t candidate_files = 0;      // files that qualified before bins of one clean file were dropped
  int64_t rewritten_data_files = 0;
  int64_t rewritten_bytes = 0;
  int64_t rewritten_records = 0;    // rows the rewritten files held (deleted ones included)
  int64_t removed_delete_files = 0; // deletion vectors, position and equality delete files removed
  int64_t added_data_files = 0;     // (dry run: 0)
  int64_t added_bytes = 0;
  int64_t written_records = 0;      // live rows written (dry run: 0)
  int64_t bins = 0;                 // bins rewritten (dry run: planned)
  int64_t bins_left = 0;            // bins planned but not rewritten: the time budget ran out
  int64_t files_left = 0;           // their files
  int64_t sort_spilled_runs = 0;    // sorted runs spilled to temporary files (bins beyond sort_memory_bytes)
  std::optional<int64_t> snapshot_id;  // the replace snapshot (none when nothing was rewritten)
  int attempts = 0;
  std::vector<std::string> rewritten_files;  // paths, in plan order
};

// Errors: kInvalidArgument for a malformed `where` or option (naming it); those of reading and writing
// (naming the file) with nothing committed and the files written deleted; kCommitConflict when every
// attempt met a concurrent change to the rewritten files.
Result<CompactResult> Compact(const std::shared_ptr<table::Table>& table, const CompactOptions& options);

}  // namespace lakesync::maintenance
