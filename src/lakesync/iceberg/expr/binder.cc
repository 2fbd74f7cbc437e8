#include "lakesync/iceberg/expr/binder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "lakesync/common/text.h"
#include "lakesync/iceberg/expr/literal_conversion_internal.h"
#include "lakesync/iceberg/expr/parser.h"

namespace lakesync::iceberg {
namespace {

using internal::ConvertedLiteral;

std::string Join(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += '.';
    out += parts[i];
  }
  return out;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t subst = prev[j - 1] + (std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                                                  std::tolower(static_cast<unsigned char>(b[j - 1]))
                                              ? 0
                                              : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// Names of the columns a filter can use: primitive fields reachable through structs only.
void CollectFilterable(const Type& type, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& f : type.fields()) {
    const std::string name = prefix.empty() ? f.name : prefix + "." + f.name;
    if (f.type->id() == TypeId::kStruct) {
      CollectFilterable(*f.type, name, out);
    } else if (f.type->is_primitive()) {
      out.push_back(name);
    }
  }
}

Status UnknownColumn(const Schema& schema, const std::vector<std::string>& column) {
  const std::string wanted = Join(column);
  std::vector<std::string> names;
  CollectFilterable(*schema.as_struct(), "", names);
  std::string suggestion;
  size_t best = std::max<size_t>(2, wanted.size() / 3) + 1;
  for (const auto& n : names) {
    const size_t d = EditDistance(wanted, n);
    if (d < best) {
      best = d;
      suggestion = n;
    }
  }
  constexpr size_t kListed = 12;
  std::string listed;
  for (size_t i = 0; i < names.size() && i < kListed; ++i) listed += (i ? ", " : "") + names[i];
  if (names.size() > kListed) listed += fmt::format(", ... ({} in all)", names.size());
  if (names.empty()) listed = "(none)";
  return InvalidArgument("unknown column '{}' in filter{}; available columns: {}", wanted,
                         suggestion.empty() ? "" : fmt::format(" (did you mean '{}'?)", suggestion), listed);
}

const NestedField* FindChild(const Type& st, const std::string& name, bool case_sensitive, Status& error,
                             const std::string& path_for_errors) {
  const NestedField* exact = nullptr;
  std::vector<const NestedField*> folded;
  const std::string lower = AsciiLower(name);
  for (const auto& f : st.fields()) {
    if (f.name == name) exact = &f;
    if (!case_sensitive && AsciiLower(f.name) == lower) folded.push_back(&f);
  }
  if (exact) return exact;
  if (folded.size() > 1) {
    error = InvalidArgument("column '{}' is ambiguous without case sensitivity: it matches '{}' and '{}'",
                            path_for_errors, folded[0]->name, folded[1]->name);
    return nullptr;
  }
  return folded.empty() ? nullptr : folded[0];
}

Result<BoundReference> Resolve(const Schema& schema, const std::vector<std::string>& column, bool case_sensitive) {
  if (column.empty()) return InvalidArgument("a filter predicate has no column");
  BoundReference ref;
  ref.never_null = true;
  const Type* current = schema.as_struct().get();
  for (size_t i = 0; i < column.size(); ++i) {
    const std::string so_far = Join(std::vector<std::string>(column.begin(), column.begin() + static_cast<long>(i) + 1));
    Status error;
    const NestedField* f = FindChild(*current, column[i], case_sensitive, error, so_far);
    if (!error.ok()) return error;
    if (!f) return UnknownColumn(schema, column);
    ref.id_path.push_back(f->id);
    ref.name_path.push_back(f->name);
    ref.never_null = ref.never_null && f->required;
    const bool last = i + 1 == column.size();
    const TypeId id = f->type->id();
    if (!last) {
      if (id == TypeId::kStruct) {
        current = f->type.get();
        continue;
      }
      if (id == TypeId::kList || id == TypeId::kMap) {
        return InvalidArgument("column '{}' is inside the {} '{}': filters can use only top-level columns and "
                               "fields of structs", Join(column), id == TypeId::kList ? "list" : "map",
                               Join(ref.name_path));
      }
      return InvalidArgument("column '{}' has type {} and no field '{}'", Join(ref.name_path),
                             f->type->ToString(), column[i + 1]);
    }
    if (f->type->is_nested()) {
      std::vector<std::string> fields;
      if (id == TypeId::kStruct) CollectFilterable(*f->type, Join(ref.name_path), fields);
      return InvalidArgument("column '{}' is a {}; filters compare single values{}", Join(ref.name_path),
                             f->type->ToString(),
                             fields.empty() ? "" : fmt::format(", such as its field '{}'", fields.front()));
    }
    ref.field_id = f->id;
    ref.type = f->type;
  }
  ref.name = Join(ref.name_path);
  return ref;
}

BoundExpr NotNullOf(const BoundReference& ref) {
  if (ref.never_null) return BoundExpr::AlwaysTrue();
  return BoundExpr::Predicate(Operation::kNotNull, ref).ValueOrDie();
}

// The smallest and largest values of integral types, where `x < min` and `x > max` are never true.
// Folding them here also keeps partition projection (which rewrites x < v as x <= v - 1) from overflowing.
bool IntegralRange(const Type& type, int64_t& min, int64_t& max) {
  switch (type.id()) {
    case TypeId::kInt:
    case TypeId::kDate:
      min = std::numeric_limits<int32_t>::min();
      max = std::numeric_limits<int32_t>::max();
      return true;
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      min = std::numeric_limits<int64_t>::min();
      max = std::numeric_limits<int64_t>::max();
      return true;
    default: return false;
  }
}

int64_t IntegralValue(const Literal& lit) {
  return std::holds_alternative<int32_t>(lit.value()) ? lit.get<int32_t>() : lit.get<int64_t>();
}

Result<BoundExpr> Compare(Operation op, const BoundReference& ref, const ConvertedLiteral& c) {
  using K = ConvertedLiteral::Kind;
  switch (c.kind) {
    case K::kExact: {
      int64_t min, max;
      if (IntegralRange(*ref.type, min, max)) {
        const int64_t v = IntegralValue(c.value);
        if ((op == Operation::kLt && v == min) || (op == Operation::kGt && v == max)) return BoundExpr::AlwaysFalse();
        if ((op == Operation::kLtEq && v == max) || (op == Operation::kGtEq && v == min)) return NotNullOf(ref);
      }
      return BoundExpr::Predicate(op, ref, {c.value});
    }
    case K::kBetween:
      // value < constant < value + 1 in the column's type.
      switch (op) {
        case Operation::kLt:
        case Operation::kLtEq: return BoundExpr::Predicate(Operation::kLtEq, ref, {c.value});
        case Operation::kGt:
        case Operation::kGtEq: return BoundExpr::Predicate(Operation::kGt, ref, {c.value});
        case Operation::kEq: return BoundExpr::AlwaysFalse();
        default: return NotNullOf(ref);
      }
    case K::kAboveMax:
      switch (op) {
        case Operation::kLt:
        case Operation::kLtEq:
        case Operation::kNotEq: return NotNullOf(ref);
        default: return BoundExpr::AlwaysFalse();
      }
    case K::kBelowMin:
      switch (op) {
        case Operation::kGt:
        case Operation::kGtEq:
        case Operation::kNotEq: return NotNullOf(ref);
        default: return BoundExpr::AlwaysFalse();
      }
  }
  return BoundExpr::AlwaysTrue();
}

Result<BoundExpr> BindPositive(Operation op, const Expr& e, BoundReference ref);

// Binds a predicate, negated when it sits under an odd number of NOTs. Negating before binding matters:
// the rewrites below replace "unknown" (a null value) by "false" (`int_col = 5.5` becomes FALSE,
// `int_col < 1e30` becomes `int_col IS NOT NULL`), which keeps the set of selected rows only where no
// NOT is applied on top; the negated predicate gets its own exact rewrite instead.
Result<BoundExpr> BindPredicate(const Expr& e, const Schema& schema, bool case_sensitive, bool negated) {
  ARROW_ASSIGN_OR_RAISE(BoundReference ref, BindReference(schema, e.column(), case_sensitive));
  if (!negated) return BindPositive(e.op(), e, std::move(ref));
  const bool ordering = e.op() == Operation::kLt || e.op() == Operation::kLtEq || e.op() == Operation::kGt ||
                        e.op() == Operation::kGtEq;
  const bool floating = ref.type->id() == TypeId::kFloat || ref.type->id() == TypeId::kDouble;
  ARROW_ASSIGN_OR_RAISE(BoundExpr out, BindPositive(NegatePredicate(e.op()), e, ref));
  if (ordering && floating) {
    // NaN fails both `x < 5` and `x >= 5`, so NOT (x < 5) is `x >= 5 OR x IS NAN`.
    ARROW_ASSIGN_OR_RAISE(BoundExpr nan, BoundExpr::Predicate(Operation::kIsNan, ref));
    out = BoundExpr::Or(std::move(out), std::move(nan));
  }
  return out;
}

Result<BoundExpr> BindPositive(Operation op, const Expr& e, BoundReference ref) {
  switch (op) {
    case Operation::kIsNull: return ref.never_null ? BoundExpr::AlwaysFalse() : BoundExpr::Predicate(op, ref);
    case Operation::kNotNull: return NotNullOf(ref);
    case Operation::kIsNan:
    case Operation::kNotNan: return BoundExpr::Predicate(op, ref);
    case Operation::kStartsWith:
    case Operation::kNotStartsWith:
      if (ref.type->id() != TypeId::kString) {
        return InvalidArgument("LIKE needs a string column, but '{}' has type {}", ref.name, ref.type->ToString());
      }
      if (e.literals().size() != 1 || e.literals()[0].kind != UnboundLiteral::Kind::kString) {
        return InvalidArgument("LIKE on column '{}' needs one quoted pattern", ref.name);
      }
      return BoundExpr::Predicate(op, ref, {Literal(e.literals()[0].text)});
    case Operation::kIn:
    case Operation::kNotIn: {
      std::vector<Literal> values;
      for (const auto& lit : e.literals()) {
        ARROW_ASSIGN_OR_RAISE(auto c, internal::ConvertLiteral(lit, *ref.type, ref.name));
        // A constant the type cannot hold equals no value of the column.
        if (c.kind == ConvertedLiteral::Kind::kExact) values.push_back(std::move(c.value));
      }
      if (values.empty()) return op == Operation::kIn ? BoundExpr::AlwaysFalse() : NotNullOf(ref);
      if (values.size() == 1) {
        return BoundExpr::Predicate(op == Operation::kIn ? Operation::kEq : Operation::kNotEq, ref, values);
      }
      return BoundExpr::Predicate(op, ref, std::move(values));
    }
    default: break;
  }
  if (e.literals().size() != 1) {
    return InvalidArgument("{} on column '{}' needs one value", OperationName(op), ref.name);
  }
  ARROW_ASSIGN_OR_RAISE(auto c, internal::ConvertLiteral(e.literals()[0], *ref.type, ref.name));
  return Compare(op, ref, c);
}

// Binds with NOTs pushed down (De Morgan) on the way, so every predicate is bound in a NOT-free context.
Result<BoundExpr> BindTree(const Expr& e, const Schema& schema, bool case_sensitive, bool negated) {
  switch (e.op()) {
    case Operation::kTrue: return negated ? BoundExpr::AlwaysFalse() : BoundExpr::AlwaysTrue();
    case Operation::kFalse: return negated ? BoundExpr::AlwaysTrue() : BoundExpr::AlwaysFalse();
    case Operation::kNot: return BindTree(e.child(), schema, case_sensitive, !negated);
    case Operation::kAnd:
    case Operation::kOr: {
      ARROW_ASSIGN_OR_RAISE(auto left, BindTree(e.left(), schema, case_sensitive, negated));
      ARROW_ASSIGN_OR_RAISE(auto right, BindTree(e.right(), schema, case_sensitive, negated));
      const bool conjunction = (e.op() == Operation::kAnd) != negated;
      return conjunction ? BoundExpr::And(std::move(left), std::move(right))
                         : BoundExpr::Or(std::move(left), std::move(right));
    }
    default: return BindPredicate(e, schema, case_sensitive, negated);
  }
}

}  // namespace

Result<BoundReference> BindReference(const Schema& schema, const std::vector<std::string>& column,
                                     bool case_sensitive) {
  auto ref = Resolve(schema, column, case_sensitive);
  // A single quoted name with dots ("address.city") may mean the nested field when no top-level
  // column has that exact name.
  if (!ref.ok() && column.size() == 1 && column[0].find('.') != std::string::npos) {
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t dot; (dot = column[0].find('.', start)) != std::string::npos; start = dot + 1) {
      parts.push_back(column[0].substr(start, dot - start));
    }
    parts.push_back(column[0].substr(start));
    auto nested = Resolve(schema, parts, case_sensitive);
    if (nested.ok()) return nested;
  }
  return ref;
}

Result<BoundExpr> Bind(const Expr& expr, const Schema& schema, bool case_sensitive) {
  return BindTree(expr, schema, case_sensitive, /*negated=*/false);
}

Result<BoundExpr> ParseAndBind(std::string_view filter, const Schema& schema, bool case_sensitive) {
  ARROW_ASSIGN_OR_RAISE(Expr expr, ParseFilter(filter));
  auto bound = Bind(expr, schema, case_sensitive);
  if (!bound.ok()) return WithContext(bound.status(), fmt::format("filter '{}'", filter));
  return bound;
}

}  // namespace lakesync::iceberg
