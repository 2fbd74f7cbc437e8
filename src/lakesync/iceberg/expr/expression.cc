#include "lakesync/iceberg/expr/expression.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "lakesync/common/text.h"

namespace lakesync::iceberg {

struct Expr::Node {
  Operation op = Operation::kTrue;
  std::vector<Expr> children;
  std::vector<std::string> column;
  std::vector<UnboundLiteral> literals;
};

struct BoundExpr::Node {
  Operation op = Operation::kTrue;
  std::vector<BoundExpr> children;
  BoundReference ref;
  std::vector<Literal> literals;
};

std::string_view OperationName(Operation op) {
  switch (op) {
    case Operation::kTrue: return "true";
    case Operation::kFalse: return "false";
    case Operation::kNot: return "not";
    case Operation::kAnd: return "and";
    case Operation::kOr: return "or";
    case Operation::kIsNull: return "is_null";
    case Operation::kNotNull: return "not_null";
    case Operation::kIsNan: return "is_nan";
    case Operation::kNotNan: return "not_nan";
    case Operation::kLt: return "lt";
    case Operation::kLtEq: return "lt_eq";
    case Operation::kGt: return "gt";
    case Operation::kGtEq: return "gt_eq";
    case Operation::kEq: return "eq";
    case Operation::kNotEq: return "not_eq";
    case Operation::kIn: return "in";
    case Operation::kNotIn: return "not_in";
    case Operation::kStartsWith: return "starts_with";
    case Operation::kNotStartsWith: return "not_starts_with";
  }
  return "?";
}

bool IsUnaryPredicate(Operation op) {
  return op == Operation::kIsNull || op == Operation::kNotNull || op == Operation::kIsNan ||
         op == Operation::kNotNan;
}

bool IsLiteralPredicate(Operation op) {
  switch (op) {
    case Operation::kLt:
    case Operation::kLtEq:
    case Operation::kGt:
    case Operation::kGtEq:
    case Operation::kEq:
    case Operation::kNotEq:
    case Operation::kStartsWith:
    case Operation::kNotStartsWith: return true;
    default: return false;
  }
}

bool IsSetPredicate(Operation op) { return op == Operation::kIn || op == Operation::kNotIn; }

bool IsPredicate(Operation op) { return IsUnaryPredicate(op) || IsLiteralPredicate(op) || IsSetPredicate(op); }

Operation NegatePredicate(Operation op) {
  switch (op) {
    case Operation::kTrue: return Operation::kFalse;
    case Operation::kFalse: return Operation::kTrue;
    case Operation::kIsNull: return Operation::kNotNull;
    case Operation::kNotNull: return Operation::kIsNull;
    case Operation::kIsNan: return Operation::kNotNan;
    case Operation::kNotNan: return Operation::kIsNan;
    case Operation::kLt: return Operation::kGtEq;
    case Operation::kLtEq: return Operation::kGt;
    case Operation::kGt: return Operation::kLtEq;
    case Operation::kGtEq: return Operation::kLt;
    case Operation::kEq: return Operation::kNotEq;
    case Operation::kNotEq: return Operation::kEq;
    case Operation::kIn: return Operation::kNotIn;
    case Operation::kNotIn: return Operation::kIn;
    case Operation::kStartsWith: return Operation::kNotStartsWith;
    case Operation::kNotStartsWith: return Operation::kStartsWith;
    default: return op;
  }
}

Operation FlipComparison(Operation op) {
  switch (op) {
    case Operation::kLt: return Operation::kGt;
    case Operation::kLtEq: return Operation::kGtEq;
    case Operation::kGt: return Operation::kLt;
    case Operation::kGtEq: return Operation::kLtEq;
    default: return op;
  }
}

namespace {

std::string QuoteString(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

bool IsReservedWord(std::string_view word) {
  static const std::set<std::string> kWords = {"and",  "or",   "not",       "is",        "null",   "nan",
                                               "in",   "between", "like",   "escape",    "true",   "false",
                                               "date", "timestamp", "timestamptz"};
  const std::string lower = AsciiLower(word);
  return kWords.count(lower) > 0;
}

// A column part is written bare when the parser would read it back as the same identifier.
std::string QuoteIdentifier(std::string_view part) {
  bool plain = !part.empty() && (std::isalpha(static_cast<unsigned char>(part[0])) || part[0] == '_') &&
               !IsReservedWord(part);
  for (char c : part) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') plain = false;
  }
  if (plain) return std::string(part);
  std::string out = "\"";
  for (char c : part) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string ColumnText(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += '.';
    out += QuoteIdentifier(parts[i]);
  }
  return out;
}

std::string_view ComparisonSymbol(Operation op) {
  switch (op) {
    case Operation::kLt: return "<";
    case Operation::kLtEq: return "<=";
    case Operation::kGt: return ">";
    case Operation::kGtEq: return ">=";
    case Operation::kEq: return "=";
    case Operation::kNotEq: return "!=";
    default: return "?";
  }
}

// `prefix%` with the LIKE wildcards in the prefix escaped by a backslash.
std::string LikePattern(std::string_view prefix, bool& needs_escape) {
  std::string out;
  needs_escape = false;
  for (char c : prefix) {
    if (c == '%' || c == '_' || c == '\\') {
      out += '\\';
      needs_escape = true;
    }
    out += c;
  }
  return out + "%";
}

template <typename E, typename Render>
std::string RenderTree(const E& e, const Render& predicate) {
  switch (e.op()) {
    case Operation::kTrue: return "TRUE";
    case Operation::kFalse: return "FALSE";
    case Operation::kNot: return "NOT (" + RenderTree(e.child(), predicate) + ")";
    case Operation::kAnd: {
      auto side = [&](const E& s) {
        std::string t = RenderTree(s, predicate);
        return s.op() == Operation::kOr ? "(" + t + ")" : t;
      };
      return side(e.left()) + " AND " + side(e.right());
    }
    case Operation::kOr: return RenderTree(e.left(), predicate) + " OR " + RenderTree(e.right(), predicate);
    default: return predicate(e);
  }
}

template <typename Lits, typename LitText>
std::string RenderPredicate(Operation op, const std::string& column, const Lits& lits, const LitText& text) {
  switch (op) {
    case Operation::kIsNull: return column + " IS NULL";
    case Operation::kNotNull: return column + " IS NOT NULL";
    case Operation::kIsNan: return column + " IS NAN";
    case Operation::kNotNan: return column + " IS NOT NAN";
    case Operation::kIn:
    case Operation::kNotIn: {
      std::string out = column + (op == Operation::kIn ? " IN (" : " NOT IN (");
      for (size_t i = 0; i < lits.size(); ++i) {
        if (i) out += ", ";
        out += text(lits[i]);
      }
      return out + ")";
    }
    default: return column + " " + std::string(ComparisonSymbol(op)) + " " + text(lits.at(0));
  }
}

std::string LikeText(Operation op, const std::string& column, const std::string& prefix) {
  bool escape = false;
  const std::string pattern = LikePattern(prefix, escape);
  return column + (op == Operation::kStartsWith ? " LIKE " : " NOT LIKE ") + QuoteString(pattern) +
         (escape ? " ESCAPE '\\'" : "");
}

}  // namespace

std::string UnboundLiteral::ToString() const {
  switch (kind) {
    case Kind::kInteger:
    case Kind::kDecimal:
    case Kind::kFloat: return text;
    case Kind::kString: return QuoteString(text);
    case Kind::kBoolean: return text == "true" ? "TRUE" : "FALSE";
    case Kind::kDate: return "DATE " + QuoteString(text);
    case Kind::kTimestamp: return "TIMESTAMP " + QuoteString(text);
    case Kind::kTimestampTz: return "TIMESTAMPTZ " + QuoteString(text);
  }
  return text;
}

// ---- Expr ----

Expr::Expr() : Expr(AlwaysTrue()) {}

Expr Expr::AlwaysTrue() {
  static const auto kNode = std::make_shared<const Node>(Node{Operation::kTrue, {}, {}, {}});
  return Expr(kNode);
}

Expr Expr::AlwaysFalse() {
  static const auto kNode = std::make_shared<const Node>(Node{Operation::kFalse, {}, {}, {}});
  return Expr(kNode);
}

Expr Expr::Not(Expr child) {
  return Expr(std::make_shared<const Node>(Node{Operation::kNot, {std::move(child)}, {}, {}}));
}

Expr Expr::And(Expr left, Expr right) {
  return Expr(std::make_shared<const Node>(Node{Operation::kAnd, {std::move(left), std::move(right)}, {}, {}}));
}

Expr Expr::Or(Expr left, Expr right) {
  return Expr(std::make_shared<const Node>(Node{Operation::kOr, {std::move(left), std::move(right)}, {}, {}}));
}

Expr Expr::Predicate(Operation op, std::vector<std::string> column, std::vector<UnboundLiteral> literals) {
  return Expr(std::make_shared<const Node>(Node{op, {}, std::move(column), std::move(literals)}));
}

Operation Expr::op() const { return node_->op; }
const Expr& Expr::left() const { return node_->children.at(0); }
const Expr& Expr::right() const { return node_->children.at(1); }
const std::vector<std::string>& Expr::column() const { return node_->column; }
const std::vector<UnboundLiteral>& Expr::literals() const { return node_->literals; }

std::string Expr::ColumnName() const {
  std::string out;
  for (size_t i = 0; i < node_->column.size(); ++i) {
    if (i) out += '.';
    out += node_->column[i];
  }
  return out;
}

std::string Expr::ToString() const {
  return RenderTree(*this, [](const Expr& e) {
    const std::string column = ColumnText(e.column());
    if (e.op() == Operation::kStartsWith || e.op() == Operation::kNotStartsWith) {
      return LikeText(e.op(), column, e.literals().at(0).text);
    }
    return RenderPredicate(e.op(), column, e.literals(), [](const UnboundLiteral& l) { return l.ToString(); });
  });
}

// ---- BoundExpr ----

BoundExpr::BoundExpr() : BoundExpr(AlwaysTrue()) {}

BoundExpr BoundExpr::AlwaysTrue() {
  static const auto kNode = std::make_shared<const Node>(Node{Operation::kTrue, {}, {}, {}});
  return BoundExpr(kNode);
}

BoundExpr BoundExpr::AlwaysFalse() {
  static const auto kNode = std::make_shared<const Node>(Node{Operation::kFalse, {}, {}, {}});
  return BoundExpr(kNode);
}

BoundExpr BoundExpr::Not(BoundExpr child) {
  if (child.op() == Operation::kTrue) return AlwaysFalse();
  if (child.op() == Operation::kFalse) return AlwaysTrue();
  if (child.op() == Operation::kNot) return child.child();
  return BoundExpr(std::make_shared<const Node>(Node{Operation::kNot, {std::move(child)}, {}, {}}));
}

BoundExpr BoundExpr::And(BoundExpr left, BoundExpr right) {
  if (left.op() == Operation::kFalse || right.op() == Operation::kFalse) return AlwaysFalse();
  if (left.op() == Operation::kTrue) return right;
  if (right.op() == Operation::kTrue) return left;
  return BoundExpr(std::make_shared<const Node>(Node{Operation::kAnd, {std::move(left), std::move(right)}, {}, {}}));
}

BoundExpr BoundExpr::Or(BoundExpr left, BoundExpr right) {
  if (left.op() == Operation::kTrue || right.op() == Operation::kTrue) return AlwaysTrue();
  if (left.op() == Operation::kFalse) return right;
  if (right.op() == Operation::kFalse) return left;
  return BoundExpr(std::make_shared<const Node>(Node{Operation::kOr, {std::move(left), std::move(right)}, {}, {}}));
}

Result<BoundExpr> BoundExpr::Predicate(Operation op, BoundReference ref, std::vector<Literal> literals) {
  if (!IsPredicate(op)) return InvalidArgument("'{}' is not a predicate", OperationName(op));
  if (!ref.type) return InvalidArgument("column '{}' has no type", ref.name);
  const size_t n = literals.size();
  if (IsUnaryPredicate(op) && n != 0) {
    return InvalidArgument("{} on column '{}' takes no value, got {}", OperationName(op), ref.name, n);
  }
  if (IsLiteralPredicate(op) && n != 1) {
    return InvalidArgument("{} on column '{}' takes one value, got {}", OperationName(op), ref.name, n);
  }
  if (IsSetPredicate(op) && n == 0) {
    return InvalidArgument("{} on column '{}' needs at least one value", OperationName(op), ref.name);
  }
  for (const auto& lit : literals) {
    if (lit.is_null()) {
      return InvalidArgument("{} on column '{}' cannot compare with null; use IS NULL / IS NOT NULL",
                             OperationName(op), ref.name);
    }
    if (!LiteralMatchesType(lit, *ref.type)) {
      return InvalidArgument("a value given to {} does not match the type {} of column '{}'", OperationName(op),
                             ref.type->ToString(), ref.name);
    }
    const bool nan = (std::holds_alternative<double>(lit.value()) && std::isnan(lit.get<double>())) ||
                     (std::holds_alternative<float>(lit.value()) && std::isnan(lit.get<float>()));
    if (nan) return InvalidArgument("column '{}' cannot be compared with NaN; use IS NAN / IS NOT NAN", ref.name);
  }
  if ((op == Operation::kStartsWith || op == Operation::kNotStartsWith) && ref.type->id() != TypeId::kString) {
    return InvalidArgument("LIKE needs a string column, but '{}' is {}", ref.name, ref.type->ToString());
  }
  if ((op == Operation::kIsNan || op == Operation::kNotNan) && ref.type->id() != TypeId::kFloat &&
      ref.type->id() != TypeId::kDouble) {
    return InvalidArgument("IS NAN applies to float and double columns, but '{}' is {}", ref.name,
                           ref.type->ToString());
  }
  if (IsSetPredicate(op)) {
    std::sort(literals.begin(), literals.end(), [](const Literal& a, const Literal& b) { return a.Compare(b) < 0; });
    literals.erase(std::unique(literals.begin(), literals.end(),
                               [](const Literal& a, const Literal& b) { return a.Compare(b) == 0; }),
                   literals.end());
  }
  return BoundExpr(std::make_shared<const Node>(Node{op, {}, std::move(ref), std::move(literals)}));
}

Operation BoundExpr::op() const { return node_->op; }
const BoundExpr& BoundExpr::left() const { return node_->children.at(0); }
const BoundExpr& BoundExpr::right() const { return node_->children.at(1); }
const BoundReference& BoundExpr::ref() const { return node_->ref; }
const std::vector<Literal>& BoundExpr::literals() const { return node_->literals; }

std::string BoundExpr::ToString() const {
  return RenderTree(*this, [](const BoundExpr& e) {
    const Type& type = *e.ref().type;
    const std::string column = ColumnText(e.ref().name_path.empty() ? std::vector<std::string>{e.ref().name}
                                                                    : e.ref().name_path);
    if (e.op() == Operation::kStartsWith || e.op() == Operation::kNotStartsWith) {
      return LikeText(e.op(), column, e.literal().get<std::string>());
    }
    auto text = [&type](const Literal& l) -> std::string {
      switch (type.id()) {
        case TypeId::kBoolean: return l.get<bool>() ? "TRUE" : "FALSE";
        case TypeId::kInt:
        case TypeId::kLong:
        case TypeId::kFloat:
        case TypeId::kDouble:
        case TypeId::kDecimal: return l.ToString(type);
        default: return QuoteString(l.ToString(type));
      }
    };
    return RenderPredicate(e.op(), column, e.literals(), text);
  });
}

// ---- rewrites ----

namespace {

bool IsFloating(const Type& type) { return type.id() == TypeId::kFloat || type.id() == TypeId::kDouble; }

BoundExpr Negate(const BoundExpr& e);

BoundExpr PushDown(const BoundExpr& e) {
  switch (e.op()) {
    case Operation::kNot: return Negate(e.child());
    case Operation::kAnd: return BoundExpr::And(PushDown(e.left()), PushDown(e.right()));
    case Operation::kOr: return BoundExpr::Or(PushDown(e.left()), PushDown(e.right()));
    default: return e;
  }
}

BoundExpr Negate(const BoundExpr& e) {
  switch (e.op()) {
    case Operation::kTrue: return BoundExpr::AlwaysFalse();
    case Operation::kFalse: return BoundExpr::AlwaysTrue();
    case Operation::kNot: return PushDown(e.child());
    case Operation::kAnd: return BoundExpr::Or(Negate(e.left()), Negate(e.right()));
    case Operation::kOr: return BoundExpr::And(Negate(e.left()), Negate(e.right()));
    default: break;
  }
  const Operation negated = NegatePredicate(e.op());
  // Predicate() cannot fail here: the same reference and literals were valid for the original operator.
  BoundExpr out = BoundExpr::Predicate(negated, e.ref(), e.literals()).ValueOrDie();
  const bool ordering = e.op() == Operation::kLt || e.op() == Operation::kLtEq || e.op() == Operation::kGt ||
                        e.op() == Operation::kGtEq;
  if (ordering && IsFloating(*e.ref().type)) {
    // NaN fails `x < 5` and `x >= 5` alike, so it must be added back to the negation.
    out = BoundExpr::Or(out, BoundExpr::Predicate(Operation::kIsNan, e.ref()).ValueOrDie());
  }
  return out;
}

void CollectIds(const BoundExpr& e, std::set<int32_t>& ids) {
  switch (e.op()) {
    case Operation::kTrue:
    case Operation::kFalse: return;
    case Operation::kNot: CollectIds(e.child(), ids); return;
    case Operation::kAnd:
    case Operation::kOr:
      CollectIds(e.left(), ids);
      CollectIds(e.right(), ids);
      return;
    default: ids.insert(e.ref().field_id);
  }
}

}  // namespace

BoundExpr RewriteNot(const BoundExpr& expr) { return PushDown(expr); }

std::vector<int32_t> ReferencedFieldIds(const BoundExpr& expr) {
  std::set<int32_t> ids;
  CollectIds(expr, ids);
  return {ids.begin(), ids.end()};
}

}  // namespace lakesync::iceberg
