#include "lakesync/iceberg/expr/literal_evaluator.h"

#include <cmath>

#include "lakesync/iceberg/expr/bounds_internal.h"

namespace lakesync::iceberg {
namespace {

using Tri = std::optional<bool>;

Result<Literal> Normalize(const Literal& v, const BoundReference& ref) {
  if (LiteralMatchesType(v, *ref.type)) return v;
  const TypeId id = ref.type->id();
  if (std::holds_alternative<int32_t>(v.value()) &&
      (id == TypeId::kLong || id == TypeId::kTimestamp || id == TypeId::kTimestampTz || id == TypeId::kTime)) {
    return Literal(static_cast<int64_t>(v.get<int32_t>()));
  }
  if (std::holds_alternative<float>(v.value()) && id == TypeId::kDouble) {
    return Literal(static_cast<double>(v.get<float>()));
  }
  return InvalidArgument("a value of column '{}' does not match its type {}", ref.name, ref.type->ToString());
}

Result<Tri> Predicate(const BoundExpr& e, const Literal* raw) {
  const bool is_null = raw == nullptr || raw->is_null();
  switch (e.op()) {
    case Operation::kIsNull: return Tri(is_null);
    case Operation::kNotNull: return Tri(!is_null);
    default: break;
  }
  if (is_null) return Tri();
  ARROW_ASSIGN_OR_RAISE(Literal v, Normalize(*raw, e.ref()));
  const bool nan = internal::IsNaNLiteral(v);
  switch (e.op()) {
    case Operation::kIsNan: return Tri(nan);
    case Operation::kNotNan: return Tri(!nan);
    case Operation::kStartsWith:
    case Operation::kNotStartsWith: {
      const bool starts = std::string_view(v.get<std::string>()).starts_with(e.literal().get<std::string>());
      return Tri(e.op() == Operation::kStartsWith ? starts : !starts);
    }
    case Operation::kIn:
    case Operation::kNotIn: {
      bool found = false;
      for (const auto& lit : e.literals()) found = found || internal::CompareOrdered(v, lit) == 0;
      return Tri(e.op() == Operation::kIn ? found : !found);
    }
    default: break;
  }
  const auto cmp = internal::CompareOrdered(v, e.literal());
  if (!cmp) return Tri(e.op() == Operation::kNotEq);  // NaN: only != holds
  switch (e.op()) {
    case Operation::kLt: return Tri(*cmp < 0);
    case Operation::kLtEq: return Tri(*cmp <= 0);
    case Operation::kGt: return Tri(*cmp > 0);
    case Operation::kGtEq: return Tri(*cmp >= 0);
    case Operation::kEq: return Tri(*cmp == 0);
    case Operation::kNotEq: return Tri(*cmp != 0);
    default: return InvalidArgument("cannot evaluate operation {}", OperationName(e.op()));
  }
}

Result<Tri> Eval(const BoundExpr& e, const FieldLookup& lookup) {
  switch (e.op()) {
    case Operation::kTrue: return Tri(true);
    case Operation::kFalse: return Tri(false);
    case Operation::kNot: {
      ARROW_ASSIGN_OR_RAISE(Tri c, Eval(e.child(), lookup));
      return c ? Tri(!*c) : Tri();
    }
    case Operation::kAnd: {
      ARROW_ASSIGN_OR_RAISE(Tri l, Eval(e.left(), lookup));
      if (l == false) return Tri(false);
      ARROW_ASSIGN_OR_RAISE(Tri r, Eval(e.right(), lookup));
      if (r == false) return Tri(false);
      return (l && r) ? Tri(true) : Tri();
    }
    case Operation::kOr: {
      ARROW_ASSIGN_OR_RAISE(Tri l, Eval(e.left(), lookup));
      if (l == true) return Tri(true);
      ARROW_ASSIGN_OR_RAISE(Tri r, Eval(e.right(), lookup));
      if (r == true) return Tri(true);
      return (l && r) ? Tri(false) : Tri();
    }
    default: return Predicate(e, lookup(e.ref().field_id));
  }
}

}  // namespace

Result<std::optional<bool>> EvaluateLiterals(const BoundExpr& expr, const FieldLookup& lookup) {
  return Eval(expr, lookup);
}

}  // namespace lakesync::iceberg
