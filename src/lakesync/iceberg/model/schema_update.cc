#include "lakesync/iceberg/model/schema_update.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

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

// `type` with every field id below it fresh (struct fields, list elements, map keys and values), taken
// after `last_column_id` as for a new top-level column: ids are never reused.
TypePtr WithFreshIds(const TypePtr& type, int32_t& last_column_id) {
  if (!type->is_nested()) return type;
  std::vector<NestedField> children = type->fields();
  for (auto& child : children) child.id = ++last_column_id;
  for (auto& child : children) child.type = WithFreshIds(child.type, last_column_id);
  switch (type->id()) {
    case TypeId::kStruct: return Type::Struct(std::move(children));
    case TypeId::kList: return Type::List(std::move(children.at(0)));
    default: return Type::Map(std::move(children.at(0)), std::move(children.at(1)));
  }
}

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

// The fields of a struct, list ("element") or map ("key", "value") as a path names them.
std::string ChildName(TypeId parent, size_t index, const NestedField& f) {
  if (parent == TypeId::kList) return "element";
  if (parent == TypeId::kMap) return index == 0 ? "key" : "value";
  return f.name;
}

// Runs `at_leaf` on the fields that hold the last part of `path` (a struct's fields, or the top-level
// columns), descending through struct fields, list elements ("element") and map keys and values
// ("key", "value"), and rebuilds the nested types on the way back: types are immutable values.
// `container` tells `at_leaf` whether those fields are a struct's (or the top level's).
using LeafChange = std::function<Status(std::vector<NestedField>& fields, const std::string& leaf, bool in_struct)>;
Status ChangeAtPath(std::vector<NestedField>& fields, TypeId container, const std::vector<std::string>& parts,
                    size_t i, const std::string& what, const LeafChange& at_leaf) {
  if (i + 1 == parts.size()) return at_leaf(fields, parts[i], container == TypeId::kStruct);
  size_t index = 0;
  for (; index < fields.size(); ++index) {
    if (ChildName(container, index, fields[index]) == parts[i]) break;
  }
  if (index == fields.size()) return InvalidArgument("{}: the table has no field '{}' there", what, parts[i]);
  NestedField& parent = fields[index];
  if (!parent.type->is_nested()) {
    return InvalidArgument("{}: '{}' is a {}, which has no fields", what, parts[i], parent.type->ToString());
  }
  std::vector<NestedField> children = parent.type->fields();
  ARROW_RETURN_NOT_OK(ChangeAtPath(children, parent.type->id(), parts, i + 1, what, at_leaf));
  switch (parent.type->id()) {
    case TypeId::kStruct: parent.type = Type::Struct(std::move(children)); break;
    case TypeId::kList: parent.type = Type::List(std::move(children.at(0))); break;
    default: parent.type = Type::Map(std::move(children.at(0)), std::move(children.at(1))); break;
  }
  return Status::OK();
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
        if (!c.type) return InvalidArgument("{}: the column needs a type", what);
        // "a.b.c": field c added to struct a.b (through list elements and map values: "l.element.c",
        // "m.value.c"), as Iceberg names nested fields.
        const std::vector<std::string> path = SplitPath(c.name);
        if (std::any_of(path.begin(), path.end(), [](const std::string& p) { return p.empty(); })) {
          return InvalidArgument("{}: '{}' is not a column name or a path of field names", what, c.name);
        }
        if (path.size() > 1 && c.after) return InvalidArgument("{}: --after places top-level columns only", what);
        auto add = [&](std::vector<NestedField>& into, const std::string& leaf, bool in_struct) -> Status {
          if (!in_struct) return InvalidArgument("{}: fields can be added to structs only", what);
          if (FindTop(into, leaf) != into.end()) {
            return InvalidArgument("{}: the table already has a {} named '{}'", what,
                                   path.size() > 1 ? "field" : "column", c.name);
          }
          NestedField f;
          f.id = ++last_column_id;  // never an id in use or retired (spec: ids come from last-column-id)
          f.name = leaf;
          f.required = false;       // older data files have no value for it: readers fill null
          f.type = WithFreshIds(c.type, last_column_id);
          f.doc = c.doc;
          auto at = into.end();
          if (c.after) {
            auto after = FindTop(into, *c.after);
            if (after == into.end()) return InvalidArgument("{}: --after names no column '{}'", what, *c.after);
            at = after + 1;
          }
          into.insert(at, std::move(f));
          return Status::OK();
        };
        ARROW_RETURN_NOT_OK(ChangeAtPath(fields, TypeId::kStruct, path, 0, what, add));
        break;
      }
      case SchemaChange::Kind::kRenameColumn: {
        // A top-level column (whose name may hold a dot), else a nested field by path: "st.a" renamed
        // to "b" is field a of struct st, as Iceberg's rename_column("st.a", "b") names it.
        const bool nested = it == fields.end() && c.name.find('.') != std::string::npos;
        if (it == fields.end() && !nested) return InvalidArgument("{}: the table has no column '{}'", what, c.name);
        if (c.new_name.empty() || c.new_name.find('.') != std::string::npos) {
          return InvalidArgument("{}: '{}' is not a valid {} name", what, c.new_name,
                                 nested ? "field" : "top-level column");
        }
        auto rename = [&](std::vector<NestedField>& in, const std::string& leaf, bool in_struct) -> Status {
          if (!in_struct) return InvalidArgument("{}: only struct fields and columns can be renamed", what);
          auto f = FindTop(in, leaf);
          if (f == in.end()) return InvalidArgument("{}: the table has no {} '{}'", what, nested ? "field" : "column", c.name);
          if (c.new_name != leaf && FindTop(in, c.new_name) != in.end()) {
            return InvalidArgument("{}: the table already has a {} named '{}'{}", what, nested ? "field" : "column",
                                   c.new_name, nested ? " there" : "");
          }
          f->name = c.new_name;  // same id: files written before read the field by id
          return Status::OK();
        };
        if (nested) {
          ARROW_RETURN_NOT_OK(ChangeAtPath(fields, TypeId::kStruct, SplitPath(c.name), 0, what, rename));
        } else {
          ARROW_RETURN_NOT_OK(rename(fields, c.name, true));
        }
        break;
      }
      case SchemaChange::Kind::kWidenColumn: {
        if (!c.type) return InvalidArgument("{}: the column needs a type", what);
        auto widen = [&](std::vector<NestedField>& in, const std::string& leaf, bool) -> Status {
          auto f = FindTop(in, leaf);
          if (f == in.end()) return InvalidArgument("{}: the table has no column '{}'", what, c.name);
          if (!CanPromote(*f->type, *c.type, table.format_version)) {
            return InvalidArgument(
                "{}: {} cannot be changed to {}; Iceberg allows int → long, float → double, decimal(P, S) → "
                "decimal(P', S) with P' ≥ P{}",
                what, f->type->ToString(), c.type->ToString(),
                table.format_version >= 3 ? ", date → timestamp/timestamp_ns" : "");
          }
          f->type = c.type;
          return Status::OK();
        };
        // A top-level column whose name has a dot is the column; otherwise the dots make a path.
        if (it != fields.end()) {
          ARROW_RETURN_NOT_OK(widen(fields, c.name, true));
        } else {
          ARROW_RETURN_NOT_OK(ChangeAtPath(fields, TypeId::kStruct, SplitPath(c.name), 0, what, widen));
        }
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
