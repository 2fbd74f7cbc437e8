// Conforming batches that carry their own types (Parquet input, change streams) to a table schema.
#include <arrow/array.h>
#include <arrow/compute/api.h>
#include <arrow/record_batch.h>
#include <arrow/scalar.h>
#include <arrow/type.h>

#include <optional>
#include <set>

#include "lakesync/formats/tabular/tabular.h"
#include "lakesync/formats/tabular/value_converters_internal.h"

namespace lakesync::tabular {
namespace {

// The first value that does not cast on its own, or -1 when the types do not cast at all (or no
// single value fails). Only called once a whole-column cast has failed, so the cost is on the
// error path alone.
int64_t FirstUncastable(const arrow::Array& column, const std::shared_ptr<arrow::DataType>& type) {
  const auto options = arrow::compute::CastOptions::Safe();
  if (!arrow::compute::Cast(*column.Slice(0, 0), type, options).ok()) return -1;
  for (int64_t i = 0; i < column.length(); ++i) {
    if (column.IsNull(i)) continue;
    if (!arrow::compute::Cast(*column.Slice(i, 1), type, options).ok()) return i;
  }
  return -1;
}

// The path of a struct field the input has and the table lacks ("a.b", "l.element.b"), if any. Arrow
// casts structs by field name and drops the fields the target lacks without a word, so this is
// checked first: a value is never lost silently, at any depth, as for top-level columns.
std::optional<std::string> FieldNotInTarget(const arrow::DataType& input, const arrow::DataType& target,
                                            const std::string& path) {
  if (input.id() == arrow::Type::STRUCT && target.id() == arrow::Type::STRUCT) {
    const auto& in = static_cast<const arrow::StructType&>(input);
    const auto& to = static_cast<const arrow::StructType&>(target);
    for (const auto& f : in.fields()) {
      auto t = to.GetFieldByName(f->name());
      if (!t) return path + "." + f->name();
      if (auto found = FieldNotInTarget(*f->type(), *t->type(), path + "." + f->name())) return found;
    }
    return std::nullopt;
  }
  const bool in_list = input.id() == arrow::Type::LIST || input.id() == arrow::Type::LARGE_LIST;
  const bool to_list = target.id() == arrow::Type::LIST || target.id() == arrow::Type::LARGE_LIST;
  if (in_list && to_list) {
    return FieldNotInTarget(*input.field(0)->type(), *target.field(0)->type(), path + ".element");
  }
  if (input.id() == arrow::Type::MAP && target.id() == arrow::Type::MAP) {
    const auto& in = static_cast<const arrow::MapType&>(input);
    const auto& to = static_cast<const arrow::MapType&>(target);
    if (auto found = FieldNotInTarget(*in.key_type(), *to.key_type(), path + ".key")) return found;
    return FieldNotInTarget(*in.item_type(), *to.item_type(), path + ".value");
  }
  return std::nullopt;
}

// Whether two types have the same layout and differ at most in the nullability of nested fields
// and the names of list and map fields. Arrow's cast (and Array::View) refuse a nullable nested field
// with nulls where the target's is required even when every such null sits under a null parent, which
// is how Parquet readers produce them; FindRequiredNull below checks what matters instead.
bool SameButForNestedNullability(const arrow::DataType& a, const arrow::DataType& b) {
  if (a.id() != b.id()) return false;
  switch (a.id()) {
    case arrow::Type::STRUCT:
      if (a.num_fields() != b.num_fields()) return false;
      for (int i = 0; i < a.num_fields(); ++i) {
        if (a.field(i)->name() != b.field(i)->name() ||
            !SameButForNestedNullability(*a.field(i)->type(), *b.field(i)->type())) {
          return false;
        }
      }
      return true;
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::MAP:
      return SameButForNestedNullability(*a.field(0)->type(), *b.field(0)->type());
    default: return a.Equals(b);
  }
}

// The same buffers under `type` (which SameButForNestedNullability accepted), children included.
std::shared_ptr<arrow::ArrayData> Retype(const std::shared_ptr<arrow::ArrayData>& data,
                                         const std::shared_ptr<arrow::DataType>& type) {
  auto out = data->Copy();
  out->type = type;
  for (size_t i = 0; i < out->child_data.size() && static_cast<int>(i) < type->num_fields(); ++i) {
    out->child_data[i] = Retype(out->child_data[i], type->field(static_cast<int>(i))->type());
  }
  return out;
}

struct RequiredNull {
  int64_t index;
  std::string path;
};

std::optional<RequiredNull> Earlier(std::optional<RequiredNull> a, std::optional<RequiredNull> b) {
  if (!a) return b;
  if (!b) return a;
  return b->index < a->index ? b : a;
}

// Whether any required field below `type` has nulls in `array` at all: the cheap test before the walk.
bool MayHaveRequiredNulls(const arrow::Array& array, const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::STRUCT: {
      const auto& s = static_cast<const arrow::StructArray&>(array);
      for (int i = 0; i < type.num_fields(); ++i) {
        auto child = s.field(i);
        if (!type.field(i)->nullable() && child->null_count() > 0) return true;
        if (MayHaveRequiredNulls(*child, *type.field(i)->type())) return true;
      }
      return false;
    }
    case arrow::Type::LIST:
    case arrow::Type::MAP: {
      const auto& values = *static_cast<const arrow::ListArray&>(array).values();
      const auto& value_field = *static_cast<const arrow::BaseListType&>(type).value_field();
      if (!value_field.nullable() && values.null_count() > 0) return true;
      return MayHaveRequiredNulls(values, *value_field.type());
    }
    case arrow::Type::LARGE_LIST: {
      const auto& values = *static_cast<const arrow::LargeListArray&>(array).values();
      const auto& value_field = *static_cast<const arrow::BaseListType&>(type).value_field();
      if (!value_field.nullable() && values.null_count() > 0) return true;
      return MayHaveRequiredNulls(values, *value_field.type());
    }
    default: return false;
  }
}

template <typename ListArrayType>
std::optional<RequiredNull> FindInList(const ListArrayType& list, const arrow::DataType& type,
                                       const std::vector<bool>& live, const std::string& path);

// The first live slot of `array` below which a required field holds a null. `live` marks the slots
// whose parents are all valid: values under a null struct or list do not count.
std::optional<RequiredNull> FindRequiredNull(const arrow::Array& array, const arrow::DataType& type,
                                             const std::vector<bool>& live, const std::string& path) {
  switch (type.id()) {
    case arrow::Type::STRUCT: {
      const auto& s = static_cast<const arrow::StructArray&>(array);
      std::vector<bool> child_live(live.size());
      for (int64_t j = 0; j < s.length(); ++j) {
        child_live[static_cast<size_t>(j)] = live[static_cast<size_t>(j)] && s.IsValid(j);
      }
      std::optional<RequiredNull> found;
      for (int i = 0; i < type.num_fields(); ++i) {
        auto child = s.field(i);
        const auto& field = *type.field(i);
        const std::string child_path = path + "." + field.name();
        if (!field.nullable() && child->null_count() > 0) {
          for (int64_t j = 0; j < child->length(); ++j) {
            if (child_live[static_cast<size_t>(j)] && child->IsNull(j)) {
              found = Earlier(found, RequiredNull{j, child_path});
              break;
            }
          }
        }
        if (MayHaveRequiredNulls(*child, *field.type())) {
          found = Earlier(found, FindRequiredNull(*child, *field.type(), child_live, child_path));
        }
      }
      return found;
    }
    case arrow::Type::LIST:
    case arrow::Type::MAP: return FindInList(static_cast<const arrow::ListArray&>(array), type, live, path);
    case arrow::Type::LARGE_LIST:
      return FindInList(static_cast<const arrow::LargeListArray&>(array), type, live, path);
    default: return std::nullopt;
  }
}

template <typename ListArrayType>
std::optional<RequiredNull> FindInList(const ListArrayType& list, const arrow::DataType& type,
                                       const std::vector<bool>& live, const std::string& path) {
  const auto& values = *list.values();
  const auto& value_field = *static_cast<const arrow::BaseListType&>(type).value_field();
  // A map's entries are a struct of key and value, which the struct case names "m.key", "m.value".
  const std::string values_path = type.id() == arrow::Type::MAP ? path : path + ".element";
  std::vector<bool> value_live(static_cast<size_t>(values.length()));
  std::vector<int64_t> owner(static_cast<size_t>(values.length()), -1);
  for (int64_t j = 0; j < list.length(); ++j) {
    if (!live[static_cast<size_t>(j)] || list.IsNull(j)) continue;
    for (auto k = list.value_offset(j); k < list.value_offset(j + 1); ++k) {
      value_live[static_cast<size_t>(k)] = true;
      owner[static_cast<size_t>(k)] = j;
    }
  }
  std::optional<RequiredNull> found;
  if (!value_field.nullable() && values.null_count() > 0) {
    for (int64_t k = 0; k < values.length(); ++k) {
      if (value_live[static_cast<size_t>(k)] && values.IsNull(k)) {
        found = RequiredNull{owner[static_cast<size_t>(k)], values_path};
        break;
      }
    }
  }
  if (MayHaveRequiredNulls(values, *value_field.type())) {
    if (auto inner = FindRequiredNull(values, *value_field.type(), value_live, values_path)) {
      found = Earlier(found, RequiredNull{owner[static_cast<size_t>(inner->index)], inner->path});
    }
  }
  return found;
}

}  // namespace

Result<std::shared_ptr<arrow::RecordBatch>> ConformBatch(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                         const std::shared_ptr<arrow::Schema>& target,
                                                         const std::string& source, int64_t first_row) {
  std::set<std::string> wanted;
  for (const auto& f : target->fields()) wanted.insert(f->name());
  for (const auto& f : batch->schema()->fields()) {
    if (!wanted.count(f->name())) {
      return InvalidArgument("{}: column '{}' is not in the table schema", source, f->name());
    }
  }
  arrow::ArrayVector columns;
  for (const auto& f : target->fields()) {
    auto column = batch->GetColumnByName(f->name());
    if (!column) {
      if (!f->nullable()) return InvalidArgument("{}: required column '{}' is missing", source, f->name());
      ARROW_ASSIGN_OR_RAISE(column, arrow::MakeArrayOfNull(f->type(), batch->num_rows()));
    } else if (auto extra = FieldNotInTarget(*column->type(), *f->type(), f->name())) {
      return InvalidArgument("{}: field '{}' is not in the table schema", source, *extra);
    } else if (SameButForNestedNullability(*column->type(), *f->type())) {
      if (!column->type()->Equals(*f->type(), /*check_metadata=*/true)) {
        column = arrow::MakeArray(Retype(column->data(), f->type()));
      }
    } else {
      auto cast = arrow::compute::Cast(*column, f->type(), arrow::compute::CastOptions::Safe());
      if (!cast.ok()) {
        const int64_t bad = FirstUncastable(*column, f->type());
        if (bad < 0) {
          return InvalidArgument("{}: column '{}' of type {} cannot be converted to {}: {}", source, f->name(),
                                 column->type()->ToString(), TypeName(*f->type()), cast.status().message());
        }
        auto value = column->GetScalar(bad);
        return InvalidArgument("{}: row {}, column '{}': the value {} of type {} cannot be converted to {}: {}", source,
                               first_row + bad + 1, f->name(), value.ok() ? (*value)->ToString() : "?",
                               column->type()->ToString(), TypeName(*f->type()), cast.status().message());
      }
      column = *cast;
    }
    if (!f->nullable() && column->null_count() > 0) {
      int64_t row = 0;
      while (row < column->length() && !column->IsNull(row)) ++row;
      return InvalidArgument("{}: row {}, column '{}': null in a required column", source, first_row + row + 1,
                             f->name());
    }
    if (MayHaveRequiredNulls(*column, *f->type())) {
      std::vector<bool> live(static_cast<size_t>(column->length()));
      for (int64_t j = 0; j < column->length(); ++j) live[static_cast<size_t>(j)] = column->IsValid(j);
      if (auto found = FindRequiredNull(*column, *f->type(), live, f->name())) {
        return InvalidArgument("{}: row {}, column '{}': null in a required field", source,
                               first_row + found->index + 1, found->path);
      }
    }
    columns.push_back(std::move(column));
  }
  return arrow::RecordBatch::Make(target, batch->num_rows(), std::move(columns));
}

}  // namespace lakesync::tabular
