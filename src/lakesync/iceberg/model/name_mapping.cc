#include "lakesync/iceberg/model/name_mapping.h"

#include <algorithm>

namespace lakesync::iceberg {
namespace {

Result<std::vector<MappedField>> ParseFields(const nlohmann::json& json, const std::string& where) {
  if (!json.is_array()) return Corrupt("name mapping{}: expected a JSON array", where);
  std::vector<MappedField> out;
  for (size_t i = 0; i < json.size(); ++i) {
    const auto& e = json[i];
    const std::string here = fmt::format("{}[{}]", where, i);
    if (!e.is_object()) return Corrupt("name mapping{}: expected an object", here);
    MappedField f;
    if (auto it = e.find("field-id"); it != e.end() && !it->is_null()) {
      if (!it->is_number_integer()) return Corrupt("name mapping{}: 'field-id' must be an integer", here);
      f.field_id = it->get<int32_t>();
    }
    auto names = e.find("names");
    if (names == e.end() || !names->is_array()) return Corrupt("name mapping{}: 'names' must be an array", here);
    for (const auto& n : *names) {
      if (!n.is_string()) return Corrupt("name mapping{}: every name must be a string", here);
      f.names.push_back(n.get<std::string>());
    }
    if (auto it = e.find("fields"); it != e.end() && !it->is_null()) {
      ARROW_ASSIGN_OR_RAISE(f.fields, ParseFields(*it, here + ".fields"));
    }
    out.push_back(std::move(f));
  }
  return out;
}

MappedField FromField(const iceberg::NestedField& field, const std::string& name);

std::vector<MappedField> ChildrenOf(const iceberg::Type& type) {
  std::vector<MappedField> out;
  switch (type.id()) {
    case iceberg::TypeId::kStruct:
      for (const auto& f : type.fields()) out.push_back(FromField(f, f.name));
      break;
    case iceberg::TypeId::kList: out.push_back(FromField(type.element(), "element")); break;
    case iceberg::TypeId::kMap:
      out.push_back(FromField(type.key(), "key"));
      out.push_back(FromField(type.value(), "value"));
      break;
    default: break;
  }
  return out;
}

MappedField FromField(const iceberg::NestedField& field, const std::string& name) {
  MappedField m;
  m.field_id = field.id;
  m.names = {name};
  m.fields = ChildrenOf(*field.type);
  return m;
}

nlohmann::json FieldsToJson(const std::vector<MappedField>& fields) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : fields) {
    nlohmann::json e;
    if (f.field_id) e["field-id"] = *f.field_id;
    e["names"] = f.names;
    if (!f.fields.empty()) e["fields"] = FieldsToJson(f.fields);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

Result<NameMapping> NameMapping::Parse(std::string_view json_text) {
  nlohmann::json json = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return Corrupt("name mapping is not valid JSON");
  return FromJson(json);
}

Result<NameMapping> NameMapping::FromJson(const nlohmann::json& json) {
  ARROW_ASSIGN_OR_RAISE(auto fields, ParseFields(json, ""));
  return NameMapping(std::move(fields));
}

NameMapping NameMapping::FromSchema(const iceberg::Schema& schema) {
  return NameMapping(ChildrenOf(*schema.as_struct()));
}

nlohmann::json NameMapping::ToJson() const { return FieldsToJson(fields_); }

const MappedField* NameMapping::Find(const std::vector<MappedField>& level, std::string_view name) {
  for (const auto& f : level) {
    if (std::find(f.names.begin(), f.names.end(), name) != f.names.end()) return &f;
  }
  return nullptr;
}

}  // namespace lakesync::iceberg
