// Removing orphan files (`lakesync table remove-orphans`, docs/maintenance.md): files under a table's
// location that nothing in its metadata references — left by writers killed mid-commit, by other
// engines, or by expiry that could not delete — older than a safety window, so that the files of a
// write in progress (not referenced until its commit) are never taken. A dry run by default.
//
// Safe to kill at any point (tests/cli/test_expire_snapshots.py kills it after its first delete): it
// deletes only files no metadata references, so a rerun lists what is left and finishes the job.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/table/table.h"

namespace lakesync::maintenance {

struct RemoveOrphansOptions {
  int64_t older_than_ms = 0;  // only files last modified before this (epoch ms) are orphans
  bool apply = false;         // false: list them only
  // Time budget (budget.h): listing, a directory at a time, stops when it is spent once an orphan
  // has been found (the directories not listed are named in `unlisted_directories`), and so does
  // deleting, after at least one file (the orphans left are named in `left`). What is left is still
  // orphans for the next run. None: no limit. (Reading the metadata to know what is referenced is
  // not bounded: no file can be judged before it is complete.)
  std::optional<std::chrono::milliseconds> max_duration;
};

struct RemoveOrphansResult {
  int64_t files_listed = 0;
  std::vector<std::string> orphans;          // deleted when applied (or that would be)
  int64_t orphan_bytes = 0;
  std::vector<std::string> too_young;        // unreferenced, but inside the safety window
  std::vector<std::string> undeleted;        // deletes that failed (named, left in place)
  std::vector<std::string> left;             // not deleted: the time budget ran out
  std::vector<std::string> unlisted_directories;  // not listed: the time budget ran out
};

// Referenced: the current metadata file and those its log names, every snapshot's manifest list,
// manifests and the files they name, statistics files, a filesystem catalog's version-hint.text and
// lakesync's pending-files records (their own cleanup reads them). Errors: those of reading the
// metadata, the manifests and the listing; a failed delete is named in `undeleted`, not an error.
Result<RemoveOrphansResult> RemoveOrphans(table::Table& table, const RemoveOrphansOptions& options);

}  // namespace lakesync::maintenance
