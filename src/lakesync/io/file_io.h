// FileIO: the one way lakesync reads and writes files, on local disks and object stores alike
// (file://, s3://, s3a://, gs://, abfs(s)://). It maps each location to an arrow::fs filesystem,
// made on first use from the catalog properties and cached per scheme and bucket.
//
// Every error names the location and carries an ErrorKind: kNotFound for a missing file or bucket
// (callers rely on KindOf(status) == ErrorKind::kNotFound to tell "missing" from "broken"),
// kAlreadyExists, kForbidden, kUnauthenticated, kUnavailable (the SDKs already retried it), kIO
// for everything else. Transient object-store failures are retried inside the AWS and GCS SDKs;
// reads (OpenInput's files, ReadAll) are also retried here when they still fail with kUnavailable,
// since some transient failures reach us unretried (reads are idempotent; writes are not retried).
//
// A FileIO is safe to use from many threads at once.
#pragma once

#include <arrow/filesystem/type_fwd.h>
#include <arrow/io/type_fwd.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/io/location.h"

namespace lakesync::io {

class FileSyncs;  // file_syncs.h

struct FileInfo {
  // The entry's location, spelled like the location it was asked for (List keeps the prefix of
  // the listed directory: listing "file:/t" yields "file:/t/x", listing "/t" yields "/t/x").
  std::string location;
  int64_t size = -1;      // bytes; -1 for directories and where the store does not say
  int64_t mtime_ms = -1;  // milliseconds since the epoch; -1 where unknown
  bool is_dir = false;
};

// Every property FileIO::Make reads (the keys object_stores_internal.h lists, for S3, GCS and
// Azure), sorted. Catalog configurations accept these next to their own keys; anything else is a
// typo or a key lakesync does not honour, and is refused by the catalog's validation.
const std::vector<std::string>& FileIOPropertyKeys();

class FileIO {
 public:
  // `properties` are Iceberg catalog properties; the keys each store reads are listed in
  // object_stores_internal.h (s3.endpoint, s3.access-key-id, s3.secret-access-key,
  // s3.session-token, s3.region, s3.path-style-access, s3.anonymous, gcs.endpoint /
  // gcs.service.host, gcs.oauth2.token, gcs.no-auth, gcs.project-id, adls.*). Unknown keys are
  // ignored here: the catalog owns validation. Environment fallbacks: AWS_* variables for S3,
  // STORAGE_EMULATOR_HOST for GCS; they are read now, not on each call.
  // Errors: InvalidArgument naming the property when a known key has a malformed value.
  static Result<std::shared_ptr<FileIO>> Make(std::map<std::string, std::string> properties = {});
  // The same, and http:// and https:// locations (a Delta Sharing server's signed URLs) are read
  // through `http_filesystem`, which gets the whole URL as its path. Without one they are
  // Unsupported, as ParseLocation says.
  static Result<std::shared_ptr<FileIO>> Make(std::map<std::string, std::string> properties,
                                              std::shared_ptr<arrow::fs::FileSystem> http_filesystem);

  ~FileIO();
  FileIO(const FileIO&) = delete;
  FileIO& operator=(const FileIO&) = delete;

  // Opens a file for random access. Errors: NotFound when it does not exist.
  Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenInput(const std::string& location) const;
  // As above, trusting a size the caller already knows (from a manifest or a listing), which saves
  // object stores a metadata request.
  Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenInput(const std::string& location,
                                                                 int64_t size) const;

  // Opens a stream that creates or overwrites the file; local parent directories are created.
  // On object stores the object appears only when Close() succeeds, so check Close()'s status.
  // A local file is synced when its stream is closed; with `deferred_syncs` the sync only starts there,
  // on the IO executor, and deferred_syncs->Wait() reports it (file_syncs.h): call it before anything
  // names the file.
  Result<std::shared_ptr<arrow::io::OutputStream>> OpenOutput(
      const std::string& location, std::shared_ptr<FileSyncs> deferred_syncs = nullptr) const;

  // Reads a whole file. Errors: NotFound when it does not exist.
  Result<std::string> ReadAll(const std::string& location) const;

  // Creates or overwrites a file with `data`. Local files are replaced atomically (temporary file
  // and rename), so readers see the old or the new content; object stores replace atomically by
  // nature.
  Status WriteAll(const std::string& location, std::string_view data) const;

  // Creates the file only if it does not exist yet. Errors: AlreadyExists if it does.
  // Local filesystems: atomic; of two concurrent writers exactly one wins (temporary file, then
  // renameat2(RENAME_NOREPLACE) or link()). Object stores: BEST EFFORT ONLY — an existence check
  // followed by a write, because arrow::fs exposes neither S3's If-None-Match nor GCS's
  // ifGenerationMatch=0. Two writers racing there can both succeed (the last one wins); commit
  // protocols on object stores must get their atomicity from the catalog, not from this call.
  Status WriteNew(const std::string& location, std::string_view data) const;

  // True for an existing file or directory (on object stores: a key or a non-empty prefix).
  Result<bool> Exists(const std::string& location) const;

  // Errors: NotFound when nothing exists at the location.
  Result<FileInfo> Stat(const std::string& location) const;

  // Entries under a directory, sorted by location; subdirectories are listed as entries with
  // is_dir = true (and their contents too when `recursive`). A missing directory lists as empty.
  // Errors: IOError when the location is a file.
  Result<std::vector<FileInfo>> List(const std::string& dir_location, bool recursive = false) const;

  // Deletes a file; a missing file is fine. Errors: IOError for a directory.
  Status Delete(const std::string& location) const;

  // Deletes a directory and everything below it; a missing directory is fine.
  // Errors: InvalidArgument for a filesystem root or a whole bucket, which this never deletes.
  Status DeleteDir(const std::string& location) const;

  // The Arrow filesystem and path behind a location, for code that hands files to Arrow readers
  // and writers (Parquet datasets) directly. Errors: as ParseLocation, or when the filesystem
  // cannot be made (bad credentials configuration, unsupported store).
  struct Resolved {
    std::shared_ptr<arrow::fs::FileSystem> filesystem;
    std::string path;
    StorageKind kind = StorageKind::kLocal;
  };
  Result<Resolved> Resolve(const std::string& location) const;

  const std::map<std::string, std::string>& properties() const;

 private:
  struct Impl;
  explicit FileIO(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lakesync::io
