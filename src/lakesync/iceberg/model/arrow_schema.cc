#include "lakesync/iceberg/model/arrow_schema.h"

#include <arrow/extension/uuid.h>
#include <arrow/extension_type.h>
#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>

namespace lakesync::iceberg {
namespace {

std::shared_ptr<const arrow::KeyValueMetadata> IdMetadata(int32_t id) {
  return arrow::key_value_metadata({kArrowFieldIdKey}, {std::to_string(id)});
}

class ArrowToIceberg {
 public:
  explicit ArrowToIceberg(bool fresh) : fresh_(fresh) {}

  Result<std::vector<NestedField>> Fields(const arrow::FieldVector& fields) {
    // Java's fresh-id order: all fields of a struct get ids first, then their children.
    std::vector<NestedField> out;
    std::vector<int32_t> ids;
    for (const auto& f : fields) {
      ARROW_ASSIGN_OR_RAISE(int32_t id, IdFor(*f));
      ids.push_back(id);
    }
    for (size_t i = 0; i < fields.size(); ++i) {
      NestedField nf;
      nf.id = ids[i];
      nf.name = fields[i]->name();
      nf.required = !fields[i]->nullable();
      LS_ASSIGN_OR_RAISE_CTX(nf.type, Convert(*fields[i]->type()), "column '{}'", fields[i]->name());
      out.push_back(std::move(nf));
    }
    return out;
  }

 private:
  Result<int32_t> IdFor(const arrow::Field& f) {
    if (fresh_) return ++next_id_;
    const int32_t id = ArrowFieldId(f);
    if (id < 0) return InvalidArgument("Arrow field '{}' has no '{}' metadata", f.name(), kArrowFieldIdKey);
    return id;
  }

  Result<NestedField> Child(const arrow::Field& f, int32_t id) {
    NestedField nf;
    nf.id = id;
    nf.name = f.name();
    nf.required = !f.nullable();
    ARROW_ASSIGN_OR_RAISE(nf.type, Convert(*f.type()));
    return nf;
  }

  Result<TypePtr> Convert(const arrow::DataType& t) {
    using arrow::Type;
    switch (t.id()) {
      case Type::BOOL: return iceberg::Type::Boolean();
      case Type::INT8:
      case Type::INT16:
      case Type::INT32:
      case Type::UINT8:
      case Type::UINT16: return iceberg::Type::Int();
      case Type::INT64:
      case Type::UINT32: return iceberg::Type::Long();
      case Type::HALF_FLOAT:
      case Type::FLOAT: return iceberg::Type::Float();
      case Type::DOUBLE: return iceberg::Type::Double();
      case Type::DECIMAL128:
      case Type::DECIMAL64:
      case Type::DECIMAL32: {
        const auto& d = static_cast<const arrow::DecimalType&>(t);
        if (d.precision() > 38) return Unsupported("decimal precision {} exceeds 38", d.precision());
        return iceberg::Type::Decimal(d.precision(), d.scale());
      }
      case Type::DATE32:
      case Type::DATE64: return iceberg::Type::Date();
      case Type::TIME32:
      case Type::TIME64: return iceberg::Type::Time();
      case Type::TIMESTAMP: {
        const auto& ts = static_cast<const arrow::TimestampType&>(t);
        const bool tz = !ts.timezone().empty();
        if (ts.unit() == arrow::TimeUnit::NANO) {
          return tz ? iceberg::Type::TimestampTzNs() : iceberg::Type::TimestampNs();
        }
        return tz ? iceberg::Type::TimestampTz() : iceberg::Type::Timestamp();
      }
      case Type::STRING:
      case Type::LARGE_STRING:
      case Type::STRING_VIEW: return iceberg::Type::String();
      case Type::BINARY:
      case Type::LARGE_BINARY:
      case Type::BINARY_VIEW: return iceberg::Type::Binary();
      case Type::FIXED_SIZE_BINARY: {
        const auto& fb = static_cast<const arrow::FixedSizeBinaryType&>(t);
        return iceberg::Type::Fixed(fb.byte_width());
      }
      case Type::NA: return iceberg::Type::Unknown();
      // A dictionary is an encoding of its values (pandas writes categoricals so), not a type of its own.
      case Type::DICTIONARY: return Convert(*static_cast<const arrow::DictionaryType&>(t).value_type());
      case Type::EXTENSION: {
        const auto& ext = static_cast<const arrow::ExtensionType&>(t);
        if (ext.extension_name() == "arrow.uuid") return iceberg::Type::Uuid();
        return Convert(*ext.storage_type());
      }
      case Type::STRUCT: {
        ARROW_ASSIGN_OR_RAISE(auto fields, Fields(t.fields()));
        return iceberg::Type::Struct(std::move(fields));
      }
      case Type::LIST:
      case Type::LARGE_LIST:
      case Type::FIXED_SIZE_LIST: {
        const auto& elem = *t.field(0);
        ARROW_ASSIGN_OR_RAISE(int32_t id, IdFor(elem));
        ARROW_ASSIGN_OR_RAISE(auto nf, Child(elem, id));
        return iceberg::Type::List(std::move(nf));
      }
      case Type::MAP: {
        const auto& m = static_cast<const arrow::MapType&>(t);
        ARROW_ASSIGN_OR_RAISE(int32_t kid, IdFor(*m.key_field()));
        ARROW_ASSIGN_OR_RAISE(int32_t vid, IdFor(*m.item_field()));
        ARROW_ASSIGN_OR_RAISE(auto k, Child(*m.key_field(), kid));
        ARROW_ASSIGN_OR_RAISE(auto v, Child(*m.item_field(), vid));
        return iceberg::Type::Map(std::move(k), std::move(v));
      }
      default: return Unsupported("Arrow type {} has no Iceberg equivalent", t.ToString());
    }
  }

  bool fresh_;
  int32_t next_id_ = 0;
};

}  // namespace

int32_t ArrowFieldId(const arrow::Field& field) {
  if (!field.metadata()) return -1;
  auto v = field.metadata()->Get(kArrowFieldIdKey);
  if (!v.ok()) return -1;
  try {
    return std::stoi(*v);
  } catch (...) {
    return -1;
  }
}

Result<std::shared_ptr<arrow::DataType>> ToArrowType(const Type& type, bool uuid_extension) {
  switch (type.id()) {
    case TypeId::kBoolean: return arrow::boolean();
    case TypeId::kInt: return arrow::int32();
    case TypeId::kLong: return arrow::int64();
    case TypeId::kFloat: return arrow::float32();
    case TypeId::kDouble: return arrow::float64();
    case TypeId::kDecimal: return arrow::decimal128(type.precision(), type.scale());
    case TypeId::kDate: return arrow::date32();
    case TypeId::kTime: return arrow::time64(arrow::TimeUnit::MICRO);
    case TypeId::kTimestamp: return arrow::timestamp(arrow::TimeUnit::MICRO);
    case TypeId::kTimestampTz: return arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
    case TypeId::kTimestampNs: return arrow::timestamp(arrow::TimeUnit::NANO);
    case TypeId::kTimestampTzNs: return arrow::timestamp(arrow::TimeUnit::NANO, "UTC");
    case TypeId::kString: return arrow::utf8();
    case TypeId::kUuid: return uuid_extension ? arrow::extension::uuid() : arrow::fixed_size_binary(16);
    case TypeId::kFixed: return arrow::fixed_size_binary(type.length());
    case TypeId::kBinary: return arrow::binary();
    case TypeId::kUnknown: return arrow::null();
    case TypeId::kStruct: {
      arrow::FieldVector fields;
      for (const auto& f : type.fields()) {
        ARROW_ASSIGN_OR_RAISE(auto af, ToArrowField(f, uuid_extension));
        fields.push_back(af);
      }
      return arrow::struct_(fields);
    }
    case TypeId::kList: {
      ARROW_ASSIGN_OR_RAISE(auto elem, ToArrowField(type.element(), uuid_extension));
      return arrow::list(elem);
    }
    case TypeId::kMap: {
      ARROW_ASSIGN_OR_RAISE(auto k, ToArrowField(type.key(), uuid_extension));
      ARROW_ASSIGN_OR_RAISE(auto v, ToArrowField(type.value(), uuid_extension));
      return std::make_shared<arrow::MapType>(k, v);
    }
    default: return Unsupported("type {} cannot be read or written as Arrow yet", type.ToString());
  }
}

Result<std::shared_ptr<arrow::Field>> ToArrowField(const NestedField& field, bool uuid_extension) {
  ARROW_ASSIGN_OR_RAISE(auto type, ToArrowType(*field.type, uuid_extension));
  return arrow::field(field.name, type, !field.required, IdMetadata(field.id));
}

Result<std::shared_ptr<arrow::Schema>> ToArrowSchema(const Schema& schema, bool uuid_extension) {
  arrow::FieldVector fields;
  for (const auto& f : schema.fields()) {
    LS_ASSIGN_OR_RAISE_CTX(auto af, ToArrowField(f, uuid_extension), "column '{}'", f.name);
    fields.push_back(af);
  }
  return arrow::schema(fields);
}

Result<SchemaPtr> FromArrowSchema(const arrow::Schema& schema, bool assign_fresh_ids, int32_t schema_id) {
  ArrowToIceberg conv(assign_fresh_ids);
  ARROW_ASSIGN_OR_RAISE(auto fields, conv.Fields(schema.fields()));
  auto out = std::make_shared<const Schema>(schema_id, std::move(fields));
  ARROW_RETURN_NOT_OK(out->Validate());
  return out;
}

std::shared_ptr<arrow::ArrayData> RetypeArrayData(const std::shared_ptr<arrow::ArrayData>& data,
                                                  const std::shared_ptr<arrow::DataType>& type) {
  if (data->type->Equals(*type)) return data;
  auto out = data->Copy();
  out->type = type;
  const auto& storage = type->id() == arrow::Type::EXTENSION
                            ? static_cast<const arrow::ExtensionType&>(*type).storage_type()
                            : type;
  for (size_t i = 0; i < out->child_data.size() && static_cast<int>(i) < storage->num_fields(); ++i) {
    out->child_data[i] = RetypeArrayData(data->child_data[i], storage->field(static_cast<int>(i))->type());
  }
  return out;
}

}  // namespace lakesync::iceberg
