// Rewriting manifests (`lakesync table rewrite-manifests`, docs/maintenance.md): a table kept in sync
// by CDC gains a data manifest and a delete manifest per commit, and every scan plan opens them all.
// The current snapshot's small manifests (below commit.manifest.target-size-bytes, Iceberg's 8 MiB
// default) are rewritten into as few as fit the target, one group per partition spec and content
// (data, deletes), entries ordered by partition so that partition summaries prune well. One `replace`
// snapshot with the same files: every live entry is carried as EXISTING with its snapshot id, data
// and file sequence numbers (and v3 first_row_id); DELETED entries (history) are dropped. The commit
// goes through table::SnapshotUpdate (its one retry loop plans the rewrite again on a new state).
#pragma once

#include <cstdint>
#include <optional>

#include "lakesync/table/table.h"

namespace lakesync::maintenance {

struct RewriteManifestsOptions {
  // Default: the table property commit.manifest.target-size-bytes, else 8 MiB (Iceberg's).
  std::optional<int64_t> target_size_bytes;
  bool dry_run = false;
};

struct RewriteManifestsResult {
  int64_t manifests_before = 0;
  int64_t manifests_rewritten = 0;  // replaced by new ones
  int64_t manifests_created = 0;    // (dry run: the estimate)
  int64_t manifests_kept = 0;       // large enough already
  int64_t entries = 0;              // live entries carried into the new manifests
  std::optional<int64_t> snapshot_id;
};

// Errors: those of reading manifests and of committing.
Result<RewriteManifestsResult> RewriteManifests(const std::shared_ptr<table::Table>& table,
                                                const RewriteManifestsOptions& options);

}  // namespace lakesync::maintenance
