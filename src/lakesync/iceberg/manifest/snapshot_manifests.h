// The manifests of a snapshot, whichever way its metadata lists them: a manifest list (every v2/v3
// snapshot and most v1 ones), or, for v1 snapshots written before manifest lists existed, the
// manifest paths inline in the table metadata ("manifests"). Scan planning, commits and the
// changelog all take a snapshot's manifests from here.
#pragma once

#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/model/snapshot.h"
#include "lakesync/iceberg/model/table_metadata.h"
#include "lakesync/io/file_io.h"

namespace lakesync::iceberg {

// For inline manifests each manifest file's header is read to learn its partition spec id
// ("partition-spec-id"; the default spec when absent, as in the oldest v1 writers); they hold data
// files, carry sequence number 0 (v1) and were added by `snapshot`, and their file and row counts
// are counted from their entries (a later commit lists them in a manifest list). Errors: those of reading the manifest list or the manifests'
// headers, naming the file and the snapshot.
Result<std::vector<ManifestFile>> ReadSnapshotManifests(const io::FileIO& io, const TableMetadata& metadata,
                                                        const Snapshot& snapshot);

}  // namespace lakesync::iceberg
