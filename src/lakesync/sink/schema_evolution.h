// The sink's side of a job's `schema_evolution` (docs/jobs.md): what the target table's schema must
// become so that the input's columns can be written, decided from the input's Arrow schema and the
// table's current schema, and turned into schema changes by the one rule set
// (iceberg/model/schema_update.h). The writer commits the result with its snapshot.
//
//   additive: an input column the table lacks is added (optional, next field id; a nested one with
//     fresh ids for all its fields); so is a field the input has inside a struct column (or a struct
//     in a list or map) and the table lacks; a column or nested field whose input
//     type is a promotion of the table's (int → long, float → double, decimal precision) is widened;
//     a column or struct field the source renamed (`renames`, old path → new path, found by the
//     source by field id or Delta column-mapping physical name) is renamed in the table, keeping its
//     id. An input narrower than the table (an int into a long column) is written as it is. A column
//     or optional nested field the input no longer has stays in the table (null in the rows written
//     from now on).
//   incompatible (the table is left unchanged and the run stops with what changed and how to go on):
//     a numeric column whose input type the table's type can neither hold nor be promoted to
//     (long → int, double → long, decimal(10, 2) → decimal(10, 3)...), a key column (equality_columns
//     or identifier fields) that changes type, is renamed or is no longer in the input, a required
//     column or nested field no longer in the input.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <arrow/type_fwd.h>

#include "lakesync/common/status.h"
#include "lakesync/iceberg/model/schema_update.h"

namespace lakesync::sink {

enum class SchemaEvolution {
  kNone,      // the table's schema is never changed by the sink (what `lakesync apply` does)
  kAdditive,  // add columns, widen types, follow renames (a job's default)
};
std::string_view SchemaEvolutionName(SchemaEvolution mode);  // "none", "additive"
// Errors: InvalidArgument naming `where` and the accepted values.
Result<SchemaEvolution> ParseSchemaEvolution(std::string_view text, std::string_view where);

struct SchemaEvolutionInput {
  std::string table_name;                          // for messages
  std::string source_name;                         // the input, for messages
  std::string position;                            // the source position being applied, for messages ("" if none)
  std::vector<std::string> input_columns;          // the input's table columns (after keep/drop)
  std::vector<std::string> key_columns;            // equality_columns, else the table's identifier fields
  // Old path → new path, as the source reports them (ChangeSource::RenamesSince): "qty" → "amount",
  // "st.a" → "st.b"; a field inside a renamed struct is listed only when its own name changed.
  std::map<std::string, std::string> renames;
};

// The schema changes (possibly none) that let the input be written. Errors: InvalidArgument for an
// incompatible change, saying which column changed from what to what and how to proceed.
Result<std::vector<iceberg::SchemaChange>> PlanSchemaEvolution(const iceberg::TableMetadata& table,
                                                               const arrow::Schema& input,
                                                               const SchemaEvolutionInput& what);

}  // namespace lakesync::sink
