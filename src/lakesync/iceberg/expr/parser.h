// Parses the SQL-like row filters users type (`lakesync scan --filter`, job configs' `filter:` key,
// which Beam documents as Calcite predicate syntax): `id > 5 AND status = 'ACTIVE'`.
//
// Grammar (keywords case-insensitive; NOT binds tighter than AND, AND tighter than OR):
//   filter     := or
//   or         := and (OR and)*
//   and        := not (AND not)*
//   not        := NOT not | primary
//   primary    := '(' or ')' | TRUE | FALSE | predicate
//   predicate  := column cmp value | value cmp column
//               | column IS [NOT] NULL | column IS [NOT] NAN
//               | column [NOT] IN '(' value (',' value)* ')'
//               | column [NOT] BETWEEN value AND value
//               | column [NOT] LIKE 'prefix%' [ESCAPE 'c']
//               | column                      -- a boolean column: `active` means `active = TRUE`
//   cmp        := = | == | != | <> | < | <= | > | >=
//   column     := part ('.' part)*   with part an identifier, "double quoted" or `backquoted`
//                                    (doubling the quote inside escapes it)
//   value      := [+|-] number | 'string' ('' escapes a quote) | TRUE | FALSE
//               | DATE 'yyyy-mm-dd' | TIMESTAMP 'yyyy-mm-dd hh:mm:ss[.f]' | TIMESTAMPTZ '...[+hh:mm]'
//               | '(' value ')'
//
// LIKE accepts only prefix patterns (`'abc%'`) and patterns without wildcards (exact match); any other
// use of % or _ is an error, because Iceberg can prune files only for prefixes.
#pragma once

#include <string_view>

#include "lakesync/iceberg/expr/expression.h"

namespace lakesync::iceberg {

// Returns InvalidArgument for malformed input, naming the 1-based character position, the offending
// token and the filter text ("unexpected ')' at position 8 in filter 'a > (1))': expected AND, OR or
// the end of the filter"), and for constructs it does not support (comparisons with NULL, two
// columns, non-prefix LIKE patterns).
Result<Expr> ParseFilter(std::string_view text);

}  // namespace lakesync::iceberg
