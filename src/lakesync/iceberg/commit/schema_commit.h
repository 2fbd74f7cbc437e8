// The metadata changes that make an evolved schema (iceberg/model/schema_update.h) current: one
// place for `lakesync table alter` and for a sink commit that evolves the schema together with its
// snapshot.
#pragma once

#include <vector>

#include "lakesync/iceberg/commit/table_update.h"
#include "lakesync/iceberg/model/schema_update.h"

namespace lakesync::iceberg {

// The requirements a schema change was computed under: the same current schema and the same
// last-column-id (another writer changing the schema first makes the commit a conflict, never a
// schema built on ids that are no longer free).
std::vector<TableRequirement> SchemaChangeRequirements(const TableMetadata& base);

// AddSchema (with the new last-column-id) and SetCurrentSchema(-1: the schema just added).
std::vector<TableUpdate> SchemaChangeUpdates(const EvolvedSchema& evolved);

// The id the schema gets once AddSchema applies it to `base` (an equal schema already there keeps
// its id), so that a snapshot written in the same commit can name it.
int32_t SchemaIdAfterAdd(const TableMetadata& base, const Schema& schema);

}  // namespace lakesync::iceberg
