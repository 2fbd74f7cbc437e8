// Pending files: what a write attempt is about to create, recorded before it creates it, so that the
// files of an attempt that never committed (kill -9, a failpoint, a power cut, a lost race whose
// cleanup was itself interrupted) can be found and deleted later instead of piling up as orphans.
//
// One record per attempt, a small JSON document in "<metadata dir>/lakesync-pending/<uuid>.json":
//
//   {"host": "...", "boot-id": "...", "pid": 4242, "started-ms": 1767225600000,
//    "token": "<uuid>", "directories": ["s3://b/t/metadata", "s3://b/t/data"],
//    "files": ["s3://b/t/data/region=eu/...parquet", "s3://b/t/metadata/00002-...metadata.json", ...]}
//
// A file is named by the record in one of two ways, and is created only once the record naming it is
// durable (FileIO::WriteAll: synced and renamed into place on local disks, one whole object on stores):
//   - by token: its name holds the attempt's token and it lies directly in one of `directories` (the
//     table's metadata directory and data location). The first write of the record already says so,
//     so such files cost no further record write. The attempt names files through NewStem()
//     (Table::NewFileStem): manifests, manifest lists, deletion-vector files and the data and delete
//     files of unpartitioned tables.
//   - by location, in `files`: any other file (data files in partition directories, the table
//     metadata file the catalog names, files named elsewhere). Record() adds the location and rewrites
//     the record before the file is created.
// Why tokens: the record rewrite was two fsyncs (file, directory) before every manifest, manifest list
// and deletion-vector file, all on the commit's serial path; the token names them all in the one write
// that starts the attempt. A token is a fresh UUID, so no other file's name holds it.
// Finish() deletes the record once the commit is settled (committed, or failed with its files deleted).
// A commit whose outcome is unknown keeps its record.
//
// CleanAbandonedFiles, run by every lakesync writer before it writes to a table, looks at records
// whose attempt is over — its process is gone from this machine (same host and boot id, pid not
// running), the machine has rebooted since, or the record is older than a grace period (attempts
// on other machines cannot be checked) — and deletes what they name (the listed `files`, and what a
// listing of each of `directories` finds holding the token) unless the table references it: when one
// of those is the manifest list of a snapshot, the attempt committed, and the files that snapshot added
// (its manifest list, new manifests and their added files) stay.
//
// The table metadata file a metastore catalog writes just before its compare-and-swap is named by the
// catalog; SnapshotUpdate lends the catalog a recorder for it (catalog/metadata_files.h), and it is
// referenced when it is the table's current metadata or in its metadata log.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/iceberg/model/table_metadata.h"
#include "lakesync/io/file_io.h"
#include "lakesync/table/table.h"

namespace lakesync::table {

class PendingFiles {
 public:
  // Writes an empty record for a new attempt on the table with this metadata.
  // Errors: those of FileIO::WriteAll, with the record's location.
  static Result<std::shared_ptr<PendingFiles>> Start(std::shared_ptr<io::FileIO> io,
                                                     const iceberg::TableMetadata& metadata);
  ~PendingFiles();

  // Names `location` in the record: nothing to do when its token already does (Covers), else adds
  // it and rewrites the record. Call before creating the file. Safe from many threads.
  // Errors: those of FileIO::WriteAll (the caller must not create the file then).
  Status Record(const std::string& location);

  // "<token>-<n>", n counting up over the attempt: a distinct name stem for each file (or for each
  // writer, which adds its own counter), covered by the token in the record's directories.
  std::string NewStem();
  // Whether the record names `location` by its token (see the top of this file).
  bool Covers(const std::string& location) const;

  // Deletes the record: the attempt's outcome is settled. Errors: those of FileIO::Delete.
  Status Finish();

  const std::string& location() const { return location_; }
  std::vector<std::string> files() const;

 private:
  PendingFiles(std::shared_ptr<io::FileIO> io, std::string location);
  Status WriteLocked();

  std::shared_ptr<io::FileIO> io_;
  std::string location_;
  // Set before the first write of the record and never changed: read without the mutex.
  std::string token_;
  std::vector<std::string> directories_;
  std::atomic<int64_t> next_stem_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> files_;
  int64_t started_ms_ = 0;
  bool finished_ = false;
};

// The directory holding the records of a table.
std::string PendingFilesDirectory(const iceberg::TableMetadata& metadata);

struct AbandonedFilesCleanup {
  int64_t records = 0;        // records of finished-but-abandoned attempts handled
  int64_t files_deleted = 0;  // files those records named that the table does not reference
  int64_t files_kept = 0;     // named files the table references (their attempt committed)
  int64_t records_left = 0;   // records of attempts that may still be running
};

struct CleanupOptions {
  // Records of attempts on other machines (or whose process cannot be checked) are treated as
  // abandoned only after this long: no write attempt takes that long.
  int64_t grace_ms = int64_t{6} * 3600 * 1000;
};

// Deletes the files of abandoned attempts on the table whose current metadata is `metadata`, read from
// `metadata_location` (see the top of this file), and their records. A file that cannot be deleted keeps its record for the next
// run. Errors: reading records or manifest lists (IOError, Corrupt); deleting is best effort.
Result<AbandonedFilesCleanup> CleanAbandonedFiles(const io::FileIO& io, const iceberg::TableMetadata& metadata,
                                                  const std::string& metadata_location, CleanupOptions options = {});

// What every writer does around a write attempt on `table`: clean abandoned attempts (a failure to
// clean is logged, never fatal: the files stay recorded), then start a record and set it on the table
// so that OpenOutput/WriteFile record each file. Errors: starting the record (nothing is written).
Status BeginWriteAttempt(Table& table);
// Settles the attempt: the record goes unless `outcome` is kCommitStateUnknown (its files may belong
// to the table now; the next writer decides). The caller has deleted the files of a failed attempt.
void EndWriteAttempt(Table& table, const Status& outcome);

}  // namespace lakesync::table
