#include "lakesync/common/constant_column.h"

#include <algorithm>
#include <utility>

namespace lakesync {

ConstantColumn::ConstantColumn(std::shared_ptr<arrow::Scalar> value, int64_t min_rows, arrow::MemoryPool* pool)
    : value_(std::move(value)), min_rows_(min_rows), pool_(pool ? pool : arrow::default_memory_pool()) {}

Result<std::shared_ptr<arrow::Array>> ConstantColumn::Get(int64_t rows) const {
  std::shared_ptr<arrow::Array> made;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!made_ || made_->length() < rows) {
      ARROW_ASSIGN_OR_RAISE(made_, arrow::MakeArrayFromScalar(*value_, std::max(rows, min_rows_), pool_));
    }
    made = made_;
  }
  return made->length() == rows ? made : made->Slice(0, rows);
}

}  // namespace lakesync
