// Filter expressions over Iceberg tables, in two stages:
//   Expr       unbound: column names as typed by a user and constants as typed (UnboundLiteral);
//   BoundExpr  bound to a schema (see binder.h): field ids, Iceberg types and constants converted
//              to the field's type (model Literal).
// Both are immutable trees of shared nodes, cheap to copy. Unbound trees keep what was typed (so that
// binding reports errors in every branch); the BoundExpr And/Or/Not factories fold the constants TRUE
// and FALSE as they build, so a bound `x AND TRUE` is `x`.
//
// Truth values follow SQL: a comparison with a null value is unknown, and a row filter keeps only rows
// whose filter is true. NaN follows IEEE 754: every ordering comparison and `=` with NaN is false and
// `!=` is true; `IS NAN` / `IS NOT NAN` are unknown for null. These rules are shared by every evaluator
// (row filter, metrics, partitions), which is what lets the scan planner skip files safely.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lakesync/iceberg/model/literal.h"
#include "lakesync/iceberg/model/types.h"

namespace lakesync::iceberg {

enum class Operation {
  kTrue,
  kFalse,
  kNot,
  kAnd,
  kOr,
  kIsNull,
  kNotNull,
  kIsNan,
  kNotNan,
  kLt,
  kLtEq,
  kGt,
  kGtEq,
  kEq,
  kNotEq,
  kIn,
  kNotIn,
  kStartsWith,
  kNotStartsWith,
};

// Iceberg's names for operations ("lt", "not_null", "starts_with", ...), as in its REST expressions.
std::string_view OperationName(Operation op);
// is_null, not_null, is_nan, not_nan.
bool IsUnaryPredicate(Operation op);
// lt, lt_eq, gt, gt_eq, eq, not_eq, starts_with, not_starts_with: one constant.
bool IsLiteralPredicate(Operation op);
// in, not_in: a set of constants.
bool IsSetPredicate(Operation op);
bool IsPredicate(Operation op);
// The predicate that is true exactly when `op` is false for a non-null, non-NaN value
// (lt -> gt_eq, in -> not_in, is_null -> not_null, ...). Only for predicates.
Operation NegatePredicate(Operation op);
// The comparison with its sides swapped: `5 < x` is `x > 5`. Only for lt/lt_eq/gt/gt_eq/eq/not_eq.
Operation FlipComparison(Operation op);

// A constant as written in a filter, before binding gives it the column's type. `text` keeps the
// exact spelling so that decimals and timestamps convert without a detour through double.
struct UnboundLiteral {
  enum class Kind { kInteger, kDecimal, kFloat, kString, kBoolean, kDate, kTimestamp, kTimestampTz };
  Kind kind = Kind::kString;
  std::string text;  // digits with optional sign/point/exponent, the string's value, "true"/"false"

  static UnboundLiteral Integer(std::string text) { return {Kind::kInteger, std::move(text)}; }
  static UnboundLiteral String(std::string text) { return {Kind::kString, std::move(text)}; }
  static UnboundLiteral Boolean(bool v) { return {Kind::kBoolean, v ? "true" : "false"}; }

  // The literal as it would be typed in a filter: 5, 1.5e3, 'it''s', TRUE, DATE '2024-01-01'.
  std::string ToString() const;
  bool operator==(const UnboundLiteral&) const = default;
};

// An unbound expression. A predicate names its column by parts ("address"."city" is {address, city}).
class Expr {
 public:
  // The constant TRUE.
  Expr();

  static Expr AlwaysTrue();
  static Expr AlwaysFalse();
  static Expr Not(Expr child);
  static Expr And(Expr left, Expr right);
  static Expr Or(Expr left, Expr right);
  static Expr Predicate(Operation op, std::vector<std::string> column, std::vector<UnboundLiteral> literals = {});

  Operation op() const;
  // kNot: child(); kAnd/kOr: left(), right().
  const Expr& child() const { return left(); }
  const Expr& left() const;
  const Expr& right() const;
  // Predicates only.
  const std::vector<std::string>& column() const;
  std::string ColumnName() const;  // parts joined with '.'
  const std::vector<UnboundLiteral>& literals() const;

  // SQL-like rendering that ParseFilter reads back to an equal expression.
  std::string ToString() const;

  struct Node;

 private:
  explicit Expr(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  std::shared_ptr<const Node> node_;
};

// A column resolved against a schema.
struct BoundReference {
  int32_t field_id = 0;
  std::string name;  // full dotted name, for messages and rendering
  TypePtr type;
  // True when the value can never be null: the field and every struct around it are required.
  bool never_null = false;
  // Field ids and names from the top-level field down to this one (one entry for a top-level column).
  // Row filters use them to find nested columns inside struct arrays.
  std::vector<int32_t> id_path;
  std::vector<std::string> name_path;
};

class BoundExpr {
 public:
  // The constant TRUE.
  BoundExpr();

  static BoundExpr AlwaysTrue();
  static BoundExpr AlwaysFalse();
  static BoundExpr Not(BoundExpr child);
  static BoundExpr And(BoundExpr left, BoundExpr right);
  static BoundExpr Or(BoundExpr left, BoundExpr right);
  // Literals must match the reference's type (LiteralMatchesType); set predicates get theirs sorted
  // and de-duplicated. Returns InvalidArgument for a wrong number or type of literals.
  static Result<BoundExpr> Predicate(Operation op, BoundReference ref, std::vector<Literal> literals = {});

  Operation op() const;
  bool IsConstant() const { return op() == Operation::kTrue || op() == Operation::kFalse; }
  const BoundExpr& child() const { return left(); }
  const BoundExpr& left() const;
  const BoundExpr& right() const;
  // Predicates only.
  const BoundReference& ref() const;
  const std::vector<Literal>& literals() const;
  const Literal& literal() const { return literals().at(0); }

  // SQL-like rendering with values in Iceberg's text forms: `ts >= '2024-01-01T00:00:00' AND id IN (1, 2)`.
  std::string ToString() const;

  struct Node;

 private:
  explicit BoundExpr(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  std::shared_ptr<const Node> node_;
};

// Pushes every NOT down to the predicates (De Morgan, negated operators), so the result contains no
// kNot. For float and double columns `NOT (x < 5)` becomes `x >= 5 OR x IS NAN`, because NaN fails both
// comparisons. Evaluators that reason about bounds need this form.
BoundExpr RewriteNot(const BoundExpr& expr);

// The field ids the expression reads, ascending and unique (for projecting the columns a filter needs).
std::vector<int32_t> ReferencedFieldIds(const BoundExpr& expr);

}  // namespace lakesync::iceberg
