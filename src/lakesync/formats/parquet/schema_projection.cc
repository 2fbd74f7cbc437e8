#include "lakesync/formats/parquet/schema_projection.h"

#include <algorithm>
#include <set>

namespace lakesync::parquet_io {
namespace {

bool Contains(const iceberg::NestedField& field, const std::set<int32_t>& ids, bool& inside_collection,
              bool in_collection) {
  if (ids.count(field.id)) {
    if (in_collection) inside_collection = true;
    return true;
  }
  bool any = false;
  const bool child_in_collection = in_collection || field.type->id() == iceberg::TypeId::kList ||
                                   field.type->id() == iceberg::TypeId::kMap;
  for (const auto& child : field.type->fields()) {
    if (Contains(child, ids, inside_collection, child_in_collection)) any = true;
  }
  return any;
}

std::vector<iceberg::NestedField> Select(const std::vector<iceberg::NestedField>& fields,
                                         const std::set<int32_t>& ids) {
  std::vector<iceberg::NestedField> out;
  for (const auto& f : fields) {
    if (ids.count(f.id)) {
      out.push_back(f);
      continue;
    }
    if (f.type->id() != iceberg::TypeId::kStruct) continue;
    auto children = Select(f.type->fields(), ids);
    if (children.empty()) continue;
    iceberg::NestedField copy = f;
    copy.type = iceberg::Type::Struct(std::move(children));
    out.push_back(std::move(copy));
  }
  return out;
}

}  // namespace

Result<iceberg::SchemaPtr> SelectFields(const iceberg::Schema& schema, const std::vector<int32_t>& field_ids) {
  const std::set<int32_t> ids(field_ids.begin(), field_ids.end());
  for (int32_t id : ids) {
    if (!schema.FindFieldById(id)) return InvalidArgument("field id {} is not in the schema", id);
  }
  for (const auto& f : schema.fields()) {
    bool inside_collection = false;
    Contains(f, ids, inside_collection, false);
    if (inside_collection) {
      return InvalidArgument("cannot select a field inside list or map column '{}' on its own", f.name);
    }
  }
  std::vector<int32_t> identifiers;
  for (int32_t id : schema.identifier_field_ids()) {
    if (ids.count(id)) identifiers.push_back(id);
  }
  return std::make_shared<const iceberg::Schema>(schema.schema_id(), Select(schema.fields(), ids), identifiers);
}

}  // namespace lakesync::parquet_io
