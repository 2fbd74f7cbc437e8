// An Iceberg schema: a struct of fields with ids, plus the identifier (key) fields.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lakesync/iceberg/model/types.h"

namespace lakesync::iceberg {

class Schema {
 public:
  Schema(int32_t schema_id, std::vector<NestedField> fields, std::vector<int32_t> identifier_field_ids = {});

  int32_t schema_id() const { return schema_id_; }
  const std::vector<NestedField>& fields() const { return struct_type_->fields(); }
  const TypePtr& as_struct() const { return struct_type_; }
  const std::vector<int32_t>& identifier_field_ids() const { return identifier_field_ids_; }

  // Any field at any depth; nullptr when absent.
  const NestedField* FindFieldById(int32_t id) const;
  // By full dotted name ("address.city", "tags.element", "props.key"); case-sensitive.
  const NestedField* FindFieldByName(std::string_view name) const;
  // Full dotted name of a field id, or "" when absent.
  std::string FindColumnName(int32_t id) const;
  // Position of a top-level field among fields(), or -1.
  int TopLevelIndex(int32_t id) const;
  // The highest field id at any depth (0 for an empty schema).
  int32_t HighestFieldId() const { return highest_field_id_; }

  // Checks that field ids are unique and positive, names unique per struct, identifier fields valid
  // (primitive, required, not float/double, not under a list/map/optional struct).
  Status Validate() const;

  // Same fields and identifier fields (ignores schema id).
  bool SameSchema(const Schema& other) const;

  std::string ToString() const;

 private:
  void Index(const NestedField& field, const std::string& prefix);

  int32_t schema_id_;
  TypePtr struct_type_;
  std::vector<int32_t> identifier_field_ids_;
  std::unordered_map<int32_t, const NestedField*> by_id_;
  std::unordered_map<std::string, int32_t> id_by_name_;
  std::unordered_map<int32_t, std::string> name_by_id_;
  int32_t highest_field_id_ = 0;
};

using SchemaPtr = std::shared_ptr<const Schema>;

// Reserved field ids of position delete files (spec "Position Delete Files", "Reserved Field IDs").
inline constexpr int32_t kDeleteFilePathFieldId = 2147483546;
inline constexpr int32_t kDeleteFilePosFieldId = 2147483545;

// {2147483546 file_path: required string, 2147483545 pos: required long}: what position delete
// files hold (written by iceberg/write, read by iceberg/scan).
SchemaPtr PositionDeleteSchema();

}  // namespace lakesync::iceberg
