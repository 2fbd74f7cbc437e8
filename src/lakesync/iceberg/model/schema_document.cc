#include "lakesync/iceberg/model/schema_document.h"

#include "lakesync/common/yaml_json.h"
#include "lakesync/iceberg/model/json_serde.h"

namespace lakesync::iceberg {
namespace {

using json = nlohmann::json;

bool HasAnyId(const json& type) {
  if (!type.is_object()) return false;
  if (type.contains("element-id") || type.contains("key-id")) return true;
  if (auto it = type.find("fields"); it != type.end() && it->is_array()) {
    for (const auto& f : *it) {
      if (f.contains("id")) return true;
      if (f.contains("type") && HasAnyId(f["type"])) return true;
    }
  }
  if (type.contains("element") && HasAnyId(type["element"])) return true;
  if (type.contains("value") && HasAnyId(type["value"])) return true;
  return false;
}

// A string member or a fallback; json::value() would throw when the member has another type.
std::string StringMember(const json& j, const char* key, const std::string& fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// Assigns ids breadth-first per struct (a struct's own fields, then their children), like Java.
Status AssignIds(json& type, int32_t& next) {
  if (!type.is_object()) return Status::OK();
  const std::string kind = StringMember(type, "type", "");
  if (kind == "struct") {
    if (!type.contains("fields") || !type["fields"].is_array()) return InvalidArgument("struct without 'fields'");
    for (auto& f : type["fields"]) {
      if (!f.is_object()) return InvalidArgument("schema field must be an object, got {}", f.dump());
      f["id"] = ++next;
      if (!f.contains("required")) f["required"] = false;
    }
    for (auto& f : type["fields"]) {
      if (!f.contains("type")) return InvalidArgument("schema field '{}' has no type", StringMember(f, "name", "?"));
      ARROW_RETURN_NOT_OK(AssignIds(f["type"], next));
    }
  } else if (kind == "list") {
    type["element-id"] = ++next;
    if (!type.contains("element-required")) type["element-required"] = false;
    if (type.contains("element")) ARROW_RETURN_NOT_OK(AssignIds(type["element"], next));
  } else if (kind == "map") {
    type["key-id"] = ++next;
    type["value-id"] = ++next;
    if (!type.contains("value-required")) type["value-required"] = false;
    if (type.contains("key")) ARROW_RETURN_NOT_OK(AssignIds(type["key"], next));
    if (type.contains("value")) ARROW_RETURN_NOT_OK(AssignIds(type["value"], next));
  }
  return Status::OK();
}

}  // namespace

Result<SchemaPtr> ParseSchemaDocument(std::string_view text, std::string_view source) {
  ARROW_ASSIGN_OR_RAISE(json doc, ParseYamlOrJson(text, source));
  if (!doc.is_object() || !doc.contains("fields")) {
    return InvalidArgument("{}: a schema needs a 'fields' list", source);
  }
  if (!doc.contains("type")) doc["type"] = "struct";
  std::vector<std::string> identifier_names;
  if (auto it = doc.find("identifier-fields"); it != doc.end()) {
    if (!it->is_array()) return InvalidArgument("{}: 'identifier-fields' must be a list of column names", source);
    for (const auto& n : *it) {
      if (!n.is_string()) return InvalidArgument("{}: 'identifier-fields' must be a list of column names", source);
      identifier_names.push_back(n.get<std::string>());
    }
    doc.erase("identifier-fields");
  }
  if (!HasAnyId(doc)) {
    int32_t next = 0;
    LS_RETURN_NOT_OK_CTX(AssignIds(doc, next), "{}", source);
  }
  auto parsed = SchemaFromJson(doc);
  if (!parsed.ok()) {
    // In a user's schema file an unknown type or a malformed field is bad input, not a corrupt file.
    return InvalidArgument("{}: {}", source, parsed.status().message());
  }
  auto schema = *parsed;
  if (!identifier_names.empty()) {
    std::vector<int32_t> ids;
    for (const auto& n : identifier_names) {
      const NestedField* f = schema->FindFieldByName(n);
      if (!f) return InvalidArgument("{}: identifier field '{}' is not a column", source, n);
      ids.push_back(f->id);
    }
    schema = std::make_shared<const Schema>(schema->schema_id(), schema->fields(), ids);
  }
  LS_RETURN_NOT_OK_CTX(schema->Validate(), "{}", source);
  return schema;
}

}  // namespace lakesync::iceberg
