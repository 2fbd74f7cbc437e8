#include "lakesync/iceberg/scan/delete_filter.h"

#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <arrow/util/bit_util.h>

#include <algorithm>

#include "lakesync/iceberg/model/arrow_schema.h"

namespace lakesync::iceberg {

Result<std::shared_ptr<const DeleteFilter>> DeleteFilter::Make(DeleteLoader& loader, const FileScanTask& task,
                                                               const puffin::PositionBitmap* positions) {
  auto filter = std::make_shared<DeleteFilter>();
  if (positions) {
    filter->positions_ = *positions;
  } else {
    ARROW_ASSIGN_OR_RAISE(filter->positions_,
                          loader.DeletedPositions(task.file->file_path, task.deletion_vector, task.position_deletes));
  }
  if (!task.equality_deletes.empty()) {
    ARROW_ASSIGN_OR_RAISE(filter->equality_, loader.MergedEqualityDeletes(task.equality_deletes));
    for (const auto& set : filter->equality_) {
      for (int32_t id : set->field_ids) {
        if (std::find(filter->required_.begin(), filter->required_.end(), id) == filter->required_.end()) {
          filter->required_.push_back(id);
        }
      }
    }
  }
  return std::shared_ptr<const DeleteFilter>(std::move(filter));
}

std::shared_ptr<const DeleteFilter> DeleteFilter::None() {
  static const auto kNone = std::make_shared<const DeleteFilter>();
  return kNone;
}

Result<int64_t> DeleteFilter::MarkDeleted(const arrow::RecordBatch& batch, int64_t first_position,
                                          uint8_t* live) const {
  const int64_t n = batch.num_rows();
  int64_t cleared = 0;
  if (!positions_.IsEmpty()) {
    for (int64_t pos : positions_.ToVector(first_position, first_position + n)) {
      const int64_t row = pos - first_position;
      if (arrow::bit_util::GetBit(live, row)) {
        arrow::bit_util::ClearBit(live, row);
        ++cleared;
      }
    }
  }
  for (const auto& set : equality_) {
    std::vector<std::shared_ptr<arrow::Array>> columns;
    for (int32_t id : set->field_ids) {
      int index = -1;
      for (int c = 0; c < batch.num_columns(); ++c) {
        if (ArrowFieldId(*batch.schema()->field(c)) == id) index = c;
      }
      if (index < 0) return Status::Invalid("equality delete column ", id, " was not read");
      columns.push_back(batch.column(index));
    }
    ARROW_ASSIGN_OR_RAISE(auto keys, KeyColumns::Make(std::move(columns)));
    for (int64_t i = 0; i < n; ++i) {
      if (!arrow::bit_util::GetBit(live, i)) continue;
      if (set->keys.Contains(keys, i)) {
        arrow::bit_util::ClearBit(live, i);
        ++cleared;
      }
    }
  }
  return cleared;
}

}  // namespace lakesync::iceberg
