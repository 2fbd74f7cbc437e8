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

// A path as a log writes it (URI, percent-encoded, relative to the table root or absolute) as a
// location FileIO opens; http(s) URLs are kept as they are.
Result<std::string> ResolveLogPath(const std::string& table_root, const std::string& log_path);

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
  // Spark's rule (the default): every version in the range must have delta.enableChangeDataFeed on.
  // false: versions without it are read from their add/remove actions and deletion vectors as well
  // (exact for appends and deletion-vector deletes; a copy-on-write rewrite shows as deletes of the
  // whole old file and inserts of the whole new one, updates as delete + insert). A Delta Sharing
  // server uses this to share a change feed of tables that record none (docs/sharing.md).
  bool require_change_data_feed = true;
  // PlanChanges only: keep every data-change action of each commit (add and remove with
  // dataChange=true, cdc) instead of the change rule's selection, and allow schema changes inside the
  // range (a sharing server's startingVersion query, whose client applies the rule itself).
  bool keep_all_file_actions = false;
};

// One commit of a change feed: the file actions its changes come from (SelectChangeFiles), its
// commit timestamp, and the protocol and metadata it sets, if any.
struct CommitChanges {
  int64_t version = 0;
  int64_t timestamp_ms = 0;
  std::vector<FileAction> files;
  std::optional<Protocol> protocol;
  std::optional<Metadata> metadata;
};

// A change feed's range, validated, and what each commit in it contributes. Made by
// DeltaTable::PlanChanges, or by a Delta Sharing client from a server's answer; read by ReadChangePlan.
struct ChangePlan {
  std::string table_root;  // resolves relative paths and 'u' deletion vectors
  int64_t start_version = 0;
  int64_t end_version = -1;  // < start_version: an empty window (no rows, the schema at end)
  Protocol protocol;         // at start_version
  Metadata metadata;
  std::vector<CommitChanges> commits;  // in version order
};

// The change-data rule of one commit (delta.md §4.2): its cdc files when it has any; else its add and
// remove actions with dataChange=true; nothing for a MERGE whose metrics say it changed no rows.
std::vector<FileAction> SelectChangeFiles(const std::vector<FileAction>& files, const std::optional<CommitInfo>& info);

struct ChangeReadOptions {
  std::vector<std::string> metadata_columns = {"_change_type", "_commit_version", "_commit_timestamp"};
  // Open every file's footer (and read every deletion vector) before returning, so a missing file
  // fails before the first row. Off for files behind signed URLs, which would be fetched twice.
  bool check_files_first = true;
};

// The rows of a plan: cdc files as they are, adds as inserts and removes as deletes (with their
// deletion vectors applied), and a file removed and re-added with another deletion vector as the rows
// whose deletion state changed. Errors as DeltaTable::ReadChanges.
Result<std::shared_ptr<arrow::RecordBatchReader>> ReadChangePlan(std::shared_ptr<io::FileIO> io, const ChangePlan& plan,
                                                                 const ChangeReadOptions& options);

// The rows of a snapshot given its protocol, metadata and live files (deletion vectors applied,
// partition values filled in, logical column names). `version` only names the snapshot in errors.
Result<std::shared_ptr<arrow::RecordBatchReader>> ReadSnapshotFiles(std::shared_ptr<io::FileIO> io,
                                                                    const std::string& table_root,
                                                                    const Protocol& protocol, const Metadata& metadata,
                                                                    const std::vector<FileAction>& files,
                                                                    const SnapshotScanOptions& options, int64_t version);

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

  // The range of ReadChanges resolved and validated (same errors), with each commit's change files
  // and timestamp, without reading any data file. ReadChanges is PlanChanges + ReadChangePlan.
  Result<ChangePlan> PlanChanges(const ChangeFeedOptions& options);

  // The version a snapshot read with these options would read (latest, a version, or the last one
  // committed at or before a timestamp). Errors: InvalidArgument for a version that does not exist.
  Result<int64_t> ResolveSnapshotVersion(const SnapshotScanOptions& options);

  // Protocol, metadata and (with_files) the live files at a version, after checking that lakesync can
  // read the protocol. Errors as ReplayLog and CheckReadable.
  Result<LogState> StateAt(int64_t version, bool with_files);

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
