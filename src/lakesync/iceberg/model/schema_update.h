// Schema evolution (spec "Schema Evolution"): the rules that turn a table's current schema into the
// next one. One place for them: `lakesync table alter` and the jobs' schema_evolution both build their
// new schema here, and commit it with AddSchema + SetCurrentSchema (iceberg/commit).
//
//   - a new column gets the next field id after the table's last-column-id and is optional (a
//     reader of older files fills it with null);
//   - a rename keeps the field id, so files written before it read by id;
//   - a type changes only by a promotion the spec allows (CanPromote), which readers of old files
//     apply when they read;
//   - a dropped column's id is retired: last-column-id stays, so it is never assigned again.
//     Identifier fields and the source columns of the default partition spec or sort order cannot
//     be dropped.
//
// Adds and widenings also reach nested fields by path, as Iceberg names them: "a.b" is field b of
// struct a, "l.element.b" a field of the structs in list l, "m.value.b" of a map's values. A nested
// type added (a struct, list or map column or field) gets fresh ids for all its fields. Renames reach
// struct fields by path too ("st.a" renamed to "b", keeping its id); drops apply to top-level columns.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/iceberg/model/table_metadata.h"

namespace lakesync::iceberg {

// True when a column of type `from` may be changed to `to` (equal types included): int → long,
// float → double, decimal(P, S) → decimal(P', S) with P' ≥ P; on format v3 also date → timestamp /
// timestamp_ns and unknown → any primitive type.
bool CanPromote(const Type& from, const Type& to, int format_version);

struct SchemaChange {
  enum class Kind { kAddColumn, kRenameColumn, kWidenColumn, kDropColumn };
  Kind kind = Kind::kAddColumn;
  std::string name;      // the column (add: the new column's name)
  std::string new_name;  // rename
  TypePtr type;          // add, widen
  std::string doc;       // add
  std::optional<std::string> after;  // add: place the new column after this one (default: last)

  static SchemaChange Add(std::string name, TypePtr type, std::string doc = {}, std::optional<std::string> after = {});
  static SchemaChange Rename(std::string name, std::string new_name);
  static SchemaChange Widen(std::string name, TypePtr type);
  static SchemaChange Drop(std::string name);
  // "add column c (long)", for messages.
  std::string ToString() const;
};

struct EvolvedSchema {
  SchemaPtr schema;            // schema id: one above the table's highest
  int32_t last_column_id = 0;  // the table's last-column-id after the change
  bool changed = false;        // false when the changes leave the schema as it is
};

// Applies the changes in order to the table's current schema. Errors: InvalidArgument naming the
// change and the rule it breaks (unknown or existing column, a type change that is not a promotion,
// dropping an identifier or partition/sort source column).
Result<EvolvedSchema> EvolveSchema(const TableMetadata& table, const std::vector<SchemaChange>& changes);

}  // namespace lakesync::iceberg
