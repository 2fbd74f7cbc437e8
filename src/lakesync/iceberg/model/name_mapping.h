// Iceberg name mappings (spec "Column Projection", table property `schema.name-mapping.default`):
// fallback field ids for data files written without Parquet field ids, e.g. imported files.
//
//   [{"field-id": 1, "names": ["id", "record_id"]},
//    {"field-id": 2, "names": ["data"], "fields": [{"field-id": 3, "names": ["x"]}]}]
//
// A name containing "." is a literal name, not a path. List elements are mapped under the name
// "element" and map keys/values under "key"/"value", whatever the file calls them (as Java does).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lakesync/iceberg/model/schema.h"

namespace lakesync::iceberg {

inline constexpr char kNameMappingProperty[] = "schema.name-mapping.default";

struct MappedField {
  std::optional<int32_t> field_id;
  std::vector<std::string> names;
  std::vector<MappedField> fields;  // children of a struct, list or map
};

class NameMapping {
 public:
  NameMapping() = default;
  explicit NameMapping(std::vector<MappedField> fields) : fields_(std::move(fields)) {}

  // Parses the JSON form. Returns Corrupt naming the offending entry for malformed JSON.
  static Result<NameMapping> Parse(std::string_view json_text);
  static Result<NameMapping> FromJson(const nlohmann::json& json);
  // Every field of `schema` under its current name (what "match by column name" means).
  static NameMapping FromSchema(const iceberg::Schema& schema);

  nlohmann::json ToJson() const;
  const std::vector<MappedField>& fields() const { return fields_; }

  // The mapping entry with `name` among `level`, or nullptr.
  static const MappedField* Find(const std::vector<MappedField>& level, std::string_view name);

 private:
  std::vector<MappedField> fields_;
};

}  // namespace lakesync::iceberg
