#include "lakesync/iceberg/model/schema_update.h"

#include <fmt/format.h>

#include <algorithm>

namespace lakesync::iceberg {

bool CanPromote(const Type& from, const Type& to, int format_version) {
  if (from.Equals(to)) return true;
  switch (from.id()) {
    case TypeId::kInt: return to.id() == TypeId::kLong;
    case TypeId::kFloat: return to.id() == TypeId::kDouble;
    case TypeId::kDecimal:
      return to.id() == TypeId::kDecimal && to.scale() == from.scale() && to.precision() >= from.precision();
    case TypeId::kDate:
      // v3: a date is read as midnight of that day (the Parquet reader's v3 promotions).
      return format_version >= 3 && (to.id() == TypeId::kTimestamp || to.id() == TypeId::kTimestampNs);
    case TypeId::kUnknown: return format_version >= 3 && to.is_primitive();
    default: return false;
  }
}

SchemaChange SchemaChange::Add(std::string name, TypePtr type, std::string doc, std::optional<std::string> after) {
  SchemaChange c;
  c.kind = Kind::kAddColumn;
  c.name = std::move(name);
  c.type = std::move(type);
  c.doc = std::move(doc);
  c.after = std::move(after);
  return c;
}

SchemaChange SchemaChange::Rename(std::string name, std::string new_name) {
  SchemaChange c;
  c.kind = Kind::kRenameColumn;
  c.name = std::move(name);
  c.new_name = std::move(new_name);
  return c;
}

SchemaChange SchemaChange::Widen(std::string name, TypePtr type) {
  SchemaChange c;
  c.kind = Kind::kWidenColumn;
  c.name = std::move(name);
  c.type = std::move(type);
  return c;
}

SchemaChange SchemaChange::Drop(std::string name) {
  SchemaChange c;
  c.kind = Kind::kDropColumn;
  c.name = std::move(name);
  return c;
}

std::string SchemaChange::ToString() const {
  switch (kind) {
    case Kind::kAddColumn: return fmt::format("add column {} ({})", name, type ? type->ToString() : "?");
    case Kind::kRenameColumn: return fmt::format("rename column {} to {}", name, new_name);
    case Kind::kWidenColumn: return fmt::format("widen column {} to {}", name, type ? type->ToString() : "?");
    case Kind::kDropColumn: return fmt::format("drop column {}", name);
  }
  return "?";
}

namespace {

std::vector<NestedField>::iterator FindTop(std::vector<NestedField>& fields, const std::string& name) {
  return std::find_if(fields.begin(), fields.end(), [&](const NestedField& f) { return f.name == name; });
}

}  // namespace

Result<EvolvedSchema> EvolveSchema(const TableMetadata& table, const std::vector<SchemaChange>& changes) {
  auto current = table.Schema();
  if (!current) return InvalidArgument("the table has no current schema");
  std::vector<NestedField> fields = current->fields();
  std::vector<int32_t> identifiers = current->identifier_field_ids();
  int32_t last_column_id = std::max(table.last_column_id, current->HighestFieldId());
  for (const auto& c : changes) {
    const std::string what = c.ToString();
    auto it = FindTop(fields, c.name);
    switch (c.kind) {
      case SchemaChange::Kind::kAddColumn: {
        if (c.name.empty()) return InvalidArgument("{}: the column needs a name", what);
        if (c.name.find('.') != std::string::npos) {
          return InvalidArgument("{}: only top-level columns can be added ('.' is not allowed in the name)", what);
        }
        if (it != fields.end()) return InvalidArgument("{}: the table already has a column named '{}'", what, c.name);
        if (!c.type) return InvalidArgument("{}: the column needs a type", what);
        if (c.type->is_nested()) return InvalidArgument("{}: only primitive types can be added", what);
        NestedField f;
        f.id = ++last_column_id;  // never an id in use or retired (spec: ids come from last-column-id)
        f.name = c.name;
        f.required = false;       // older data files have no value for it: readers fill null
        f.type = c.type;
        f.doc = c.doc;
        auto at = fields.end();
        if (c.after) {
          auto after = FindTop(fields, *c.after);
          if (after == fields.end()) return InvalidArgument("{}: --after names no column '{}'", what, *c.after);
          at = after + 1;
        }
        fields.insert(at, std::move(f));
        break;
      }
      case SchemaChange::Kind::kRenameColumn: {
        if (it == fields.end()) return InvalidArgument("{}: the table has no column '{}'", what, c.name);
        if (c.new_name.empty() || c.new_name.find('.') != std::string::npos) {
          return InvalidArgument("{}: '{}' is not a valid top-level column name", what, c.new_name);
        }
        if (c.new_name != c.name && FindTop(fields, c.new_name) != fields.end()) {
          return InvalidArgument("{}: the table already has a column named '{}'", what, c.new_name);
        }
        it->name = c.new_name;  // same id: files written before read the column by id
        break;
      }
      case SchemaChange::Kind::kWidenColumn: {
        if (it == fields.end()) return InvalidArgument("{}: the table has no column '{}'", what, c.name);
        if (!c.type) return InvalidArgument("{}: the column needs a type", what);
        if (!CanPromote(*it->type, *c.type, table.format_version)) {
          return InvalidArgument(
              "{}: {} cannot be changed to {}; Iceberg allows int → long, float → double, decimal(P, S) → "
              "decimal(P', S) with P' ≥ P{}",
              what, it->type->ToString(), c.type->ToString(),
              table.format_version >= 3 ? ", date → timestamp/timestamp_ns" : "");
        }
        it->type = c.type;
        break;
      }
      case SchemaChange::Kind::kDropColumn: {
        if (it == fields.end()) return InvalidArgument("{}: the table has no column '{}'", what, c.name);
        const int32_t id = it->id;
        if (std::find(identifiers.begin(), identifiers.end(), id) != identifiers.end()) {
          return InvalidArgument("{}: '{}' is an identifier field (the table's key); it cannot be dropped", what,
                                 c.name);
        }
        if (auto spec = table.Spec()) {
          for (const auto& pf : spec->fields()) {
            if (pf.source_id == id) {
              return InvalidArgument("{}: '{}' is the source of partition field '{}'; it cannot be dropped", what,
                                     c.name, pf.name);
            }
          }
        }
        if (auto order = table.SortOrder()) {
          for (const auto& sf : order->fields) {
            if (sf.source_id == id) {
              return InvalidArgument("{}: '{}' is in the table's sort order; it cannot be dropped", what, c.name);
            }
          }
        }
        fields.erase(it);  // the id stays retired: last-column-id is not lowered
        break;
      }
    }
  }
  int32_t schema_id = 0;
  for (const auto& s : table.schemas) schema_id = std::max(schema_id, s->schema_id() + 1);
  EvolvedSchema out;
  out.schema = std::make_shared<const Schema>(schema_id, std::move(fields), std::move(identifiers));
  LS_RETURN_NOT_OK_CTX(out.schema->Validate(), "the evolved schema");
  out.last_column_id = last_column_id;
  out.changed = !out.schema->SameSchema(*current);
  return out;
}

}  // namespace lakesync::iceberg
