// `lakesync table alter`: schema changes committed on their own (no snapshot), through the one
// schema rule set (iceberg/model/schema_update.h) and the one schema commit (iceberg/commit/schema_commit.h).
#pragma once

#include <vector>

#include "lakesync/iceberg/model/schema_update.h"
#include "lakesync/table/table.h"

namespace lakesync::table {

struct AlterSchemaResult {
  iceberg::SchemaPtr schema;  // the table's current schema afterwards
  bool changed = false;       // false: the changes left the schema as it was; nothing committed
};

// Applies the changes to the table's current schema and commits the result as the new current
// schema. Errors: as EvolveSchema (nothing committed); kCommitConflict when another writer changed
// the schema meanwhile (run it again). On success the table holds the committed metadata.
Result<AlterSchemaResult> AlterSchema(Table& table, const std::vector<iceberg::SchemaChange>& changes);

}  // namespace lakesync::table
