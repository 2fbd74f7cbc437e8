// Binding: resolves an unbound filter's columns against a schema and converts its constants to the
// columns' Iceberg types.
#pragma once

#include <string_view>
#include <vector>

#include "lakesync/iceberg/expr/expression.h"
#include "lakesync/iceberg/model/schema.h"

namespace lakesync::iceberg {

// Binds `expr` to `schema`. Columns are top-level fields or fields of (nested) structs, named by their
// parts ("address"."city"); fields inside lists and maps cannot be filtered on. Constants are converted
// to the column's type: strings compared with date, time, timestamp, uuid, decimal and numeric columns are
// parsed; DATE/TIMESTAMP constants are converted between date and timestamp columns; constants the type
// cannot hold exactly are rewritten exactly (`int_col < 5.5` becomes `int_col <= 5`, `int_col = 5.5`
// becomes FALSE). Predicates that are decided by the schema alone are folded (`required_col IS NULL` is
// FALSE). The result has its NOTs pushed down (RewriteNot) and its constants folded.
//
// Those rewrites may turn "unknown" (a null value) into "false", which selects the same rows only when no
// NOT is applied on top, so binding pushes NOTs down before rewriting. To negate a filter, negate the
// unbound Expr (Expr::Not) and bind that; BoundExpr::Not on a result of Bind may select rows whose
// columns are null.
//
// Returns InvalidArgument for an unknown column (naming it and listing available ones), an ambiguous
// case-insensitive name, a struct/list/map column, and a constant that cannot be compared with the
// column's type (naming column, type and value).
Result<BoundExpr> Bind(const Expr& expr, const Schema& schema, bool case_sensitive = true);

// Resolves one column (by name parts) as Bind does.
Result<BoundReference> BindReference(const Schema& schema, const std::vector<std::string>& column,
                                     bool case_sensitive = true);

// Parses and binds in one step; errors carry the filter text as context.
Result<BoundExpr> ParseAndBind(std::string_view filter, const Schema& schema, bool case_sensitive = true);

}  // namespace lakesync::iceberg
