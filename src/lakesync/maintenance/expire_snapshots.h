// Expiring old snapshots (`lakesync table expire-snapshots`, docs/maintenance.md): removes the
// snapshots a table no longer needs from its metadata in one commit, then deletes the files only they
// referenced (manifest lists, manifests, data and delete files). What is kept, whatever the options:
// the current snapshot, the snapshot every branch and tag points at, the newest `retain_last` of each
// branch's ancestry, and every snapshot newer than `older_than_ms`. lakesync's progress positions
// (`lakesync.source-position.<sink_id>` in snapshot summaries) are copied into the table properties
// in the same commit, so a job resumes exactly after the snapshot that carried its position expired.
//
// Killed at any point (tests/cli/test_expire_snapshots.py kills it at each failpoint below): before
// the commit nothing changed; after it, the table is already right and the files not yet deleted are
// orphans (referenced by no metadata), which remove-orphans deletes.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/table/table.h"

namespace lakesync::maintenance {

struct ExpireSnapshotsOptions {
  // Snapshots committed before this time (epoch ms) may expire. Default: now minus the table
  // property history.expire.max-snapshot-age-ms (Iceberg's default: 5 days).
  std::optional<int64_t> older_than_ms;
  // How many of each branch's newest snapshots always stay. Default: the table property
  // history.expire.min-snapshots-to-keep (Iceberg's default: 1).
  std::optional<int32_t> retain_last;
  bool dry_run = false;       // plan only: no commit, no file deleted
  // Time budget (budget.h) for reading the manifests and deleting the files: the commit always
  // happens; reading the manifests (to find the files only expired snapshots referenced) stops when
  // the budget is spent (files_unknown: those not found are orphans for remove-orphans), and so does
  // deleting, after at least one file (an expired snapshot's manifest list needs no reading). What is
  // found but not deleted is named in left_files: orphans too. None: no limit.
  std::optional<std::chrono::milliseconds> max_duration;
  int max_attempts = 4;       // a concurrent commit makes the plan stale: reload and plan again
  // Table properties set by the same commit (a job's maintenance records when expiry last ran).
  std::map<std::string, std::string> set_properties;
};

struct ExpireSnapshotsResult {
  std::vector<int64_t> expired_snapshot_ids;  // oldest first
  int64_t retained_snapshots = 0;
  std::vector<std::string> deleted_files;     // (dry run: the files that would be deleted)
  std::vector<std::string> undeleted_files;   // deletes that failed after the commit (kept, named)
  std::vector<std::string> left_files;        // not deleted: the time budget ran out (orphans now)
  // The time budget ran out while reading the manifests: some files only the expired snapshots
  // referenced were not found, are not in deleted/left_files, and are orphans for remove-orphans.
  bool files_unknown = false;
  std::vector<std::string> positions_kept;    // sink ids whose position was copied to the properties
};

// Errors: those of loading and committing (kCommitConflict when every attempt met a concurrent
// commit); a failure to delete a file after the commit is not an error (the file is named in
// undeleted_files: the table is already right, the file is an orphan for remove-orphans).
Result<ExpireSnapshotsResult> ExpireSnapshots(table::Table& table, const ExpireSnapshotsOptions& options);

}  // namespace lakesync::maintenance
