// Table name templates for dynamic destinations, as Beam's Managed Iceberg write takes them:
// "db.orders_{region}" routes each row to the table named by its `region` value, and "{a.b}" names a
// nested field. A template has the shape of a table identifier (namespace.table, every part
// non-empty) once its placeholders are filled.
//
// Syntax: text outside braces is literal; `{` opens a placeholder closed by the next `}`; braces do
// not nest and cannot be escaped. A placeholder is a column path: one or more non-empty names joined
// by '.', with no whitespace and no braces.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lakesync/common/status.h"

namespace lakesync::sink {

// True when `table` contains a brace, i.e. is meant as a template (valid or not).
bool IsTemplate(std::string_view table);

// Checks the syntax above and that the rendered name is a table identifier.
// Errors: InvalidArgument naming `table` and the offending position or placeholder.
Status ValidateTableTemplate(std::string_view table);

// The placeholders in order of first appearance, without duplicates ("{a.b}" → "a.b"). For a template
// that ValidateTableTemplate refuses, the well-formed placeholders found before the error.
std::vector<std::string> TemplatePlaceholders(std::string_view table);

// Returns the value of a placeholder for the row being routed, or nullopt when it is null or missing.
using PlaceholderLookup = std::function<std::optional<std::string>(std::string_view placeholder)>;

// Fills the placeholders; a name without placeholders comes back unchanged.
// Errors: InvalidArgument, naming the template and the placeholder, when the template is invalid, a
// value is null or missing, or a value cannot be part of a table name: empty, or containing '.',
// '/', '\', a brace or a control character (a '.' would move the namespace boundary).
Result<std::string> RenderTableTemplate(std::string_view table, const PlaceholderLookup& lookup);

}  // namespace lakesync::sink
