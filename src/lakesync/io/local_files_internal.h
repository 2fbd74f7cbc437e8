// Whole-file writes on the local filesystem that readers never see half done. They use POSIX
// calls directly because arrow::fs has no "create only if absent" and no atomic replace.
// `path` is the absolute local path; errors name `location`, the caller's spelling of it.
#pragma once

#include <arrow/io/interfaces.h>

#include <memory>
#include <string>
#include <string_view>

#include "lakesync/common/status.h"
#include "lakesync/io/file_syncs.h"

namespace lakesync::io::internal {

// Writes `data` to a temporary file next to `path` (creating parent directories), syncs it, and
// moves it into place only if `path` does not exist: renameat2(RENAME_NOREPLACE), or link() +
// unlink() on filesystems without it. Of two concurrent callers exactly one succeeds.
// Errors: AlreadyExists when `path` exists; Unsupported when the filesystem offers neither
// primitive; IOError (or Forbidden) naming the path otherwise.
enum class NoReplaceMethod {
  kAuto,      // renameat2(RENAME_NOREPLACE), falling back to link() where unsupported
  kLinkOnly,  // link() + unlink() only; lets tests cover the fallback on any filesystem
};
Status WriteNewLocalFile(const std::string& path, std::string_view data, std::string_view location,
                         NoReplaceMethod method = NoReplaceMethod::kAuto);

// Writes `data` to a temporary file next to `path` and renames it over `path`, so a reader sees
// the old content or the new, never a torn file.
// Errors: IOError (or Forbidden) naming the path.
Status ReplaceLocalFile(const std::string& path, std::string_view data, std::string_view location);

// Wraps a stream writing the local file `path` so that a successful Close() also makes the file's
// content and its directory entry durable (fsync of the file, then of its directory), as every
// whole-file write above does. Why: a commit publishes metadata (synced) that names the data, delete
// and deletion-vector files streamed through this; without the sync a power loss after the commit
// could leave the table naming files that are empty or torn. Close() reports a failed sync as an
// IOError naming `location`; the failpoint kFailpointLocalSync fires it on purpose. With `deferred`,
// Close() only starts the sync there and its outcome is reported by deferred->Wait() (file_syncs.h).
std::shared_ptr<arrow::io::OutputStream> SyncOnClose(std::shared_ptr<arrow::io::OutputStream> stream,
                                                     std::string path, std::string location,
                                                     std::shared_ptr<FileSyncs> deferred = nullptr);

}  // namespace lakesync::io::internal
