#include "lakesync/iceberg/commit/schema_commit.h"

#include <algorithm>

namespace lakesync::iceberg {

std::vector<TableRequirement> SchemaChangeRequirements(const TableMetadata& base) {
  return {AssertTableUuid{base.table_uuid}, AssertCurrentSchemaId{base.current_schema_id},
          AssertLastAssignedFieldId{base.last_column_id}};
}

std::vector<TableUpdate> SchemaChangeUpdates(const EvolvedSchema& evolved) {
  return {AddSchema{evolved.schema, evolved.last_column_id}, SetCurrentSchema{-1}};
}

int32_t SchemaIdAfterAdd(const TableMetadata& base, const Schema& schema) {
  // The same rule as ApplyUpdates' add-schema: reuse an equal schema, else one above the highest id.
  int32_t id = 0;
  for (const auto& s : base.schemas) {
    if (s->SameSchema(schema)) return s->schema_id();
    id = std::max(id, s->schema_id() + 1);
  }
  return id;
}

}  // namespace lakesync::iceberg
