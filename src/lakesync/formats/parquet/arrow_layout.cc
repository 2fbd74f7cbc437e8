#include <arrow/array/data.h>
#include <arrow/extension/uuid.h>
#include <arrow/extension_type.h>
#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>

#include "lakesync/formats/parquet/arrow_layout_internal.h"
#include "lakesync/iceberg/model/arrow_schema.h"

namespace lakesync::parquet_io::internal {
namespace {

const arrow::DataType& Storage(const arrow::DataType& t) {
  if (t.id() == arrow::Type::EXTENSION) return *static_cast<const arrow::ExtensionType&>(t).storage_type();
  return t;
}

}  // namespace

Result<std::shared_ptr<arrow::Field>> ParquetWriterField(const iceberg::NestedField& field) {
  ARROW_ASSIGN_OR_RAISE(auto type, ParquetWriterType(*field.type));
  return arrow::field(field.name, type, !field.required,
                      arrow::key_value_metadata({iceberg::kArrowFieldIdKey}, {std::to_string(field.id)}));
}

Result<std::shared_ptr<arrow::DataType>> ParquetWriterType(const iceberg::Type& type) {
  switch (type.id()) {
    case iceberg::TypeId::kUuid: return arrow::extension::uuid();
    case iceberg::TypeId::kStruct: {
      arrow::FieldVector fields;
      for (const auto& f : type.fields()) {
        ARROW_ASSIGN_OR_RAISE(auto af, ParquetWriterField(f));
        fields.push_back(af);
      }
      return arrow::struct_(fields);
    }
    case iceberg::TypeId::kList: {
      ARROW_ASSIGN_OR_RAISE(auto elem, ParquetWriterField(type.element()));
      return arrow::list(elem);
    }
    case iceberg::TypeId::kMap: {
      ARROW_ASSIGN_OR_RAISE(auto k, ParquetWriterField(type.key()));
      ARROW_ASSIGN_OR_RAISE(auto v, ParquetWriterField(type.value()));
      return std::make_shared<arrow::MapType>(arrow::field("key_value", arrow::struct_({k, v}), false));
    }
    default: return iceberg::ToArrowType(type);
  }
}

bool SameLayout(const arrow::DataType& a_in, const arrow::DataType& b_in) {
  const arrow::DataType& a = Storage(a_in);
  const arrow::DataType& b = Storage(b_in);
  if (a.id() != b.id()) return false;
  if (a.num_fields() != b.num_fields()) return false;
  if (a.num_fields() == 0) return a.Equals(b);
  if (a.id() == arrow::Type::MAP || a.id() == arrow::Type::LIST || a.id() == arrow::Type::STRUCT ||
      a.id() == arrow::Type::LARGE_LIST) {
    for (int i = 0; i < a.num_fields(); ++i) {
      if (!SameLayout(*a.field(i)->type(), *b.field(i)->type())) return false;
    }
    return true;
  }
  return a.Equals(b);
}

std::shared_ptr<arrow::ArrayData> Retype(const std::shared_ptr<arrow::ArrayData>& data,
                                         const std::shared_ptr<arrow::DataType>& type) {
  auto out = data->Copy();
  out->type = type;
  const arrow::DataType& storage = Storage(*type);
  if (storage.num_fields() > 0) {
    for (size_t i = 0; i < out->child_data.size() && static_cast<int>(i) < storage.num_fields(); ++i) {
      out->child_data[i] = Retype(data->child_data[i], storage.field(static_cast<int>(i))->type());
    }
  }
  return out;
}

}  // namespace lakesync::parquet_io::internal
