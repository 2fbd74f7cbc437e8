// Manifest lists (spec "Manifest Lists"): one per snapshot, one manifest_file record per manifest.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/iceberg/model/data_file.h"

namespace lakesync::iceberg {

struct ManifestListWriteOptions {
  int format_version = 2;  // 2 or 3
  int64_t snapshot_id = 0;
  std::optional<int64_t> parent_snapshot_id;
  int64_t sequence_number = 0;
  // v3: the snapshot's first-row-id (the table's next-row-id); required for v3.
  std::optional<int64_t> first_row_id;
  // As ManifestWriterOptions::codec.
  std::string codec = "gzip";
  // Where the list will be stored, for error messages.
  std::string location;
};

struct WrittenManifestList {
  std::string bytes;
  // The manifests as written: unassigned sequence numbers and snapshot ids replaced by the
  // snapshot's, v3 first_row_ids assigned.
  std::vector<ManifestFile> manifests;
  // v3: the row ids handed out to manifests without a first_row_id (the snapshot's added-rows; the
  // table's next-row-id advances by it). 0 for v2.
  int64_t added_rows = 0;
};

// Writes a manifest list with the file metadata Java and pyiceberg write: snapshot-id,
// parent-snapshot-id (the string "null" for a root snapshot), sequence-number, format-version and,
// in v3, first-row-id.
//
// Manifests written for this snapshot may carry kUnassignedSequenceNumber / kUnassignedSnapshotId
// (see ManifestWriter::ToManifestFile); they get the snapshot's sequence number and id. In v3 each
// data manifest without a first_row_id gets the running row id, starting at first_row_id and
// advancing by its added and existing row counts; delete manifests never have one.
//
// Returns InvalidArgument for format versions other than 2 or 3, a v3 list without first_row_id,
// an unassigned (minimum) sequence number on a manifest of another snapshot, a first_row_id on a delete
// manifest or in v2, unknown counts, or an unknown codec.
Result<WrittenManifestList> WriteManifestList(const ManifestListWriteOptions& options,
                                              std::vector<ManifestFile> manifests);

// A manifest list as read: its file metadata (absent keys are nullopt) and its manifests.
struct ManifestList {
  int format_version = 1;
  std::optional<int64_t> snapshot_id;
  std::optional<int64_t> parent_snapshot_id;
  std::optional<int64_t> sequence_number;
  std::optional<int64_t> first_row_id;
  std::vector<ManifestFile> manifests;
};

// Reads a manifest list written by any Iceberg implementation, v1 to v3, resolving fields by id.
// v1 lists read with content data and sequence numbers 0; null file counts set counts_unknown.
// Returns Corrupt naming `location` and the record for malformed input or missing required fields.
Result<ManifestList> ReadManifestList(std::string_view bytes, std::string_view location = "");

}  // namespace lakesync::iceberg
