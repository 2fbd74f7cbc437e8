// Type-erased access to the raw bytes of equality-key values, so that grouping and hash
// partitioning work the same way for every key type without per-row Arrow scalars. Two values of one
// column are equal exactly when their bytes are, which holds for every accepted key type (floats,
// whose NaN and -0.0 break it, are rejected by CheckKeyType).
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lakesync/common/status.h"

namespace lakesync::plan::internal {

// The array itself, or the storage of an extension array (e.g. arrow.uuid).
std::shared_ptr<arrow::Array> StorageArray(std::shared_ptr<arrow::Array> array);
std::shared_ptr<arrow::DataType> StorageType(std::shared_ptr<arrow::DataType> type);

// OK when `type` (after extension storage and dictionary values) can be an equality key; otherwise
// InvalidArgument naming `column` and the type.
Status CheckKeyType(const std::string& column, const std::shared_ptr<arrow::DataType>& type);

// Views of one or more non-null key columns of equal length. Holds raw pointers: the arrays must
// outlive the view.
class KeyView {
 public:
  // Errors: Unsupported for a type CheckKeyType would reject.
  static Result<KeyView> Make(const std::vector<std::shared_ptr<arrow::Array>>& columns);

  bool Equal(int64_t i, int64_t j) const;
  // One 64-bit hash per row of all key columns; different seeds give independent partitions.
  std::vector<uint64_t> HashRows(uint64_t seed) const;

 private:
  enum class Layout { kFixed, kBit, kBinary32, kBinary64 };
  struct Column {
    Layout layout;
    const uint8_t* data;      // values (fixed, bit, binary bytes)
    const int32_t* offsets32;
    const int64_t* offsets64;
    int64_t offset;           // the array's slice offset
    int32_t width;            // bytes per value for kFixed
  };
  std::vector<Column> columns_;
  int64_t length_ = 0;
};

}  // namespace lakesync::plan::internal
