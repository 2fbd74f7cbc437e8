// The deletes of one file scan task, applied to the rows of its data file (shaped like iceberg-cpp's
// DeleteFilter): the positions its deletion vector or position delete files remove, and the keys the
// equality deletes remove. Which position deletes apply is planning's (table/scan_planner.cc); the
// equality deletes are the scan's shared key maps (equality_deletes.h: one per scope and equality-id
// set, key → highest delete sequence number), probed once per row and map with the sequence-number
// rule (EqualityDeleteApplies) against the task's data sequence number.
#pragma once

#include <arrow/type_fwd.h>

#include <memory>
#include <vector>

#include "lakesync/formats/puffin/positions_bitmap.h"
#include "lakesync/iceberg/scan/delete_loader.h"
#include "lakesync/iceberg/scan/file_scan_task.h"

namespace lakesync::iceberg {

class DeleteFilter {
 public:
  // Loads the task's deletes through the scan's shared loader. `positions`, when given, are the
  // task's deleted positions already loaded (DeleteLoader::DeletedPositions of the same files).
  static Result<std::shared_ptr<const DeleteFilter>> Make(DeleteLoader& loader, const FileScanTask& task,
                                                          const puffin::PositionBitmap* positions = nullptr);
  // A filter that deletes nothing.
  static std::shared_ptr<const DeleteFilter> None();

  // Top-level field ids the rows must carry for the equality deletes.
  const std::vector<int32_t>& required_field_ids() const { return required_; }
  bool empty() const { return positions_.IsEmpty() && equality_.empty(); }
  bool has_equality_deletes() const { return !equality_.empty(); }
  const puffin::PositionBitmap& deleted_positions() const { return positions_; }

  // Clears the bit (in `live`, one bit per row of `batch`) of every row the deletes remove. `batch`
  // holds consecutive rows of the data file starting at `first_position`, with the required columns
  // (found by the field ids in their Arrow metadata, as the data-file reader produces them).
  // Returns the number of rows it cleared that were set.
  Result<int64_t> MarkDeleted(const arrow::RecordBatch& batch, int64_t first_position, uint8_t* live) const;

 private:
  puffin::PositionBitmap positions_;
  int64_t data_sequence_number_ = 0;
  std::vector<std::shared_ptr<const EqualityKeyMap>> equality_;
  std::vector<int32_t> required_;
};

}  // namespace lakesync::iceberg
