#include "lakesync/iceberg/changelog/rows_ahead.h"

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <arrow/record_batch.h>
#include <arrow/util/byte_size.h>

namespace lakesync::changelog {
namespace {

Result<std::shared_ptr<arrow::RecordBatch>> TakeRows(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                     const std::vector<int64_t>& rows) {
  arrow::Int64Builder indices;
  ARROW_RETURN_NOT_OK(indices.AppendValues(rows));
  ARROW_ASSIGN_OR_RAISE(auto index_array, indices.Finish());
  ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(batch, index_array));
  return taken.record_batch();
}

// The indices of the `positions` (ascending) that are in `set`: one walk over the set's positions in
// their range (a lookup per position was 2% of the changelog's CPU).
std::vector<int64_t> IndicesIn(const std::vector<int64_t>& positions, const puffin::PositionBitmap& set) {
  std::vector<int64_t> out;
  if (positions.empty()) return out;
  const std::vector<int64_t> members = set.ToVector(positions.front(), positions.back() + 1);
  size_t m = 0;
  for (size_t r = 0; r < positions.size() && m < members.size(); ++r) {
    while (m < members.size() && members[m] < positions[r]) ++m;
    if (m < members.size() && members[m] == positions[r]) out.push_back(static_cast<int64_t>(r));
  }
  return out;
}

int64_t ChunkBytes(const RowsAhead::Chunk& chunk) {
  return arrow::util::TotalBufferSize(*chunk.rows) + static_cast<int64_t>(chunk.positions->size() * sizeof(int64_t));
}

}  // namespace

Result<std::shared_ptr<arrow::RecordBatch>> RowsAhead::Kept::RowsOf(size_t i,
                                                                    const puffin::PositionBitmap& which) const {
  const Chunk& chunk = chunks[i];
  const std::vector<int64_t>& at = *chunk.positions;
  const std::vector<int64_t> rows = IndicesIn(at, which);
  if (rows.empty()) return nullptr;
  if (rows.size() == at.size()) return chunk.rows;
  return TakeRows(chunk.rows, rows);
}

Status RowsAhead::Capture::Add(const std::shared_ptr<arrow::RecordBatch>& batch, const std::vector<int64_t>& rows,
                               std::vector<int64_t> positions) {
  if (abandoned_ || rows.empty()) return Status::OK();
  Chunk chunk;
  ARROW_ASSIGN_OR_RAISE(chunk.rows, TakeRows(batch, rows));
  chunk.positions = std::make_shared<const std::vector<int64_t>>(std::move(positions));
  kept_.bytes += ChunkBytes(chunk);
  if (kept_.bytes > budget_bytes_) {
    // Alone past the budget: the file is read again by the snapshots that need its rows.
    kept_ = Kept();
    abandoned_ = true;
    return Status::OK();
  }
  for (int64_t p : *chunk.positions) ARROW_RETURN_NOT_OK(kept_.kept.Add(p));
  kept_.chunks.push_back(std::move(chunk));
  return Status::OK();
}

void RowsAhead::SetRangeEnd(std::shared_ptr<const PositionsByFile> end) {
  std::lock_guard<std::mutex> lock(mutex_);
  range_end_ = std::move(end);
  kept_.clear();
  taken_.clear();
  kept_bytes_ = 0;
}

std::unique_ptr<RowsAhead::Capture> RowsAhead::BeginCapture(const std::string& path,
                                                            std::set<std::string> equality_deletes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (budget_bytes_ <= 0 || !range_end_) return nullptr;
  auto it = range_end_->find(path);
  if (it == range_end_->end()) return nullptr;
  auto capture = std::make_unique<Capture>();
  capture->path_ = path;
  capture->budget_bytes_ = budget_bytes_;
  capture->range_end_ = range_end_;
  capture->ahead_ = &it->second;
  capture->kept_.equality_deletes = std::move(equality_deletes);
  return capture;
}

void RowsAhead::Commit(std::unique_ptr<Capture> capture) {
  if (!capture) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = kept_.find(capture->path_);
  if (it != kept_.end()) {
    kept_bytes_ -= it->second->bytes;
    kept_.erase(it);
  }
  if (capture->abandoned_ || capture->kept_.chunks.empty()) return;
  if (kept_bytes_ + capture->kept_.bytes > budget_bytes_) {
    // Make room by dropping the taken rows that still sit in their chunks (Chunk).
    if (!CompactLocked().ok()) return;  // (out of memory copying: keep nothing more)
    if (kept_bytes_ + capture->kept_.bytes > budget_bytes_) return;  // read again when needed
  }
  kept_bytes_ += capture->kept_.bytes;
  kept_.emplace(capture->path_, std::make_shared<const Kept>(std::move(capture->kept_)));
}

std::shared_ptr<const RowsAhead::Kept> RowsAhead::Find(const std::string& path,
                                                      const std::set<std::string>& equality_deletes,
                                                      const puffin::PositionBitmap& deleted) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = kept_.find(path);
  if (it == kept_.end() || it->second->equality_deletes != equality_deletes) return nullptr;
  puffin::PositionBitmap missing = deleted;
  missing.AndNot(it->second->kept);
  return missing.IsEmpty() ? it->second : nullptr;
}

void RowsAhead::Take(const std::string& path, const puffin::PositionBitmap& deleted) {
  std::lock_guard<std::mutex> lock(mutex_);
  taken_[path].Or(deleted);
}

Status RowsAhead::ReleaseTaken() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [path, taken] : taken_) {
    auto it = kept_.find(path);
    if (it == kept_.end()) continue;
    const Kept& old = *it->second;
    auto left = std::make_shared<Kept>();
    left->equality_deletes = old.equality_deletes;
    left->kept = old.kept;
    left->kept.AndNot(taken);
    if (!left->kept.IsEmpty()) {
      for (const Chunk& chunk : old.chunks) {
        // The chunks of a file hold disjoint position ranges: the positions still kept in this one's
        // range are its rows not taken.
        const std::vector<int64_t>& at = *chunk.positions;
        if (left->kept.CountIn(at.front(), at.back() + 1) == 0) continue;
        left->bytes += ChunkBytes(chunk);
        left->chunks.push_back(chunk);
      }
    }
    Replace(it, std::move(left));
  }
  taken_.clear();
  return Status::OK();
}

void RowsAhead::Replace(std::map<std::string, std::shared_ptr<const Kept>>::iterator it,
                        std::shared_ptr<Kept> with) {
  kept_bytes_ -= it->second->bytes;
  if (with->chunks.empty()) {
    kept_.erase(it);
  } else {
    kept_bytes_ += with->bytes;
    it->second = std::move(with);
  }
}

Status RowsAhead::CompactLocked() {
  for (auto it = kept_.begin(); it != kept_.end();) {
    auto next_it = std::next(it);
    const Kept& old = *it->second;
    int64_t held = 0;
    for (const Chunk& chunk : old.chunks) held += static_cast<int64_t>(chunk.positions->size());
    if (held == old.kept.Cardinality()) {  // nothing of this file taken
      it = next_it;
      continue;
    }
    auto left = std::make_shared<Kept>();
    left->equality_deletes = old.equality_deletes;
    left->kept = old.kept;
    for (const Chunk& chunk : old.chunks) {
      const std::vector<int64_t>& at = *chunk.positions;
      Chunk copy = chunk;
      if (old.kept.CountIn(at.front(), at.back() + 1) < static_cast<int64_t>(at.size())) {
        const std::vector<int64_t> rows = IndicesIn(at, old.kept);
        std::vector<int64_t> positions;
        positions.reserve(rows.size());
        for (int64_t r : rows) positions.push_back(at[static_cast<size_t>(r)]);
        ARROW_ASSIGN_OR_RAISE(copy.rows, TakeRows(chunk.rows, rows));
        copy.positions = std::make_shared<const std::vector<int64_t>>(std::move(positions));
      }
      left->bytes += ChunkBytes(copy);
      left->chunks.push_back(std::move(copy));
    }
    Replace(it, std::move(left));
    it = next_it;
  }
  return Status::OK();
}

int64_t RowsAhead::kept_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kept_bytes_;
}

}  // namespace lakesync::changelog
