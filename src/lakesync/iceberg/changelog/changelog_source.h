// The Iceberg changelog source: an Iceberg table's history read as a change stream (table columns
// plus control columns), one net change set per snapshot, in snapshot order along the main branch.
//
// What one snapshot S (with parent P) yields, from the scan plans of P and S (so every delete rule of
// the spec — sequence numbers, partitions, DVs over position deletes — is the scan's own):
//   * a data file live in S but not in P: INSERT for its rows not deleted in S;
//   * a data file live in P but not in S (copy-on-write, overwrite): DELETE for its rows live in P;
//   * a data file live in both whose deletes changed (new DV, position or equality delete files):
//     DELETE for the rows live in P and deleted in S (a merged DV counts only its new positions);
//   * `replace` snapshots (compaction) yield nothing and are skipped.
// Within the snapshot, a DELETE and an INSERT of identical rows cancel (copy-on-write carry-over), and
// with keys (the schema's identifier fields, or equality_columns) a remaining DELETE and INSERT of one
// key become UPDATE_BEFORE / UPDATE_AFTER. Without keys only INSERT and DELETE appear.
//
// Memory: data files are read batch by batch (a window of files side by side, docs/architecture.md
// "Parallelism"). A snapshot with both deleted and inserted rows takes two passes: one hashes rows and
// keys (128 bits each: 35 bytes per changed row with its side), decides every row by key partition
// (change_netting.h: 40 bytes per changed row while deciding, a buffer kept for the next snapshot,
// so as large as the largest snapshot's; then 1 byte per row until it is emitted) and keeps the
// changed rows while they fit 256 MiB, the other emits (from the kept rows, or by reading the files
// again when they did not fit). The deleted positions of the data files the last
// snapshot changed are kept for the next one (one bitmap per such file). Reading several snapshots,
// the deleted positions at the range's end (one bitmap per data file) and the rows that later
// snapshots delete, while they fit 256 MiB (rows_ahead.h), are kept too. ReadAll and Follow prepare
// the next snapshot (plans, deleted positions) while one streams: one prepared snapshot at most.
#pragma once

#include <arrow/type_fwd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/iceberg/changelog/changelog_config.h"
#include "lakesync/iceberg/model/snapshot.h"
#include "lakesync/table/table.h"

namespace lakesync::changelog {

struct ChangelogOptions {
  // Start bound: a snapshot id, or a commit time (snapshots with timestamp >= start_timestamp_ms).
  std::optional<int64_t> start_snapshot_id;
  // Whether the start snapshot itself is read (Beam's from_snapshot) or only what follows it (Spark's
  // start-snapshot-id). Applies to starting_strategy latest as well (the current snapshot).
  bool start_inclusive = true;
  std::optional<int64_t> start_timestamp_ms;
  // End bound (inclusive): a snapshot id, or the last snapshot committed at or before the time.
  std::optional<int64_t> end_snapshot_id;
  std::optional<int64_t> end_timestamp_ms;
  StartingStrategy starting_strategy = StartingStrategy::kEarliest;
  // Resume point: only snapshots with a sequence number above this are read (the ordinal of the
  // sink's lakesync.source-position.<sink_id>). Overrides the start bound and strategy.
  std::optional<int64_t> after_sequence_number;
  std::vector<std::string> metadata_columns = AllMetadataColumns();
  std::vector<std::string> equality_columns;  // default: the schema's identifier fields
  std::string filter;
  std::vector<std::string> keep, drop;
  int64_t batch_rows = 64 * 1024;
  // Pass one keeps a snapshot's changed rows for pass two while they fit this many bytes; beyond it
  // pass two reads the files again (tests set it to 0 to take that path).
  int64_t cache_budget_bytes = 256LL << 20;
  // Reading several snapshots (ReadAll, Follow), rows a snapshot reads that a later snapshot of the
  // range deletes are kept while they fit this many bytes, so that a data file is decoded once per
  // range rather than once per snapshot that deletes from it (rows_ahead.h). 0: never kept.
  int64_t look_ahead_budget_bytes = 256LL << 20;
  // Batches carry _change_type as dictionary<int8, string> over the four kind names, while schema()
  // still says string. For a consumer that writes Parquet (`lakesync changes --format parquet`):
  // Arrow's writer then takes the codes as they are and computes the column's statistics from the
  // four names, where a string column costs a hash and a comparison per row (0.57 against 0.25 CPU-s
  // for 12.7M rows in pyarrow); the file is the same column, dictionary-encoded as before. Other
  // consumers must leave it off: they may rely on every batch having schema()'s types.
  bool change_type_as_dictionary = false;
};

// From the job configuration (Beam semantics: the start bound and `latest` are inclusive).
ChangelogOptions OptionsFromConfig(const ChangelogConfig& config);

// One snapshot to read, with its place in the stream.
struct PendingSnapshot {
  iceberg::SnapshotPtr snapshot;
  int32_t ordinal = 0;  // _change_ordinal: position among the non-replace snapshots read so far
};

struct SnapshotReadStats {
  int64_t files_added = 0, files_removed = 0, files_changed = 0, files_read = 0;
  int64_t files_from_kept_rows = 0;  // of files_read: deleted rows taken from rows kept ahead, not read
  int64_t inserts = 0, deletes = 0, updates = 0, carried_over = 0;
};

class ChangelogSource {
 public:
  // Checks the table (format version 2 or 3), the columns named by keep/drop/equality_columns and
  // the filter, and resolves the start bound. Errors: kInvalidArgument for v1 tables, unknown columns,
  // a malformed filter; kNotFound for an unknown start or end snapshot.
  static Result<std::unique_ptr<ChangelogSource>> Make(std::shared_ptr<table::Table> table, ChangelogOptions options);

  // Table columns (keep/drop applied) then the metadata columns, in the order asked for.
  const std::shared_ptr<arrow::Schema>& schema() const { return output_schema_; }
  const std::shared_ptr<table::Table>& table() const { return table_; }
  // The keys used to pair updates (empty: none, only INSERT/DELETE).
  const std::vector<std::string>& key_columns() const { return key_names_; }

  // The snapshots not read yet, oldest first, along the main branch up to the end bound, excluding
  // `replace` snapshots. Errors: kNotFound for an unknown end snapshot; kInvalidArgument when the start
  // is not an ancestor of the end or a snapshot in range has expired.
  Result<std::vector<PendingSnapshot>> Pending();
  // Reloads the table metadata (streaming).
  Status Refresh();
  // Whether the end bound has been read (a stream with an end bound stops there).
  bool reached_end() const { return reached_end_; }

  // The change set of one pending snapshot. Marks it read: Pending() then lists only later ones.
  // Prepare then Begin.
  Result<std::shared_ptr<arrow::RecordBatchReader>> Read(const PendingSnapshot& pending);

  // Read() in two steps, so that ReadAll and Follow prepare the next snapshot on the executor while
  // the current one streams (common/executor.h RunAhead). Prepare plans the snapshot against its
  // parent and loads the deleted positions of its changed files; it touches only the source's shared
  // reading state, never what Begin advances, so it may run on a pool thread, but preparations must
  // run one at a time and in snapshot order (each leaves the deleted positions the next one starts
  // from). Begin marks the snapshot read (in order, on the consumer's thread, when its rows are about
  // to be read, never when it is prepared) and returns its rows.
  struct Prepared {
    PendingSnapshot pending;
    std::shared_ptr<arrow::RecordBatchReader> rows;
  };
  Result<Prepared> Prepare(const PendingSnapshot& pending) const;
  // Before preparing `pending` (several snapshots read in order), loads the deleted positions of every
  // data file at the last one, so that rows read for one snapshot that a later one deletes are kept
  // (ChangelogOptions::look_ahead_budget_bytes). Runs where Prepare does, before the first. Best
  // effort: when the end cannot be loaded (a missing delete file) nothing is kept, and the snapshot
  // that needs what is missing reports it in its place.
  void LookAhead(const std::vector<PendingSnapshot>& pending) const;
  Result<std::shared_ptr<arrow::RecordBatchReader>> Begin(Prepared prepared);
  // Statistics of the snapshot last read to its end.
  const SnapshotReadStats& last_stats() const;
  // Sequence number of the last snapshot marked read (the position to persist).
  std::optional<int64_t> position() const { return position_; }

  // Called by the stream returned by ReadAll or Follow once the consumer has received every row of a
  // snapshot: inside ReadNext, when the snapshot's rows run out, before the next snapshot's first
  // batch or the end of the stream is returned. Once per snapshot, in order, also for a snapshot
  // whose change set is empty. Why there: every batch of the snapshot was handed to, and processed
  // by, the caller before it asked for the next one, so this is where a consumer records its
  // position (the CLI's --position-file) without ever recording a snapshot whose rows it has not
  // written. The snapshot is already marked read (position() is its sequence number). An error it
  // returns is returned by that ReadNext.
  using SnapshotReadCallback = std::function<Status(const PendingSnapshot&)>;

  // Every pending snapshot as one stream (batch reads). While a snapshot's rows are read the next
  // one is prepared on the executor: at most one prepared snapshot waits (its plan and deleted
  // positions). An error preparing a snapshot is returned in its place, after the earlier rows.
  Result<std::shared_ptr<arrow::RecordBatchReader>> ReadAll(SnapshotReadCallback on_snapshot_read = {});
  // A stream that never ends: reads pending snapshots, then refreshes every poll_interval and reads
  // new ones, until `stop` returns true or the end bound is read. Prepares ahead like ReadAll, within
  // the snapshots pending at each poll. `stop` is asked between two snapshots (after the first one's
  // on_snapshot_read, before the next one begins) and while waiting for the next poll, never within
  // a snapshot: a stopped stream ends after whole snapshots, so its consumer's position covers every
  // row it was handed.
  Result<std::shared_ptr<arrow::RecordBatchReader>> Follow(std::chrono::milliseconds poll_interval,
                                                           std::function<bool()> stop = {},
                                                           SnapshotReadCallback on_snapshot_read = {});

  struct Shared;

 private:
  ChangelogSource() = default;
  Result<std::vector<iceberg::SnapshotPtr>> Lineage(int64_t* end_sequence) const;
  // InvalidArgument when `pending` is at or before the position.
  Status CheckNotRead(const PendingSnapshot& pending) const;

  std::shared_ptr<table::Table> table_;
  ChangelogOptions options_;
  std::shared_ptr<Shared> shared_;
  std::shared_ptr<arrow::Schema> output_schema_;
  std::vector<std::string> key_names_;
  std::optional<int64_t> position_;   // sequence number of the last snapshot read
  std::optional<int64_t> start_after_;  // resolved start: snapshots with a higher sequence number
  bool start_resolved_ = false;
  int32_t next_ordinal_ = 0;
  bool reached_end_ = false;
};

// Opens the catalog the configuration names (or the embedded default catalog when it names none),
// loads the table and makes the source; `after_sequence_number` resumes after a committed position
// (the ordinal of the sink's lakesync.source-position.<sink_id>). Errors: those of the catalog, of
// Table::Load (kNotFound) and of ChangelogSource::Make, with the table named.
Result<std::unique_ptr<ChangelogSource>> OpenChangelogSource(const ChangelogConfig& config,
                                                             std::optional<int64_t> after_sequence_number = {});

}  // namespace lakesync::changelog
