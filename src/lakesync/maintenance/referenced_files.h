// The files a table's snapshots reference, for the maintenance commands that delete what nothing
// references (expire-snapshots, remove-orphans): one definition of "referenced" for both.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "lakesync/iceberg/model/table_metadata.h"
#include "lakesync/io/file_io.h"
#include "lakesync/maintenance/budget.h"

namespace lakesync::maintenance {

// Adds the snapshots' manifest lists, their manifests and every file those manifests name (entries of
// any status: a file a manifest names, even as deleted, counts — it costs a little storage, never a
// file a reader may still open). `manifests_read` skips manifests already read by an earlier call.
Status CollectSnapshotFiles(const io::FileIO& io, const iceberg::TableMetadata& metadata,
                            const std::vector<iceberg::SnapshotPtr>& snapshots, std::set<std::string>& out,
                            std::set<std::string>& manifests_read);

// The same within a time budget (a step's planning, docs/maintenance.md): before reading each
// manifest list and each manifest it asks `budget`, and stops once it is spent. True when everything
// was read; false when it stopped (`out` then holds what was read so far, which is not the whole set).
Result<bool> CollectSnapshotFilesWithin(const io::FileIO& io, const iceberg::TableMetadata& metadata,
                                        const std::vector<iceberg::SnapshotPtr>& snapshots, std::set<std::string>& out,
                                        std::set<std::string>& manifests_read, const TimeBudget& budget);

// A location as a set key: "file:///t/x", "file:/t/x" and "/t/x" name the same local file.
std::string NormalizeLocation(const std::string& location);

}  // namespace lakesync::maintenance
