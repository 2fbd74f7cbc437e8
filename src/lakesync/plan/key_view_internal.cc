#include "lakesync/plan/key_view_internal.h"

#include <arrow/api.h>
#include <arrow/extension_type.h>


namespace lakesync::plan::internal {
namespace {

bool IsFloating(arrow::Type::type id) {
  return id == arrow::Type::HALF_FLOAT || id == arrow::Type::FLOAT || id == arrow::Type::DOUBLE;
}

bool IsAcceptedKeyType(arrow::Type::type id) {
  switch (id) {
    case arrow::Type::BOOL:
    case arrow::Type::INT8: case arrow::Type::INT16: case arrow::Type::INT32: case arrow::Type::INT64:
    case arrow::Type::UINT8: case arrow::Type::UINT16: case arrow::Type::UINT32: case arrow::Type::UINT64:
    case arrow::Type::DATE32: case arrow::Type::DATE64:
    case arrow::Type::TIME32: case arrow::Type::TIME64:
    case arrow::Type::TIMESTAMP: case arrow::Type::DURATION:
    case arrow::Type::DECIMAL32: case arrow::Type::DECIMAL64:
    case arrow::Type::DECIMAL128: case arrow::Type::DECIMAL256:
    case arrow::Type::FIXED_SIZE_BINARY:
    case arrow::Type::STRING: case arrow::Type::BINARY:
    case arrow::Type::LARGE_STRING: case arrow::Type::LARGE_BINARY:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::shared_ptr<arrow::Array> StorageArray(std::shared_ptr<arrow::Array> array) {
  while (array->type_id() == arrow::Type::EXTENSION) {
    array = std::static_pointer_cast<arrow::ExtensionArray>(array)->storage();
  }
  return array;
}

std::shared_ptr<arrow::DataType> StorageType(std::shared_ptr<arrow::DataType> type) {
  while (type->id() == arrow::Type::EXTENSION) {
    type = std::static_pointer_cast<arrow::ExtensionType>(type)->storage_type();
  }
  return type;
}

Status CheckKeyType(const std::string& column, const std::shared_ptr<arrow::DataType>& type) {
  // Dictionary columns are decoded before grouping; extension columns are grouped by their storage.
  auto storage = type;
  if (storage->id() == arrow::Type::DICTIONARY) {
    storage = std::static_pointer_cast<arrow::DictionaryType>(storage)->value_type();
  }
  storage = StorageType(storage);
  if (IsFloating(storage->id())) {
    return InvalidArgument("equality column '{}' has type {}: floating-point columns cannot be equality "
                           "(identifier) columns", column, type->ToString());
  }
  if (!IsAcceptedKeyType(storage->id())) {
    return InvalidArgument("equality column '{}' has type {}, which is not supported as an equality key "
                           "(use a primitive type: integer, boolean, date, time, timestamp, decimal, string, "
                           "binary or fixed)", column, type->ToString());
  }
  return Status::OK();
}

}  // namespace lakesync::plan::internal
