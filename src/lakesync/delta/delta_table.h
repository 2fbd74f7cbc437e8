// A Delta Lake table read from its storage path: the API the CLI and the sync-job engine use.
//
//   auto io = io::FileIO::Make(properties);                       // s3.*, gcs.*, adls.* keys
//   ARROW_ASSIGN_OR_RAISE(auto table, DeltaTable::Open("s3://bucket/t", *io));
//   int64_t latest = table->latest_version();
//   ARROW_ASSIGN_OR_RAISE(auto rows, table->ScanSnapshot({.version = latest}));      // initial import
//   ARROW_ASSIGN_OR_RAISE(auto changes, table->ReadChanges({.start_version = 5}));   // change stream
//
// Snapshots apply deletion vectors and fill in partition values; column mapping (name and id) is
// undone so columns carry logical names. The change stream is the Change Data Feed of
// docs/delta.md: table columns, then the metadata columns asked for (_change_type with Delta's
// values insert/delete/update_preimage/update_postimage, _commit_version int64, _commit_timestamp
// timestamp[us, UTC]), in commit order, one file at a time. The whole range's log is validated
// (and its deletion vectors read) before the reader is returned, so a bad range fails before any
// row is emitted.
//
// Error kinds: InvalidArgument for a bad range, version or timestamp; NotFound for a missing table,
// commit, data, change data or deletion-vector file; Corrupt for a file that is not what the log
// says; Unsupported for reader features lakesync does not implement and catalog-managed tables.
// Messages name the table, version and file.
#pragma once

#include <arrow/record_batch.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/delta/log.h"
#include "lakesync/delta/schema.h"
#include "lakesync/io/file_io.h"

namespace lakesync::delta {

// "2024-05-01T12:00:00Z" (ISO-8601, offset optional meaning UTC, date alone meaning midnight UTC) or
// epoch milliseconds ("1714564800000"). Returns InvalidArgument naming the text.
Result<int64_t> ParseTimestampMillis(std::string_view text);

struct SnapshotScanOptions {
  std::optional<int64_t> version;            // default: latest
  std::optional<int64_t> as_of_timestamp_ms; // the last version committed at or before this time
  std::vector<std::string> select;           // logical column names; empty: all
  std::optional<int64_t> limit;
};

struct ChangeFeedOptions {
  // Exactly one start bound; at most one end bound (default: the latest version). Inclusive.
  std::optional<int64_t> start_version;
  std::optional<int64_t> start_timestamp_ms;  // first version committed at or after
  std::optional<int64_t> end_version;
  std::optional<int64_t> end_timestamp_ms;    // last version committed at or before
  // Metadata columns appended after the table columns, in this order.
  std::vector<std::string> metadata_columns = {"_change_type", "_commit_version", "_commit_timestamp"};
};

class DeltaTable {
 public:
  // Lists the log of the table at `location` (local path, file://, s3://, gs://, abfs(s)://).
  // Errors: NotFound when there is no Delta log there.
  static Result<std::shared_ptr<DeltaTable>> Open(const std::string& location, std::shared_ptr<io::FileIO> io);
  // The same with a FileIO made from object-store properties (s3.*, gcs.*, adls.*; see FileIO::Make).
  // Errors: also InvalidArgument for a malformed property.
  static Result<std::shared_ptr<DeltaTable>> Open(const std::string& location,
                                                  const std::map<std::string, std::string>& io_properties);

  const std::string& location() const { return listing_.table_root; }
  int64_t latest_version() const { return listing_.LatestVersion(); }
  const LogListing& listing() const { return listing_; }
  const std::shared_ptr<io::FileIO>& io() const { return io_; }

  // Re-lists the log (a continuous job polls with this).
  Status Refresh();

  // The commit timestamp (ms) lakesync uses for a version: the In-Commit Timestamp from its
  // enablement version on, else the commit file's modification time made monotonic (Spark's rule).
  Result<int64_t> CommitTimestamp(int64_t version);

  // Timestamp → version. AtOrAfter: the first version committed at or after ts (InvalidArgument
  // when ts is after the last commit). AtOrBefore: the last version committed at or before ts
  // (InvalidArgument when ts is before the earliest available commit).
  Result<int64_t> VersionAtOrAfter(int64_t ts_ms);
  Result<int64_t> VersionAtOrBefore(int64_t ts_ms);

  // The table schema at a version (logical output columns, read layout).
  Result<TableSchema> SchemaAt(int64_t version);

  // Rows of the snapshot, deletion vectors applied, partition values filled in.
  Result<std::shared_ptr<arrow::RecordBatchReader>> ScanSnapshot(const SnapshotScanOptions& options);

  // The Change Data Feed for the range; see the file comment.
  Result<std::shared_ptr<arrow::RecordBatchReader>> ReadChanges(const ChangeFeedOptions& options);

 private:
  DeltaTable(std::shared_ptr<io::FileIO> io, LogListing listing) : io_(std::move(io)), listing_(std::move(listing)) {}
  // Commit timestamps for versions [from, to], computed with the monotonic window starting at
  // max(earliest, from - 100) as Spark does.
  Result<std::vector<int64_t>> CommitTimestamps(int64_t from, int64_t to);
  // Modification times of commits [from, to] made monotonic over Spark's window (no ICT).
  Result<std::vector<int64_t>> MonotonicMtimes(int64_t from, int64_t to) const;
  Result<std::optional<int64_t>> IctOf(int64_t version);
  Status LoadIctConfig();

  std::shared_ptr<io::FileIO> io_;
  LogListing listing_;
  bool ict_loaded_ = false;
  bool ict_enabled_ = false;
  int64_t ict_from_version_ = 0;
};

}  // namespace lakesync::delta
