#include "lakesync/iceberg/expr/row_filter.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/extension_type.h>

#include "lakesync/common/arrow_compute.h"
#include "lakesync/iceberg/model/arrow_schema.h"

namespace lakesync::iceberg {
namespace {

namespace cp = arrow::compute;

// Position of the child matching (id, name): by field id where this level carries ids, else by name.
int FindChild(const arrow::FieldVector& fields, int32_t id, const std::string& name) {
  bool any_ids = false;
  for (size_t i = 0; i < fields.size(); ++i) {
    const int32_t fid = ArrowFieldId(*fields[i]);
    if (fid >= 0) any_ids = true;
    if (fid == id) return static_cast<int>(i);
  }
  if (any_ids) return -1;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i]->name() == name) return static_cast<int>(i);
  }
  return -1;
}

std::shared_ptr<arrow::Array> Storage(std::shared_ptr<arrow::Array> a) {
  while (a->type_id() == arrow::Type::EXTENSION) a = std::static_pointer_cast<arrow::ExtensionArray>(a)->storage();
  return a;
}

class BatchEvaluator {
 public:
  explicit BatchEvaluator(const arrow::RecordBatch& batch) : batch_(batch) {}

  Result<std::shared_ptr<arrow::Array>> Eval(const BoundExpr& e) {
    switch (e.op()) {
      case Operation::kTrue:
      case Operation::kFalse:
        return arrow::MakeArrayFromScalar(arrow::BooleanScalar(e.op() == Operation::kTrue), batch_.num_rows());
      case Operation::kNot: {
        ARROW_ASSIGN_OR_RAISE(auto c, Eval(e.child()));
        return Call("invert", {c});
      }
      case Operation::kAnd:
      case Operation::kOr: {
        ARROW_ASSIGN_OR_RAISE(auto l, Eval(e.left()));
        ARROW_ASSIGN_OR_RAISE(auto r, Eval(e.right()));
        return Call(e.op() == Operation::kAnd ? "and_kleene" : "or_kleene", {l, r});
      }
      default: return Predicate(e);
    }
  }

 private:
  static Result<std::shared_ptr<arrow::Array>> Call(const std::string& name, const std::vector<arrow::Datum>& args,
                                                    const cp::FunctionOptions* options = nullptr) {
    ARROW_ASSIGN_OR_RAISE(arrow::Datum out, cp::CallFunction(name, args, options));
    return out.make_array();
  }

  Result<std::shared_ptr<arrow::Array>> Column(const BoundReference& ref) {
    std::shared_ptr<arrow::Array> array;
    const arrow::FieldVector* fields = &batch_.schema()->fields();
    for (size_t level = 0; level < ref.id_path.size(); ++level) {
      const int index = FindChild(*fields, ref.id_path[level], ref.name_path.at(level));
      if (index < 0) {
        // Absent from this batch: all null.
        ARROW_ASSIGN_OR_RAISE(auto type, ToArrowType(*ref.type));
        return arrow::MakeArrayOfNull(type, batch_.num_rows());
      }
      if (level == 0) {
        array = Storage(batch_.column(index));
      } else {
        const auto& st = static_cast<const arrow::StructArray&>(*array);
        // The flattened child is null wherever the struct itself is null.
        ARROW_ASSIGN_OR_RAISE(array, st.GetFlattenedField(index));
        array = Storage(array);
      }
      if (level + 1 < ref.id_path.size()) {
        if (array->type_id() != arrow::Type::STRUCT) {
          return InvalidArgument("column '{}': '{}' is an Arrow {} in the batch, not a struct", ref.name,
                                 ref.name_path.at(level), array->type()->ToString());
        }
        fields = &array->type()->fields();
      }
    }
    if (array->type_id() == arrow::Type::DICTIONARY) {
      const auto& dict_type = static_cast<const arrow::DictionaryType&>(*array->type());
      ARROW_ASSIGN_OR_RAISE(arrow::Datum decoded, cp::Cast(array, dict_type.value_type()));
      array = Storage(decoded.make_array());
    }
    if (array->type_id() == arrow::Type::NA) {
      ARROW_ASSIGN_OR_RAISE(auto type, ToArrowType(*ref.type));
      return arrow::MakeArrayOfNull(type, array->length());
    }
    return array;
  }

  // Brings the column and the constants to one Arrow type without rounding either (see row_filter.h).
  static Status Align(const BoundReference& ref, std::shared_ptr<arrow::Array>& column,
                      std::vector<std::shared_ptr<arrow::Scalar>>& scalars) {
    ARROW_ASSIGN_OR_RAISE(auto canonical, ToArrowType(*ref.type));
    if (column->type()->Equals(*canonical)) return Status::OK();
    std::vector<std::shared_ptr<arrow::Scalar>> converted;
    bool exact = true;
    for (const auto& s : scalars) {
      auto there = cp::Cast(arrow::Datum(s), column->type(), cp::CastOptions::Safe());
      if (!there.ok()) {
        exact = false;
        break;
      }
      auto back = cp::Cast(*there, canonical, cp::CastOptions::Safe());
      if (!back.ok() || !back->scalar()->Equals(*s)) {
        exact = false;
        break;
      }
      converted.push_back(there->scalar());
    }
    if (exact) {
      scalars = std::move(converted);
      return Status::OK();
    }
    auto cast = cp::Cast(arrow::Datum(column), canonical, cp::CastOptions::Safe());
    if (!cast.ok()) {
      return InvalidArgument("column '{}' is an Arrow {} in the batch, which cannot be compared with {} values: {}",
                             ref.name, column->type()->ToString(), ref.type->ToString(), cast.status().message());
    }
    column = cast->make_array();
    return Status::OK();
  }

  // is_in hashes floating-point values by their bits, so 0.0 would not find -0.0, although they are equal
  // (IEEE, and `=` on the same column). Putting both zeros in the set restores equality.
  static void AddOtherSignedZeros(std::vector<std::shared_ptr<arrow::Scalar>>& scalars) {
    const size_t n = scalars.size();
    for (size_t k = 0; k < n; ++k) {
      const auto& s = scalars[k];
      if (s->type->id() == arrow::Type::DOUBLE) {
        const double v = static_cast<const arrow::DoubleScalar&>(*s).value;
        if (v == 0) scalars.push_back(std::make_shared<arrow::DoubleScalar>(-v));
      } else if (s->type->id() == arrow::Type::FLOAT) {
        const float v = static_cast<const arrow::FloatScalar&>(*s).value;
        if (v == 0) scalars.push_back(std::make_shared<arrow::FloatScalar>(-v));
      }
    }
  }

  Result<std::shared_ptr<arrow::Array>> Predicate(const BoundExpr& e) {
    const BoundReference& ref = e.ref();
    ARROW_ASSIGN_OR_RAISE(auto column, Column(ref));
    switch (e.op()) {
      case Operation::kIsNull: return Call("is_null", {column});
      case Operation::kNotNull: return Call("is_valid", {column});
      case Operation::kIsNan:
      case Operation::kNotNan: {
        ARROW_ASSIGN_OR_RAISE(auto nan, Call("is_nan", {column}));
        return e.op() == Operation::kIsNan ? nan : Call("invert", {nan});
      }
      default: break;
    }
    std::vector<std::shared_ptr<arrow::Scalar>> scalars;
    for (const auto& lit : e.literals()) {
      ARROW_ASSIGN_OR_RAISE(auto s, LiteralToArrowScalar(lit, *ref.type));
      scalars.push_back(std::move(s));
    }
    if (e.op() == Operation::kStartsWith || e.op() == Operation::kNotStartsWith) {
      if (column->type_id() != arrow::Type::STRING && column->type_id() != arrow::Type::LARGE_STRING) {
        ARROW_ASSIGN_OR_RAISE(arrow::Datum utf8, cp::Cast(column, arrow::utf8()));
        column = utf8.make_array();
      }
      cp::MatchSubstringOptions options(e.literal().get<std::string>());
      ARROW_ASSIGN_OR_RAISE(auto starts, Call("starts_with", {column}, &options));
      return e.op() == Operation::kStartsWith ? starts : Call("invert", {starts});
    }
    ARROW_RETURN_NOT_OK(Align(ref, column, scalars));
    if (e.op() == Operation::kIn || e.op() == Operation::kNotIn) {
      AddOtherSignedZeros(scalars);
      std::unique_ptr<arrow::ArrayBuilder> builder;
      ARROW_RETURN_NOT_OK(arrow::MakeBuilder(arrow::default_memory_pool(), column->type(), &builder));
      ARROW_RETURN_NOT_OK(builder->AppendScalars(scalars));
      ARROW_ASSIGN_OR_RAISE(auto value_set, builder->Finish());
      // EMIT_NULL: a null input gives a null (unknown) answer, as SQL's IN does.
      cp::SetLookupOptions options(value_set, cp::SetLookupOptions::EMIT_NULL);
      ARROW_ASSIGN_OR_RAISE(auto in, Call("is_in", {column}, &options));
      return e.op() == Operation::kIn ? in : Call("invert", {in});
    }
    const char* name = nullptr;
    switch (e.op()) {
      case Operation::kLt: name = "less"; break;
      case Operation::kLtEq: name = "less_equal"; break;
      case Operation::kGt: name = "greater"; break;
      case Operation::kGtEq: name = "greater_equal"; break;
      case Operation::kEq: name = "equal"; break;
      case Operation::kNotEq: name = "not_equal"; break;
      default: return InvalidArgument("cannot evaluate operation {} on Arrow data", OperationName(e.op()));
    }
    return Call(name, {column, scalars.at(0)});
  }

  const arrow::RecordBatch& batch_;
};

}  // namespace

Result<std::shared_ptr<arrow::Scalar>> LiteralToArrowScalar(const Literal& literal, const Type& type) {
  if (literal.is_null() || !LiteralMatchesType(literal, type)) {
    return InvalidArgument("value does not match type {}", type.ToString());
  }
  ARROW_ASSIGN_OR_RAISE(auto arrow_type, ToArrowType(type));
  switch (type.id()) {
    case TypeId::kBoolean: return std::make_shared<arrow::BooleanScalar>(literal.get<bool>());
    case TypeId::kInt: return std::make_shared<arrow::Int32Scalar>(literal.get<int32_t>());
    case TypeId::kDate: return std::make_shared<arrow::Date32Scalar>(literal.get<int32_t>());
    case TypeId::kLong: return std::make_shared<arrow::Int64Scalar>(literal.get<int64_t>());
    case TypeId::kTime: return std::make_shared<arrow::Time64Scalar>(literal.get<int64_t>(), arrow_type);
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: return std::make_shared<arrow::TimestampScalar>(literal.get<int64_t>(), arrow_type);
    case TypeId::kFloat: return std::make_shared<arrow::FloatScalar>(literal.get<float>());
    case TypeId::kDouble: return std::make_shared<arrow::DoubleScalar>(literal.get<double>());
    case TypeId::kDecimal: {
      const __int128 v = literal.get<Decimal>().unscaled;
      const arrow::Decimal128 d(static_cast<int64_t>(v >> 64), static_cast<uint64_t>(v));
      return std::make_shared<arrow::Decimal128Scalar>(d, arrow_type);
    }
    case TypeId::kString: return std::make_shared<arrow::StringScalar>(literal.get<std::string>());
    case TypeId::kUuid:
    case TypeId::kFixed:
      return std::make_shared<arrow::FixedSizeBinaryScalar>(arrow::Buffer::FromString(literal.get<Bytes>().data),
                                                            arrow_type);
    case TypeId::kBinary:
      return std::make_shared<arrow::BinaryScalar>(arrow::Buffer::FromString(literal.get<Bytes>().data));
    default: return Unsupported("no Arrow scalar for type {}", type.ToString());
  }
}

Result<std::shared_ptr<arrow::BooleanArray>> EvaluateRowFilter(const BoundExpr& filter,
                                                               const arrow::RecordBatch& batch) {
  ARROW_RETURN_NOT_OK(EnsureArrowCompute());
  ARROW_ASSIGN_OR_RAISE(auto result, BatchEvaluator(batch).Eval(filter));
  if (result->null_count() > 0) {
    ARROW_ASSIGN_OR_RAISE(arrow::Datum filled,
                          cp::CallFunction("coalesce", {result, std::make_shared<arrow::BooleanScalar>(false)}));
    result = filled.make_array();
  }
  return std::static_pointer_cast<arrow::BooleanArray>(result);
}

Result<std::shared_ptr<arrow::RecordBatch>> FilterRecordBatch(const BoundExpr& filter,
                                                              const std::shared_ptr<arrow::RecordBatch>& batch) {
  ARROW_ASSIGN_OR_RAISE(auto selection, EvaluateRowFilter(filter, *batch));
  ARROW_ASSIGN_OR_RAISE(arrow::Datum out, cp::Filter(batch, selection));
  return out.record_batch();
}

}  // namespace lakesync::iceberg
