#include "lakesync/sink/schema_evolution.h"

#include <arrow/type.h>
#include <fmt/format.h>

#include <algorithm>

#include "lakesync/iceberg/model/arrow_schema.h"

namespace lakesync::sink {

std::string_view SchemaEvolutionName(SchemaEvolution mode) {
  return mode == SchemaEvolution::kAdditive ? "additive" : "none";
}

Result<SchemaEvolution> ParseSchemaEvolution(std::string_view text, std::string_view where) {
  if (text == "additive") return SchemaEvolution::kAdditive;
  if (text == "none") return SchemaEvolution::kNone;
  return InvalidArgument("{}: schema_evolution must be additive or none, not '{}'", where, text);
}

namespace {

bool IsNumeric(const iceberg::Type& t) {
  switch (t.id()) {
    case iceberg::TypeId::kInt:
    case iceberg::TypeId::kLong:
    case iceberg::TypeId::kFloat:
    case iceberg::TypeId::kDouble:
    case iceberg::TypeId::kDecimal:
      return true;
    default:
      return false;
  }
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

Result<std::vector<iceberg::SchemaChange>> PlanSchemaEvolution(const iceberg::TableMetadata& table,
                                                               const arrow::Schema& input,
                                                               const SchemaEvolutionInput& what) {
  using iceberg::SchemaChange;
  auto schema = table.Schema();
  const std::string at = what.position.empty() ? what.source_name
                                               : fmt::format("{} at source position {}", what.source_name, what.position);
  auto incompatible = [&](const std::string& change, const std::string& why) {
    return InvalidArgument(
        "schema_evolution: {} cannot follow the source ({}): {}; {}. The table was left unchanged. To go on, change "
        "the table to match (`lakesync table alter {} ...`, or recreate it) and run the job again, or set "
        "`schema_evolution: none` to write the columns into the table as it is",
        what.table_name, at, change, why, what.table_name);
  };
  std::vector<SchemaChange> changes;
  // The table's top-level columns by the name they will have after the source's renames.
  std::map<std::string, const iceberg::NestedField*> columns;
  for (const auto& f : schema->fields()) columns[f.name] = &f;
  for (const auto& [from, to] : what.renames) {
    auto it = columns.find(from);
    if (it == columns.end() || columns.count(to) || !Contains(what.input_columns, to)) continue;
    if (Contains(what.key_columns, from)) {
      return incompatible(fmt::format("key column '{}' was renamed to '{}'", from, to),
                          "the sink's key (equality_columns or identifier fields) cannot change");
    }
    changes.push_back(SchemaChange::Rename(from, to));
    columns[to] = it->second;
    columns.erase(it);
  }
  for (const auto& name : what.input_columns) {
    auto field = input.GetFieldByName(name);
    if (!field) continue;
    LS_ASSIGN_OR_RAISE_CTX(auto converted, iceberg::FromArrowSchema(*arrow::schema({field}), true),
                           "schema_evolution: the type of input column '{}'", name);
    const auto& type = converted->fields().front().type;
    auto it = columns.find(name);
    if (it == columns.end()) {
      if (type->is_nested()) {
        return incompatible(fmt::format("new column '{}' has the nested type {}", name, type->ToString()),
                            "only primitive columns are added automatically");
      }
      changes.push_back(SchemaChange::Add(name, type));
      continue;
    }
    const iceberg::NestedField& current = *it->second;
    if (current.type->is_nested() || type->is_nested() || current.type->Equals(*type)) continue;
    if (iceberg::CanPromote(*type, *current.type, table.format_version)) continue;  // narrower input: fits
    if (Contains(what.key_columns, name) && (IsNumeric(*current.type) || IsNumeric(*type))) {
      // Keys are compared by exact type when they are resolved to positions: never changed on the way.
      return incompatible(fmt::format("key column '{}' changed from {} to {}", name, current.type->ToString(),
                                      type->ToString()),
                          "the sink's key columns cannot change type");
    }
    if (iceberg::CanPromote(*current.type, *type, table.format_version)) {
      changes.push_back(SchemaChange::Widen(name, type));
      continue;
    }
    if (IsNumeric(*current.type) && IsNumeric(*type)) {
      return incompatible(fmt::format("column '{}' changed from {} to {}", name, current.type->ToString(),
                                      type->ToString()),
                          "that is not a type promotion Iceberg allows, and its values may not fit the column");
    }
    // Other differences (a string into a timestamp column, ...) are converted value by value when
    // written, as without schema evolution: a value that does not convert names its row.
  }
  for (const auto& [name, field] : columns) {
    if (Contains(what.input_columns, name)) continue;
    if (Contains(what.key_columns, name)) {
      return incompatible(fmt::format("key column '{}' is no longer in the source", name),
                          "the sink's key columns cannot be dropped");
    }
    if (field->required) {
      return incompatible(fmt::format("required column '{}' is no longer in the source", name),
                          "its rows would have no value for it");
    }
  }
  return changes;
}

}  // namespace lakesync::sink
