#pragma once

#include <arrow/type_fwd.h>

#include <string>

#include "lakesync/common/status.h"

namespace lakesync::tabular {

// Appends s as a JSON string literal (quoted and escaped).
void AppendJsonString(std::string& out, std::string_view s);
// Appends the JSON Lines rendering (see tabular.h) of array[i] to out.
Status AppendJsonValue(std::string& out, const arrow::Array& array, int64_t i);
// Appends a human-readable cell for the text table format.
Status AppendDisplayValue(std::string& out, const arrow::Array& array, int64_t i);

}  // namespace lakesync::tabular
