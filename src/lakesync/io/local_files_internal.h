// Whole-file writes on the local filesystem that readers never see half done. They use POSIX
// calls directly because arrow::fs has no "create only if absent" and no atomic replace.
// `path` is the absolute local path; errors name `location`, the caller's spelling of it.
#pragma once

#include <string>
#include <string_view>

#include "lakesync/common/status.h"

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

}  // namespace lakesync::io::internal
