#include "lakesync/sink/schema_evolution.h"

#include <arrow/type.h>
#include <fmt/format.h>

#include <algorithm>
#include <functional>

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
  // The source's renames, shallowest first so that a nested field is found under its parents' new
  // names: a column is renamed when the table has it under the old name and the input under the new
  // one; a nested field ("st.a" → "st.b") when the table has it (under its parents' new names) and not
  // yet a sibling with the new name. Planned on the renamed schema from then on: the renames apply
  // first in the commit, by field id.
  std::vector<std::pair<std::string, std::string>> renames(what.renames.begin(), what.renames.end());
  auto depth = [](const std::string& path) { return std::count(path.begin(), path.end(), '.'); };
  std::stable_sort(renames.begin(), renames.end(),
                   [&](const auto& a, const auto& b) { return depth(a.first) < depth(b.first); });
  auto leaf_of = [](const std::string& path) {
    const auto dot = path.rfind('.');
    return dot == std::string::npos ? path : path.substr(dot + 1);
  };
  auto parent_of = [](const std::string& path) {
    const auto dot = path.rfind('.');
    return dot == std::string::npos ? std::string() : path.substr(0, dot);
  };
  for (const auto& [from, to] : renames) {
    const bool top = schema->FindFieldByName(from) && schema->TopLevelIndex(schema->FindFieldByName(from)->id) >= 0;
    if (top) {
      if (schema->FindFieldByName(to) || !Contains(what.input_columns, to)) continue;
      if (Contains(what.key_columns, from)) {
        return incompatible(fmt::format("key column '{}' was renamed to '{}'", from, to),
                            "the sink's key (equality_columns or identifier fields) cannot change");
      }
      changes.push_back(SchemaChange::Rename(from, to));
    } else {
      // A nested field: its path under the parents' new names, and its new name.
      const std::string parent = parent_of(to);
      if (parent.empty() || from.find('.') == std::string::npos) continue;
      const std::string at = parent + "." + leaf_of(from);
      if (!schema->FindFieldByName(at) || schema->FindFieldByName(to)) continue;
      changes.push_back(SchemaChange::Rename(at, leaf_of(to)));
    }
    LS_ASSIGN_OR_RAISE_CTX(auto renamed, iceberg::EvolveSchema(table, changes), "schema_evolution: table {}",
                           what.table_name);
    schema = renamed.schema;
  }
  // The table's top-level columns by the name they have after the source's renames.
  std::map<std::string, const iceberg::NestedField*> columns;
  for (const auto& f : schema->fields()) columns[f.name] = &f;
  // One column or nested field whose input type differs from the table's: a widening, a narrower
  // input (it fits), an incompatible numeric change; anything else is converted value by value.
  auto primitive = [&](const std::string& path, const iceberg::Type& current, const iceberg::TypePtr& type) -> Status {
    if (current.Equals(*type) || iceberg::CanPromote(*type, current, table.format_version)) return Status::OK();
    if (Contains(what.key_columns, path) && (IsNumeric(current) || IsNumeric(*type))) {
      // Keys are compared by exact type when they are resolved to positions: never changed on the way.
      return incompatible(fmt::format("key column '{}' changed from {} to {}", path, current.ToString(),
                                      type->ToString()),
                          "the sink's key columns cannot change type");
    }
    if (iceberg::CanPromote(current, *type, table.format_version)) {
      changes.push_back(SchemaChange::Widen(path, type));
      return Status::OK();
    }
    if (IsNumeric(current) && IsNumeric(*type)) {
      return incompatible(fmt::format("column '{}' changed from {} to {}", path, current.ToString(),
                                      type->ToString()),
                          "that is not a type promotion Iceberg allows, and its values may not fit the column");
    }
    // Other differences (a string into a timestamp column, ...) are converted value by value when
    // written, as without schema evolution: a value that does not convert names its row.
    return Status::OK();
  };
  // Nested columns are compared field by field, by name (struct fields) or position (list element,
  // map key and value): a struct field the input has and the table lacks is added (with fresh ids for
  // all below it), nested primitives follow the rules above, and a required field the input lacks
  // stops the run. Paths are Iceberg's ("a.b", "l.element.b", "m.value.b").
  std::function<Status(const std::string&, const iceberg::Type&, const iceberg::Type&)> nested =
      [&](const std::string& path, const iceberg::Type& current, const iceberg::Type& type) -> Status {
    if (current.id() != type.id()) return Status::OK();  // a struct for a list...: the writer says why not
    if (current.id() == iceberg::TypeId::kStruct) {
      for (const auto& f : type.fields()) {
        const std::string child = path + "." + f.name;
        auto it = std::find_if(current.fields().begin(), current.fields().end(),
                               [&](const iceberg::NestedField& c) { return c.name == f.name; });
        if (it == current.fields().end()) {
          changes.push_back(SchemaChange::Add(child, f.type));
        } else if (it->type->is_nested() || f.type->is_nested()) {
          ARROW_RETURN_NOT_OK(nested(child, *it->type, *f.type));
        } else {
          ARROW_RETURN_NOT_OK(primitive(child, *it->type, f.type));
        }
      }
      for (const auto& c : current.fields()) {
        const bool in_input = std::any_of(type.fields().begin(), type.fields().end(),
                                          [&](const iceberg::NestedField& f) { return f.name == c.name; });
        if (!in_input && c.required) {
          return incompatible(fmt::format("required field '{}.{}' is no longer in the source", path, c.name),
                              "its rows would have no value for it");
        }
      }
      return Status::OK();
    }
    // A list's element, a map's key and value.
    for (size_t i = 0; i < current.fields().size() && i < type.fields().size(); ++i) {
      const std::string child =
          path + (current.id() == iceberg::TypeId::kList ? ".element" : (i == 0 ? ".key" : ".value"));
      const auto& c = current.fields()[i];
      const auto& f = type.fields()[i];
      if (c.type->is_nested() || f.type->is_nested()) {
        ARROW_RETURN_NOT_OK(nested(child, *c.type, *f.type));
      } else {
        ARROW_RETURN_NOT_OK(primitive(child, *c.type, f.type));
      }
    }
    return Status::OK();
  };
  for (const auto& name : what.input_columns) {
    auto field = input.GetFieldByName(name);
    if (!field) continue;
    LS_ASSIGN_OR_RAISE_CTX(auto converted, iceberg::FromArrowSchema(*arrow::schema({field}), true),
                           "schema_evolution: the type of input column '{}'", name);
    const auto& type = converted->fields().front().type;
    auto it = columns.find(name);
    if (it == columns.end()) {
      changes.push_back(SchemaChange::Add(name, type));
      continue;
    }
    const iceberg::NestedField& current = *it->second;
    if (current.type->is_nested() || type->is_nested()) {
      // Changes inside a renamed column are planned under its new name: the renames apply first.
      ARROW_RETURN_NOT_OK(nested(name, *current.type, *type));
    } else {
      ARROW_RETURN_NOT_OK(primitive(name, *current.type, type));
    }
  }
  for (const auto& [name, field] : columns) {
    if (Contains(what.input_columns, name)) continue;
    if (Contains(what.key_columns, name)) {
      return incompatible(fmt::format("key column '{}' is no longer in the source", name),
                          "the sink's key columns cannot be dropped");
    }
    if (field->required) {
      // An optional column the source drops stays (its new rows are null); a required one cannot
      // take null: following the drop by hand is the user's call, as it retires the column's data.
      return incompatible(fmt::format("required column '{}' is no longer in the source", name),
                          fmt::format("its rows would have no value for it (to drop it from the table too: "
                                      "`lakesync table alter {} drop-column {}`)",
                                      what.table_name, name));
    }
  }
  return changes;
}

}  // namespace lakesync::sink
