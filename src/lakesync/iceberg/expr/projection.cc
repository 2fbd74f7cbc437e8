#include "lakesync/iceberg/expr/projection.h"

#include <algorithm>

namespace lakesync::iceberg {
namespace {

using Kind = Transform::Kind;

bool IsTimeTransform(Kind k) { return k == Kind::kYear || k == Kind::kMonth || k == Kind::kDay || k == Kind::kHour; }

// v + delta for the integral storages (int, long and the types stored like them, decimal unscaled).
// The binder folds `x < MIN` and `x > MAX`, so the callers never step past the type's range.
Literal AddUnit(const Literal& v, int delta) {
  if (std::holds_alternative<int32_t>(v.value())) return Literal(static_cast<int32_t>(v.get<int32_t>() + delta));
  if (std::holds_alternative<int64_t>(v.value())) return Literal(v.get<int64_t>() + delta);
  return Literal(Decimal{v.get<Decimal>().unscaled + delta});
}

size_t CodePoints(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

class Projector {
 public:
  Projector(const PartitionField& field, BoundReference partition_ref)
      : field_(field), ref_(std::move(partition_ref)) {}

  Result<BoundExpr> Project(const BoundExpr& pred) {
    const Kind kind = field_.transform.kind();
    if (kind == Kind::kVoid || kind == Kind::kUnknown) return BoundExpr::AlwaysTrue();
    const Operation op = pred.op();
    if (kind == Kind::kIdentity) return BoundExpr::Predicate(op, ref_, pred.literals());
    if (op == Operation::kIsNull || op == Operation::kNotNull) return BoundExpr::Predicate(op, ref_);
    source_ = pred.ref().type.get();
    switch (kind) {
      case Kind::kBucket: return Bucket(pred);
      case Kind::kTruncate: return Truncate(pred);
      default: break;
    }
    if (IsTimeTransform(kind)) return Time(pred);
    return BoundExpr::AlwaysTrue();
  }

 private:
  Result<Literal> Apply(const Literal& v) const { return field_.transform.Apply(*source_, v); }

  Result<std::vector<Literal>> ApplyAll(const std::vector<Literal>& vs) const {
    std::vector<Literal> out;
    for (const auto& v : vs) {
      ARROW_ASSIGN_OR_RAISE(auto t, Apply(v));
      out.push_back(std::move(t));
    }
    return out;
  }

  Result<BoundExpr> On(Operation op, const Literal& v) const {
    ARROW_ASSIGN_OR_RAISE(auto t, Apply(v));
    return BoundExpr::Predicate(op, ref_, {std::move(t)});
  }

  Result<BoundExpr> Bucket(const BoundExpr& pred) const {
    if (pred.op() == Operation::kEq) return On(Operation::kEq, pred.literal());
    if (pred.op() == Operation::kIn) {
      ARROW_ASSIGN_OR_RAISE(auto buckets, ApplyAll(pred.literals()));
      return BoundExpr::Predicate(Operation::kIn, ref_, std::move(buckets));
    }
    // Hashing keeps no order, and a != on a hash says nothing about the values.
    return BoundExpr::AlwaysTrue();
  }

  // A range bound through an order-preserving transform. Truncating a value within W of the type's minimum
  // wraps around (as in Java: v - ((v % W) + W) % W overflows), and a wrapped boundary keeps no order:
  // such a range projects to TRUE.
  Result<BoundExpr> Range(Operation op, const Literal& v) const {
    ARROW_ASSIGN_OR_RAISE(auto t, Apply(v));
    if (field_.transform.kind() == Kind::kTruncate && t.Compare(v) > 0) return BoundExpr::AlwaysTrue();
    return BoundExpr::Predicate(op, ref_, {std::move(t)});
  }

  // Order-preserving transforms of integral values: v < X  <=>  v <= X - 1  =>  t(v) <= t(X - 1).
  Result<BoundExpr> OrderedIntegral(const BoundExpr& pred) const {
    switch (pred.op()) {
      case Operation::kLt: return Range(Operation::kLtEq, AddUnit(pred.literal(), -1));
      case Operation::kLtEq: return Range(Operation::kLtEq, pred.literal());
      case Operation::kGt: return Range(Operation::kGtEq, AddUnit(pred.literal(), 1));
      case Operation::kGtEq: return Range(Operation::kGtEq, pred.literal());
      case Operation::kEq: return On(Operation::kEq, pred.literal());
      case Operation::kIn: {
        ARROW_ASSIGN_OR_RAISE(auto values, ApplyAll(pred.literals()));
        return BoundExpr::Predicate(Operation::kIn, ref_, std::move(values));
      }
      default: return BoundExpr::AlwaysTrue();
    }
  }

  Result<BoundExpr> Truncate(const BoundExpr& pred) const {
    const TypeId id = source_->id();
    if (id == TypeId::kInt || id == TypeId::kLong || id == TypeId::kDecimal) return OrderedIntegral(pred);
    // Strings and binary: truncation keeps order (a prefix sorts before its extensions), but there is no
    // "previous value" to step to, so strict ranges widen to inclusive ones.
    switch (pred.op()) {
      case Operation::kLt:
      case Operation::kLtEq: return On(Operation::kLtEq, pred.literal());
      case Operation::kGt:
      case Operation::kGtEq: return On(Operation::kGtEq, pred.literal());
      case Operation::kEq: return On(Operation::kEq, pred.literal());
      case Operation::kIn: {
        ARROW_ASSIGN_OR_RAISE(auto values, ApplyAll(pred.literals()));
        return BoundExpr::Predicate(Operation::kIn, ref_, std::move(values));
      }
      case Operation::kStartsWith:
        // A value starts with p only if its first W characters start with the first W characters of p.
        return On(Operation::kStartsWith, pred.literal());
      case Operation::kNotStartsWith: {
        // When p fits in W characters, a value starts with p exactly when its truncation does.
        const auto& prefix = pred.literal().get<std::string>();
        if (CodePoints(prefix) <= static_cast<size_t>(field_.transform.param())) {
          return BoundExpr::Predicate(Operation::kNotStartsWith, ref_, pred.literals());
        }
        return BoundExpr::AlwaysTrue();
      }
      default: return BoundExpr::AlwaysTrue();
    }
  }

  Result<BoundExpr> Time(const BoundExpr& pred) const {
    ARROW_ASSIGN_OR_RAISE(BoundExpr projected, OrderedIntegral(pred));
    const bool identity_like = field_.transform.kind() == Kind::kDay && source_->id() == TypeId::kDate;
    if (identity_like) return projected;
    return AdmitLateFiledPeriods(projected);
  }

  // Writers that truncated toward zero filed a pre-1970 value of period p (< 0) under p + 1. Admit p + 1
  // wherever p < 0 bounds the projection from above or is asked for exactly. Lower bounds need nothing:
  // the late period is larger.
  Result<BoundExpr> AdmitLateFiledPeriods(const BoundExpr& projected) const {
    if (!IsPredicate(projected.op()) || projected.literals().empty()) return projected;
    auto period = [](const Literal& v) { return v.get<int32_t>(); };
    switch (projected.op()) {
      case Operation::kLtEq:
        if (period(projected.literal()) < 0) {
          return BoundExpr::Predicate(Operation::kLtEq, ref_, {Literal(period(projected.literal()) + 1)});
        }
        return projected;
      case Operation::kEq:
      case Operation::kIn: {
        std::vector<int32_t> periods;
        for (const auto& v : projected.literals()) {
          periods.push_back(period(v));
          if (period(v) < 0) periods.push_back(period(v) + 1);
        }
        if (periods.size() == projected.literals().size()) return projected;
        std::vector<Literal> values(periods.size());
        std::transform(periods.begin(), periods.end(), values.begin(), [](int32_t p) { return Literal(p); });
        return BoundExpr::Predicate(Operation::kIn, ref_, std::move(values));
      }
      default: return projected;
    }
  }

  const PartitionField& field_;
  BoundReference ref_;
  const Type* source_ = nullptr;
};

Result<BoundExpr> ProjectPredicate(const BoundExpr& pred, const PartitionSpec& spec, const Schema& schema) {
  BoundExpr result = BoundExpr::AlwaysTrue();
  for (const auto& field : spec.fields()) {
    if (field.source_id != pred.ref().field_id) continue;
    ARROW_ASSIGN_OR_RAISE(auto ref, PartitionFieldReference(field, schema));
    ARROW_ASSIGN_OR_RAISE(auto projected, Projector(field, std::move(ref)).Project(pred));
    result = BoundExpr::And(std::move(result), std::move(projected));
  }
  return result;
}

Result<BoundExpr> ProjectTree(const BoundExpr& e, const PartitionSpec& spec, const Schema& schema) {
  switch (e.op()) {
    case Operation::kTrue:
    case Operation::kFalse: return e;
    case Operation::kNot: return ProjectTree(RewriteNot(e), spec, schema);
    case Operation::kAnd:
    case Operation::kOr: {
      ARROW_ASSIGN_OR_RAISE(auto left, ProjectTree(e.left(), spec, schema));
      ARROW_ASSIGN_OR_RAISE(auto right, ProjectTree(e.right(), spec, schema));
      return e.op() == Operation::kAnd ? BoundExpr::And(std::move(left), std::move(right))
                                       : BoundExpr::Or(std::move(left), std::move(right));
    }
    default: return ProjectPredicate(e, spec, schema);
  }
}

}  // namespace

Result<BoundReference> PartitionFieldReference(const PartitionField& field, const Schema& schema) {
  BoundReference ref;
  ref.field_id = field.field_id;
  ref.name = field.name;
  ref.id_path = {field.field_id};
  ref.name_path = {field.name};
  ref.never_null = false;
  const NestedField* source = schema.FindFieldById(field.source_id);
  if (field.transform.kind() == Kind::kVoid || field.transform.kind() == Kind::kUnknown) {
    ref.type = source ? source->type : Type::Unknown();
    if (field.transform.kind() == Kind::kUnknown || !source) ref.type = Type::Unknown();
    return ref;
  }
  if (!source) {
    return InvalidArgument("partition field '{}' refers to source id {}, which is not in the schema", field.name,
                           field.source_id);
  }
  LS_ASSIGN_OR_RAISE_CTX(ref.type, field.transform.ResultType(source->type), "partition field '{}'", field.name);
  return ref;
}

Result<BoundExpr> ProjectInclusive(const BoundExpr& filter, const PartitionSpec& spec, const Schema& schema) {
  return ProjectTree(RewriteNot(filter), spec, schema);
}

}  // namespace lakesync::iceberg
