#include "lakesync/iceberg/scan/delete_filter.h"

#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <arrow/util/bit_util.h>

#include <algorithm>
#include <limits>
#include <optional>

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
  filter->data_sequence_number_ = task.data_sequence_number;
  if (!task.equality_deletes.empty()) {
    const EqualityDeleteIndex* index = task.equality_index.get();
    std::unique_ptr<EqualityDeleteIndex> own;
    if (index == nullptr) {
      // A task made without a planned index: its own files, already matched (so applying to it
      // whatever their number), read for it alone.
      own = std::make_unique<EqualityDeleteIndex>();
      for (const auto& f : task.equality_deletes) {
        own->Add(SequencedDeleteFile{std::numeric_limits<int64_t>::max(), f}, /*global=*/true);
      }
      own->Match(*task.file, task.data_sequence_number);
      index = own.get();
    }
    ARROW_ASSIGN_OR_RAISE(filter->equality_,
                          index->KeyMapsFor(*task.file, task.data_sequence_number,
                                            [&loader](const std::vector<int32_t>& ids,
                                                      const std::vector<SequencedDeleteFile>& files) {
                                              return loader.BuildEqualityKeyMap(ids, files);
                                            }));
    for (const auto& map : filter->equality_) {
      for (int32_t id : map->field_ids) {
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
  // Maps with the same field ids (a partition's and the global one) share the batch's key columns.
  const std::vector<int32_t>* keyed_ids = nullptr;
  std::optional<KeyColumns> keys;
  for (const auto& map : equality_) {
    if (!keyed_ids || *keyed_ids != map->field_ids) {
      std::vector<std::shared_ptr<arrow::Array>> columns;
      for (int32_t id : map->field_ids) {
        int index = -1;
        for (int c = 0; c < batch.num_columns(); ++c) {
          if (ArrowFieldId(*batch.schema()->field(c)) == id) index = c;
        }
        if (index < 0) return Status::Invalid("equality delete column ", id, " was not read");
        columns.push_back(batch.column(index));
      }
      ARROW_ASSIGN_OR_RAISE(keys, KeyColumns::Make(std::move(columns)));
      keyed_ids = &map->field_ids;
    }
    cleared += map->keys.ClearAbove(*keys, HighestSequenceNotApplying(data_sequence_number_), live);
  }
  return cleared;
}

}  // namespace lakesync::iceberg
