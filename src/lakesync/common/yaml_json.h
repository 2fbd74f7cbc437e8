// YAML documents as nlohmann::json, so configuration and schema files can be YAML or JSON and are
// validated by one set of code. Scalars stay strings unless they are unquoted YAML booleans, nulls or
// numbers.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "lakesync/common/status.h"

namespace lakesync {

// Parses YAML (or JSON, which is YAML). `source` names the file in errors, with line and column.
Result<nlohmann::json> ParseYamlOrJson(std::string_view text, std::string_view source);

}  // namespace lakesync
