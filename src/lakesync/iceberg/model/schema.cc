#include "lakesync/iceberg/model/schema.h"

#include <algorithm>
#include <set>

namespace lakesync::iceberg {

Schema::Schema(int32_t schema_id, std::vector<NestedField> fields, std::vector<int32_t> identifier_field_ids)
    : schema_id_(schema_id),
      struct_type_(Type::Struct(std::move(fields))),
      identifier_field_ids_(std::move(identifier_field_ids)) {
  for (const auto& f : struct_type_->fields()) Index(f, "");
}

void Schema::Index(const NestedField& field, const std::string& prefix) {
  const std::string name = prefix.empty() ? field.name : prefix + "." + field.name;
  by_id_[field.id] = &field;
  id_by_name_.emplace(name, field.id);
  name_by_id_.emplace(field.id, name);
  highest_field_id_ = std::max(highest_field_id_, field.id);
  for (const auto& child : field.type->fields()) Index(child, name);
}

const NestedField* Schema::FindFieldById(int32_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

const NestedField* Schema::FindFieldByName(std::string_view name) const {
  auto it = id_by_name_.find(std::string(name));
  return it == id_by_name_.end() ? nullptr : FindFieldById(it->second);
}

std::string Schema::FindColumnName(int32_t id) const {
  auto it = name_by_id_.find(id);
  return it == name_by_id_.end() ? std::string() : it->second;
}

int Schema::TopLevelIndex(int32_t id) const {
  const auto& fs = fields();
  for (size_t i = 0; i < fs.size(); ++i) {
    if (fs[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

namespace {

Status ValidateStruct(const Type& type, std::set<int32_t>& seen_ids, const std::string& prefix) {
  std::set<std::string> names;
  for (const auto& f : type.fields()) {
    const std::string name = prefix.empty() ? f.name : prefix + "." + f.name;
    if (f.id <= 0) return InvalidArgument("field '{}' has invalid id {}", name, f.id);
    if (!seen_ids.insert(f.id).second) return InvalidArgument("field id {} is used twice (at '{}')", f.id, name);
    if (type.id() == TypeId::kStruct && !names.insert(f.name).second) {
      return InvalidArgument("duplicate field name '{}'", name);
    }
    if (!f.type) return InvalidArgument("field '{}' has no type", name);
    if (f.type->is_nested()) ARROW_RETURN_NOT_OK(ValidateStruct(*f.type, seen_ids, name));
  }
  return Status::OK();
}

}  // namespace

Status Schema::Validate() const {
  std::set<int32_t> seen;
  ARROW_RETURN_NOT_OK(ValidateStruct(*struct_type_, seen, ""));
  for (int32_t id : identifier_field_ids_) {
    const NestedField* f = FindFieldById(id);
    if (!f) return InvalidArgument("identifier field id {} is not in the schema", id);
    const std::string name = FindColumnName(id);
    if (!f->required) return InvalidArgument("identifier field '{}' must be required (not null)", name);
    if (!IsValidIdentifierType(*f->type)) {
      return InvalidArgument("identifier field '{}' has type {}, which cannot be an identifier", name,
                             f->type->ToString());
    }
    // Every enclosing field must be a required struct: keys inside lists, maps or optional structs
    // are not single-valued per row.
    std::string path = name;
    for (auto dot = path.rfind('.'); dot != std::string::npos; dot = path.rfind('.')) {
      path = path.substr(0, dot);
      const NestedField* parent = FindFieldByName(path);
      if (!parent || parent->type->id() != TypeId::kStruct || !parent->required) {
        return InvalidArgument("identifier field '{}' must not be nested in a list, map or optional struct",
                               name);
      }
    }
  }
  return Status::OK();
}

bool Schema::SameSchema(const Schema& other) const {
  return struct_type_->Equals(*other.struct_type_) && identifier_field_ids_ == other.identifier_field_ids_;
}

std::string Schema::ToString() const {
  std::string out = "table {\n";
  for (const auto& f : fields()) {
    out += fmt::format("  {}: {}: {} {}\n", f.id, f.name, f.required ? "required" : "optional", f.type->ToString());
  }
  return out + "}";
}

SchemaPtr PositionDeleteSchema() {
  static const SchemaPtr kSchema = [] {
    NestedField path;
    path.id = kDeleteFilePathFieldId;
    path.name = "file_path";
    path.required = true;
    path.type = Type::String();
    NestedField pos;
    pos.id = kDeleteFilePosFieldId;
    pos.name = "pos";
    pos.required = true;
    pos.type = Type::Long();
    return std::make_shared<const Schema>(0, std::vector<NestedField>{path, pos});
  }();
  return kSchema;
}

}  // namespace lakesync::iceberg
