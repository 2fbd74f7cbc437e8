// What a protocol and a metaData action mean for a reader: the reader-feature check, the column
// mapping mode, whether the Change Data Feed and In-Commit Timestamps are on (PROTOCOL.md
// "Table Features", lakesync spec delta.md §3).
#pragma once

#include <optional>
#include <string>

#include "lakesync/delta/actions.h"
#include "lakesync/delta/schema.h"

namespace lakesync::delta {

// Refuses a protocol lakesync cannot read: reader version above 3, or any reader feature outside the
// supported list (columnMapping, deletionVectors, timestampNtz, timestampWithoutTimezone,
// v2Checkpoint, vacuumProtocolCheck, typeWidening, typeWidening-preview). catalogManaged tables are
// refused with a message saying that only their catalog knows the ratified commits.
// Returns Unsupported naming every unsupported feature, with `where` (e.g. "version 7") as context.
Status CheckReadable(const Protocol& protocol, const std::string& where);

// delta.columnMapping.mode, honoured only where the protocol enables column mapping (reader 2, or
// reader 3 with the columnMapping feature). Returns Corrupt for an unknown mode.
Result<ColumnMappingMode> ColumnMapping(const Protocol& protocol, const Metadata& metadata);

// delta.enableChangeDataFeed = "true".
bool ChangeDataFeedEnabled(const Metadata& metadata);

// In-Commit Timestamps: enabled, and from which version (nullopt: from the table's creation).
struct IctConfig {
  bool enabled = false;
  std::optional<int64_t> enablement_version;
  std::optional<int64_t> enablement_timestamp;
};
IctConfig InCommitTimestamps(const Metadata& metadata);

// The table's schema with its mapping mode applied (errors as ParseTableSchema and ColumnMapping).
Result<TableSchema> SchemaOf(const Protocol& protocol, const Metadata& metadata);

}  // namespace lakesync::delta
