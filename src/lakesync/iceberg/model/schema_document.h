// Schema files users write for `lakesync table create --schema FILE` (JSON or YAML):
//   - an Iceberg schema as metadata stores it (fields with ids), or
//   - the same without ids: {"fields": [{"name": "id", "type": "long", "required": true}, ...],
//     "identifier-field-ids" or "identifier-fields": ["id"]}; nested types may omit element-id,
//     key-id and value-id too. Missing ids are assigned the way Java assigns fresh ids.
#pragma once

#include <string_view>

#include "lakesync/iceberg/model/schema.h"

namespace lakesync::iceberg {

Result<SchemaPtr> ParseSchemaDocument(std::string_view text, std::string_view source);

}  // namespace lakesync::iceberg
