#include "lakesync/table/alter_schema.h"

#include "lakesync/iceberg/commit/schema_commit.h"

namespace lakesync::table {

Result<AlterSchemaResult> AlterSchema(Table& table, const std::vector<iceberg::SchemaChange>& changes) {
  const auto& base = *table.metadata();
  LS_ASSIGN_OR_RAISE_CTX(auto evolved, iceberg::EvolveSchema(base, changes), "table {}", table.name());
  AlterSchemaResult result;
  if (!evolved.changed) {
    result.schema = base.Schema();
    return result;
  }
  LS_ASSIGN_OR_RAISE_CTX(auto committed,
                         table.catalog()->CommitTable(table.identifier(), iceberg::SchemaChangeRequirements(base),
                                                      iceberg::SchemaChangeUpdates(evolved)),
                         "changing the schema of {}", table.name());
  table.Update(std::move(committed));
  result.schema = table.metadata()->Schema();
  result.changed = true;
  return result;
}

}  // namespace lakesync::table
