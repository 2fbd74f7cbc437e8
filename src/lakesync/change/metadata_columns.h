// The metadata columns of a change stream, as lakesync's sources write them next to the table's
// columns (docs/changelog.md, docs/delta.md), and the other names users bring for them: Apache
// Beam's IcebergCdcMetadataColumns constants, which Dataflow's CDC guides write in configurations
// (CHANGE_TYPE, COMMIT_SNAPSHOT_SEQUENCE_NUMBER, ...). One list, used by the changelog source's
// configuration, jobs and `lakesync apply`.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lakesync::change {

// _change_type, _change_ordinal, _commit_snapshot_id, _commit_snapshot_sequence_number,
// _commit_timestamp, _commit_version: the columns `lakesync changes` appends (Iceberg and Delta).
const std::vector<std::string>& MetadataColumnNames();
bool IsMetadataColumn(std::string_view name);

// A Beam constant name (CHANGE_TYPE, or IcebergCdcMetadataColumns.CHANGE_TYPE) as the column it
// stands for (_change_type); any other name unchanged.
std::string CanonicalMetadataColumn(std::string_view name);

// The column of `available` that `name` means: itself when present, else the column its Beam
// spelling stands for when that is present; nullopt when neither is.
std::optional<std::string> ResolveColumn(std::string_view name, const std::vector<std::string>& available);

// Columns taken as the change kind when none is configured, in order of preference: lakesync's and
// Delta's `_change_type`, then `change_type` and Beam's `CHANGE_TYPE` spelling.
const std::vector<std::string>& ChangeTypeColumnCandidates();
// Columns taken as the sequence when none is configured: an Iceberg changelog's
// `_commit_snapshot_sequence_number`, then a Delta change feed's `_commit_version`.
const std::vector<std::string>& SequenceColumnCandidates();

}  // namespace lakesync::change
