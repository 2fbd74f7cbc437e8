// One snapshot's change set: the scan plans of the parent and the snapshot compared file by file,
// each changed data file read once per pass with both states' deletes applied, and the rows whose
// liveness differs emitted as DELETE (live before, not after) or INSERT (live after, not before).
// Netting (copy-on-write carry-over, update pairing) needs both sides of the snapshot, so a snapshot
// with deleted and inserted rows is read twice: a first pass counts rows and keys by hash, the
// second emits (see changelog_source.h).
#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <arrow/extension_type.h>
#include <arrow/record_batch.h>
#include <arrow/scalar.h>
#include <arrow/type.h>
#include <arrow/util/bit_util.h>
#include <arrow/util/byte_size.h>
#include <arrow/util/hashing.h>

#include <algorithm>
#include <set>
#include <cmath>
#include <cstring>
#include <limits>

#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/change/change_kind.h"
#include "lakesync/common/constant_column.h"
#include "lakesync/common/executor.h"
#include "lakesync/formats/parquet/parquet_data_reader.h"
#include "lakesync/iceberg/changelog/change_netting.h"
#include "lakesync/iceberg/changelog/changelog_internal.h"
#include "lakesync/iceberg/changelog/rows_ahead.h"
#include "lakesync/iceberg/expr/row_filter.h"
#include "lakesync/iceberg/model/key_columns.h"
#include "lakesync/iceberg/scan/data_file_reader.h"

namespace lakesync::changelog {
namespace {

using change::ChangeKind;
using iceberg::DataFilePtr;
using table::FileScanTask;

using iceberg::Hash128;

// What may have changed for one data file between the parent's plan and the snapshot's.
struct FileChange {
  DataFilePtr file;
  const FileScanTask* before = nullptr;  // the file's task in the parent (null: not live there)
  const FileScanTask* after = nullptr;   // the file's task in the snapshot (null: removed)
  // For files live in both: their deleted positions in each state, loaded while planning.
  std::optional<puffin::PositionBitmap> before_positions, after_positions;
  bool same_equality_deletes = false;

  static FileChange Of(DataFilePtr file, const FileScanTask* before, const FileScanTask* after) {
    FileChange c;
    c.file = std::move(file);
    c.before = before;
    c.after = after;
    return c;
  }
};

std::string DeleteKey(const DataFilePtr& f) {
  return f ? f->file_path + "@" + std::to_string(f->content_offset.value_or(-1)) : std::string();
}

std::set<std::string> PathsOf(const std::vector<DataFilePtr>& files) {
  std::set<std::string> out;
  for (const auto& f : files) out.insert(DeleteKey(f));
  return out;
}

bool SameDeleteFiles(const FileScanTask& a, const FileScanTask& b) {
  return DeleteKey(a.deletion_vector) == DeleteKey(b.deletion_vector) &&
         PathsOf(a.position_deletes) == PathsOf(b.position_deletes) &&
         PathsOf(a.equality_deletes) == PathsOf(b.equality_deletes);
}

// The 128-bit hashes of changed rows, by the one key encoder (iceberg/model/key_columns.h): equal
// values (nulls equal, NaNs canonical) hash alike. With keys, a row's hash continues its key's hash
// over the other columns, so the key columns are hashed once per row, not twice.
class ChangeHasher {
 public:
  ChangeHasher(size_t num_columns, std::vector<int> key_columns) : keys_(std::move(key_columns)) {
    for (size_t i = 0; i < num_columns; ++i) {
      const int c = static_cast<int>(i);
      if (std::find(keys_.begin(), keys_.end(), c) == keys_.end()) others_.push_back(c);
    }
  }

  bool has_keys() const { return !keys_.empty(); }

  // Row hashes into `rows`; with keys, key hashes into `keys` too.
  Status HashRows(const arrow::RecordBatch& batch, std::vector<Hash128>& rows, std::vector<Hash128>& keys) const {
    if (keys_.empty() && others_.empty()) {
      rows.assign(static_cast<size_t>(batch.num_rows()), Hash128{1, 1});
      return Status::OK();
    }
    ARROW_ASSIGN_OR_RAISE(auto other_columns, ColumnsOf(batch, others_));
    if (!has_keys()) {
      other_columns.HashRows128(rows);
      return Status::OK();
    }
    ARROW_ASSIGN_OR_RAISE(auto key_columns, ColumnsOf(batch, keys_));
    key_columns.HashRows128(keys);
    rows = keys;
    other_columns.FoldRows128(rows);
    return Status::OK();
  }

 private:
  static Result<iceberg::KeyColumns> ColumnsOf(const arrow::RecordBatch& batch, const std::vector<int>& columns) {
    std::vector<std::shared_ptr<arrow::Array>> arrays;
    for (int c : columns) arrays.push_back(batch.column(c));
    return iceberg::KeyColumns::Make(std::move(arrays));
  }

  std::vector<int> keys_, others_;
};

struct SidedBatch {
  std::shared_ptr<arrow::RecordBatch> batch;  // in the read schema; null once pass one dropped it
  std::vector<uint8_t> side;                  // Side per row
  int64_t changed = 0;
  // Pass one: the changed rows' hashes (dropped once they are decided).
  std::vector<Hash128> row_hashes, key_hashes;
  int64_t first = 0;  // ordinal of its first changed row in the snapshot (its decisions' offset)
};

// Reads one data file with the deletes of both states applied and tells, per row, which side of
// the change it is on.
class FileCursor {
 public:
  // Null (and nothing read) when the file cannot contribute a change. `capture`: keep the rows that
  // later snapshots of the range delete (rows_ahead.h), on the snapshot's first read of the file.
  static Result<std::unique_ptr<FileCursor>> Open(ChangelogSource::Shared& shared,
                                                  const std::shared_ptr<const iceberg::ScanContext>& context,
                                                  const FileChange& change, bool capture) {
    std::unique_ptr<FileCursor> c(new FileCursor());
    c->has_before_ = change.before != nullptr;
    c->has_after_ = change.after != nullptr;
    const std::string& path = change.file->file_path;
    std::optional<puffin::PositionBitmap> candidates;  // positions that can change; unset: all
    if (change.before && change.after && change.same_equality_deletes) {
      puffin::PositionBitmap gone = *change.after_positions;
      gone.AndNot(*change.before_positions);
      puffin::PositionBitmap back = *change.before_positions;
      back.AndNot(*change.after_positions);
      if (back.IsEmpty()) {
        if (gone.IsEmpty()) return nullptr;
        // Only newly deleted rows: an earlier snapshot of the range may have kept them.
        if (auto kept = shared.rows_ahead.Find(path, PathsOf(change.before->equality_deletes), gone)) {
          shared.rows_ahead.Take(path, gone);
          c->kept_ = std::move(kept);
          c->kept_positions_ = std::move(gone);
          return c;
        }
      }
      gone.Or(back);
      candidates = std::move(gone);
    }
    iceberg::DataFileReadOptions options;
    options.filter = shared.filter;
    options.deletes = iceberg::DataFileReadOptions::Deletes::kMask;
    // One delete state per table state the file is live in, before first.
    for (const auto& [task, positions] : {std::pair{change.before, &change.before_positions},
                                          std::pair{change.after, &change.after_positions}}) {
      if (!task) continue;
      ARROW_ASSIGN_OR_RAISE(auto deletes,
                            iceberg::DeleteFilter::Make(*context->deletes, *task, *positions ? &**positions : nullptr));
      options.delete_states.push_back(std::move(deletes));
    }
    options.batch_rows = shared.batch_rows;
    options.use_threads = true;
    const FileScanTask& task = change.after ? *change.after : *change.before;
    ARROW_ASSIGN_OR_RAISE(c->reader_, iceberg::DataFileReader::Open(context, task, options));
    if (candidates) {
      // Only a few positions can change: read just the row groups that hold them.
      const auto& row_groups = c->reader_->file_reader().row_groups();
      std::vector<int> groups;
      for (const auto& g : row_groups) {
        if (!candidates->ToVector(g.first_row, g.first_row + g.num_rows).empty()) groups.push_back(g.index);
      }
      if (groups.empty()) return nullptr;
      if (groups.size() < row_groups.size()) {
        options.row_groups = groups;
        ARROW_ASSIGN_OR_RAISE(c->reader_, iceberg::DataFileReader::Open(context, task, options));
      }
    }
    if (capture && change.after) {
      c->capture_ = shared.rows_ahead.BeginCapture(path, PathsOf(change.after->equality_deletes));
    }
    return c;
  }

  // Whether the rows come from rows kept by an earlier snapshot (nothing is read).
  bool from_kept_rows() const { return kept_ != nullptr; }
  // The rows kept while reading, once Next() has returned nullopt (null when none).
  std::unique_ptr<RowsAhead::Capture> TakeCapture() { return std::move(capture_); }

  Result<std::optional<SidedBatch>> Next() {
    if (kept_) {
      while (next_chunk_ < kept_->chunks.size()) {
        ARROW_ASSIGN_OR_RAISE(auto rows, kept_->RowsOf(next_chunk_++, kept_positions_));
        if (!rows) continue;
        SidedBatch out;
        out.batch = std::move(rows);
        out.changed = out.batch->num_rows();
        out.side.assign(static_cast<size_t>(out.changed), kDelete);
        return out;
      }
      return std::nullopt;
    }
    while (true) {
      ARROW_ASSIGN_OR_RAISE(auto next, reader_->Next());
      if (!next) return std::nullopt;
      const auto& batch = next->batch;
      const int64_t n = batch->num_rows();
      // The live masks come in state order: before (if live there), then after (if live there).
      const arrow::Buffer* before = has_before_ ? next->live[0].get() : nullptr;
      const arrow::Buffer* after = has_after_ ? next->live[has_before_ ? 1 : 0].get() : nullptr;
      auto live = [&](bool has, const arrow::Buffer* mask, int64_t i) {
        return has && (mask == nullptr || arrow::bit_util::GetBit(mask->data(), i));
      };
      SidedBatch out;
      out.side.assign(static_cast<size_t>(n), kNone);
      for (int64_t i = 0; i < n; ++i) {
        const bool was = live(has_before_, before, i);
        const bool is = live(has_after_, after, i);
        if (was != is) {
          out.side[static_cast<size_t>(i)] = was ? kDelete : kInsert;
          ++out.changed;
        }
      }
      if (capture_) {
        // Rows live now that the range's end deletes: a later snapshot takes them from here.
        const int64_t first = next->first_row_position;
        std::vector<int64_t> rows, positions;
        for (int64_t p : capture_->AheadIn(first, first + n)) {
          if (!live(has_after_, after, p - first)) continue;
          rows.push_back(p - first);
          positions.push_back(p);
        }
        ARROW_RETURN_NOT_OK(capture_->Add(batch, rows, std::move(positions)));
      }
      if (out.changed == 0) continue;
      out.batch = batch;
      return out;
    }
  }

 private:
  FileCursor() = default;

  bool has_before_ = false, has_after_ = false;
  std::unique_ptr<iceberg::DataFileReader> reader_;
  std::unique_ptr<RowsAhead::Capture> capture_;
  // Serving kept rows instead: those at kept_positions_, chunk by chunk.
  std::shared_ptr<const RowsAhead::Kept> kept_;
  puffin::PositionBitmap kept_positions_;
  size_t next_chunk_ = 0;
};

class SnapshotChangeReader : public arrow::RecordBatchReader {
 public:
  SnapshotChangeReader(std::shared_ptr<ChangelogSource::Shared> shared, PendingSnapshot pending,
                       std::shared_ptr<const PlanMap> before_plan, std::shared_ptr<const PlanMap> after_plan,
                       std::vector<FileChange> changes, bool netting,
                       std::shared_ptr<const iceberg::ScanContext> context)
      : shared_(std::move(shared)), pending_(std::move(pending)), before_plan_(std::move(before_plan)),
        after_plan_(std::move(after_plan)), changes_(std::move(changes)), netting_(netting),
        context_(std::move(context)),
        hasher_(shared_->schema->fields().size(), shared_->key_columns),
        constants_(SnapshotConstants(*shared_, pending_)) {
    for (const auto& c : changes_) {
      if (c.before && c.after) {
        ++stats_.files_changed;
      } else if (c.before) {
        ++stats_.files_removed;
      } else {
        ++stats_.files_added;
      }
    }
  }

  std::shared_ptr<arrow::Schema> schema() const override { return shared_->output_schema; }

  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    *out = nullptr;
    if (!counted_ && netting_) {
      LS_RETURN_NOT_OK_CTX(CountPass(), "reading the changes of snapshot {} of {}", pending_.snapshot->snapshot_id,
                           shared_->table->name());
    }
    counted_ = true;
    if (cache_complete_) {
      // Pass two from the rows pass one kept, every row already decided: the output batches are
      // built on the executor and come back in the order of the rows.
      if (!emitted_) {
        emitted_ = std::make_unique<OrderedStream<Emitted>>([this]() -> Result<std::optional<OrderedStream<Emitted>::Unit>> {
          if (next_cached_ >= cache_.size()) return std::nullopt;
          SidedBatch* sided = &cache_[next_cached_++];
          return std::optional<OrderedStream<Emitted>::Unit>([this, sided]() -> Result<Emitted> {
            Emitted e;
            ARROW_ASSIGN_OR_RAISE(e.batch, Emit(*sided, DecisionsOf(sided->first), e.stats));
            *sided = SidedBatch();  // its rows are in the output now
            return e;
          });
        });
      }
      while (true) {
        ARROW_ASSIGN_OR_RAISE(auto next, emitted_->Next());
        if (!next) return Finish();
        Add(next->stats);
        if (next->batch) {
          *out = std::move(next->batch);
          return Status::OK();
        }
      }
    }
    while (true) {
      if (!cursor_) {
        if (next_change_ >= changes_.size()) return Finish();
        const FileChange& change = changes_[next_change_++];
        // A second pass reading the files again has kept what they hold already.
        LS_ASSIGN_OR_RAISE_CTX(cursor_, FileCursor::Open(*shared_, context_, change, /*capture=*/!reread_),
                               "reading data file {} for snapshot {} of {}", change.file->file_path,
                               pending_.snapshot->snapshot_id, shared_->table->name());
        current_path_ = change.file->file_path;
        if (!cursor_) continue;
        if (!reread_) {
          ++stats_.files_read;
          if (cursor_->from_kept_rows()) ++stats_.files_from_kept_rows;
        }
      }
      auto next = cursor_->Next();
      if (!next.ok()) return WithContext(next.status(), "reading data file " + current_path_);
      if (!next->has_value()) {
        shared_->rows_ahead.Commit(cursor_->TakeCapture());
        cursor_.reset();
        continue;
      }
      // Pass two reading the files again (pass one's rows did not fit the cache): the files give the
      // same changed rows in the same order, so the decisions are taken by ordinal.
      EmitStats counts;
      const uint8_t* decisions = DecisionsOf(next_ordinal_);
      next_ordinal_ += (*next)->changed;
      ARROW_ASSIGN_OR_RAISE(*out, Emit(**next, decisions, counts));
      Add(counts);
      if (*out) return Status::OK();
    }
  }

 private:
  struct EmitStats {
    int64_t inserts = 0, deletes = 0, updates = 0, carried_over = 0;
  };
  struct Emitted {
    std::shared_ptr<arrow::RecordBatch> batch;  // null: every row was carried over
    EmitStats stats;
  };

  void Add(const EmitStats& s) {
    stats_.inserts += s.inserts;
    stats_.deletes += s.deletes;
    stats_.updates += s.updates;
    stats_.carried_over += s.carried_over;
  }

  // The decisions of the changed rows from `ordinal` on (null: no netting, rows are what they are).
  const uint8_t* DecisionsOf(int64_t ordinal) const {
    if (!netting_) return nullptr;
    return decisions_.data() + ordinal;
  }

  Status Finish() {
    if (!finished_) {
      finished_ = true;
      // The rows this snapshot took from those kept ahead are in its output now.
      ARROW_RETURN_NOT_OK(shared_->rows_ahead.ReleaseTaken());
      std::lock_guard<std::mutex> lock(shared_->mutex);
      shared_->last_stats = stats_;
    }
    return Status::OK();
  }


  // The changed rows of a batch, in order.
  static Result<SidedBatch> Compact(const SidedBatch& sided) {
    if (sided.changed == sided.batch->num_rows()) return sided;
    SidedBatch out;
    arrow::Int64Builder indices;
    ARROW_RETURN_NOT_OK(indices.Reserve(sided.changed));
    out.side.reserve(static_cast<size_t>(sided.changed));
    for (int64_t i = 0; i < sided.batch->num_rows(); ++i) {
      const uint8_t side = sided.side[static_cast<size_t>(i)];
      if (side == kNone) continue;
      indices.UnsafeAppend(i);
      out.side.push_back(side);
    }
    ARROW_ASSIGN_OR_RAISE(auto index_array, indices.Finish());
    ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(sided.batch, index_array));
    out.batch = taken.record_batch();
    out.changed = sided.changed;
    return out;
  }

  // Keeps a compacted batch's hashes and sides for deciding, and its rows while they fit
  // shared_->cache_budget_bytes, so that pass two need not read the files again (beyond it every
  // batch's rows are dropped: pass two reads the files a second time).
  void Keep(SidedBatch&& compact) {
    if (!cache_overflow_) {
      for (const auto& column : compact.batch->columns()) {
        cache_bytes_ += arrow::util::TotalBufferSize(*column->data());
      }
      cache_bytes_ += static_cast<int64_t>((compact.row_hashes.size() + compact.key_hashes.size()) * sizeof(Hash128));
      if (cache_bytes_ > shared_->cache_budget_bytes) {
        cache_overflow_ = true;
        for (auto& kept : cache_) kept.batch.reset();
      }
    }
    if (cache_overflow_) compact.batch.reset();
    compact.first = changed_rows_;
    changed_rows_ += compact.changed;
    cache_.push_back(std::move(compact));
  }

  bool has_keys() const { return !shared_->key_columns.empty(); }

  // Pass one: count changed rows by full-row hash (and their key), then decide how many of each row
  // cancel (identical DELETE and INSERT) and how many of each key's remaining rows pair into updates.
  Status CountPass() {
    // The files are read, their changed rows compacted and hashed on the engine's executor
    // (common/executor.h), and kept here in file order; then the rows are decided by key on the
    // executor (change_netting.h: the result does not depend on the thread count).
    struct FileRows {
      bool read = false, from_kept_rows = false;
      std::vector<SidedBatch> batches;
      std::unique_ptr<RowsAhead::Capture> capture;  // committed in file order (rows_ahead.h)
    };
    size_t next_file = 0;
    OrderedStream<FileRows> files([this, &next_file]() -> Result<std::optional<OrderedStream<FileRows>::Unit>> {
      if (next_file >= changes_.size()) return std::nullopt;
      const FileChange* change = &changes_[next_file++];
      return std::optional<OrderedStream<FileRows>::Unit>([this, change]() -> Result<FileRows> {
        FileRows out;
        const std::string& path = change->file->file_path;
        LS_ASSIGN_OR_RAISE_CTX(auto cursor, FileCursor::Open(*shared_, context_, *change, /*capture=*/true),
                               "reading data file {}", path);
        if (!cursor) return out;
        out.read = true;
        out.from_kept_rows = cursor->from_kept_rows();
        while (true) {
          LS_ASSIGN_OR_RAISE_CTX(auto next, cursor->Next(), "reading data file {}", path);
          if (!next) break;
          // Only the changed rows matter: hash those (a DV change reads a whole file for a few rows).
          ARROW_ASSIGN_OR_RAISE(SidedBatch compact, Compact(*next));
          ARROW_RETURN_NOT_OK(hasher_.HashRows(*compact.batch, compact.row_hashes, compact.key_hashes));
          out.batches.push_back(std::move(compact));
        }
        out.capture = cursor->TakeCapture();
        return out;
      });
    });
    while (true) {
      ARROW_ASSIGN_OR_RAISE(auto file, files.Next());
      if (!file) break;
      if (file->read) ++stats_.files_read;
      if (file->from_kept_rows) ++stats_.files_from_kept_rows;
      shared_->rows_ahead.Commit(std::move(file->capture));
      for (SidedBatch& compact : file->batches) Keep(std::move(compact));
    }
    reread_ = true;  // unless every row is kept below: pass two reads the files again
    cache_complete_ = !cache_overflow_;
    // Every changed row is decided now, by key on the executor (change_netting.h); pass two only looks
    // its decision up, whether from the kept rows or reading the files again.
    ChangeNetting netting(has_keys());
    for (const SidedBatch& kept : cache_) {
      ARROW_RETURN_NOT_OK(netting.Add(kept.row_hashes.data(), has_keys() ? kept.key_hashes.data() : nullptr,
                                      kept.side.data(), kept.side.size()));
    }
    bool any = false;
    NettingBuffer buffer;
    {
      std::lock_guard<std::mutex> lock(shared_->mutex);
      buffer = std::move(shared_->netting_buffer);
    }
    auto decided = netting.Decide(&any, &buffer);
    {
      std::lock_guard<std::mutex> lock(shared_->mutex);
      if (buffer.bytes() > shared_->netting_buffer.bytes()) shared_->netting_buffer = std::move(buffer);
    }
    ARROW_ASSIGN_OR_RAISE(decisions_, std::move(decided));
    if (!any) {
      // Nothing cancels or pairs: every row is emitted as what it is.
      netting_ = false;
      decisions_ = {};
    }
    if (cache_complete_) {
      for (SidedBatch& kept : cache_) {  // not needed again
        kept.row_hashes = {};
        kept.key_hashes = {};
      }
    } else {
      cache_.clear();  // only hashes were left; pass two reads the files again
    }
    return Status::OK();
  }

  // The output rows of a batch: its changed rows as `decisions` says (one per changed row, in order;
  // null: each row is what its side says). Touches nothing shared, so batches are emitted on the
  // executor.
  Result<std::shared_ptr<arrow::RecordBatch>> Emit(const SidedBatch& sided, const uint8_t* decisions,
                                                   EmitStats& stats) const {
    const auto& batch = *sided.batch;
    arrow::Int64Builder indices;
    ARROW_RETURN_NOT_OK(indices.Reserve(sided.changed));
    // _change_type: the kind names, or their codes into shared_->change_type_names.
    const bool kind_codes = shared_->change_type_names != nullptr;
    arrow::StringBuilder kinds;
    arrow::Int8Builder codes;
    if (kind_codes) {
      ARROW_RETURN_NOT_OK(codes.Reserve(sided.changed));
    } else {
      ARROW_RETURN_NOT_OK(kinds.Reserve(sided.changed));
      ARROW_RETURN_NOT_OK(kinds.ReserveData(sided.changed * static_cast<int64_t>(sizeof("UPDATE_BEFORE") - 1)));
    }
    int64_t changed = 0;  // changed rows seen so far: the index into `decisions`
    for (int64_t i = 0; i < batch.num_rows(); ++i) {
      const auto at = static_cast<size_t>(i);
      const uint8_t side = sided.side[at];
      if (side == kNone) continue;
      bool skip = false;
      ChangeKind kind = side == kDelete ? ChangeKind::kDelete : ChangeKind::kInsert;
      if (decisions) {
        switch (decisions[changed]) {
          case kCarriedOver: skip = true; break;
          case kEmitDelete: kind = ChangeKind::kDelete; break;
          case kEmitUpdateBefore: kind = ChangeKind::kUpdateBefore; break;
          case kEmitUpdateAfter: kind = ChangeKind::kUpdateAfter; break;
          default: kind = ChangeKind::kInsert; break;
        }
      }
      ++changed;
      if (skip) {
        ++stats.carried_over;
        continue;
      }
      switch (kind) {
        case ChangeKind::kInsert: ++stats.inserts; break;
        case ChangeKind::kDelete: ++stats.deletes; break;
        default: ++stats.updates; break;
      }
      indices.UnsafeAppend(i);
      if (kind_codes) {
        codes.UnsafeAppend(static_cast<int8_t>(kind));
      } else {
        ARROW_RETURN_NOT_OK(kinds.Append(change::ChangeKindName(kind)));
      }
    }
    if (indices.length() == 0) return nullptr;
    const int64_t rows = indices.length();
    ARROW_ASSIGN_OR_RAISE(auto index_array, indices.Finish());
    std::shared_ptr<arrow::Array> kind_array;
    if (kind_codes) {
      ARROW_ASSIGN_OR_RAISE(auto code_array, codes.Finish());
      kind_array = std::make_shared<arrow::DictionaryArray>(arrow::dictionary(arrow::int8(), arrow::utf8()), code_array,
                                                            shared_->change_type_names);
    } else {
      ARROW_ASSIGN_OR_RAISE(kind_array, kinds.Finish());
    }
    const bool all = rows == batch.num_rows();
    arrow::ArrayVector columns;
    const auto& out_schema = *shared_->output_schema;
    for (int c : shared_->output_columns) {
      std::shared_ptr<arrow::Array> column = batch.column(c);
      if (!all) {
        ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(column, index_array));
        column = taken.make_array();
      }
      const auto& type = out_schema.field(static_cast<int>(columns.size()))->type();
      if (!column->type()->Equals(*type)) column = arrow::MakeArray(iceberg::RetypeArrayData(column->data(), type));
      columns.push_back(std::move(column));
    }
    for (const auto& constant : constants_) {
      if (!constant) {  // _change_type
        columns.push_back(kind_array);
        continue;
      }
      ARROW_ASSIGN_OR_RAISE(auto array, constant->Get(rows));
      columns.push_back(std::move(array));
    }
    return arrow::RecordBatch::Make(shared_->emitted_schema, rows, std::move(columns));
  }

  // The metadata columns but _change_type hold one value for the whole snapshot: each is made once
  // and sliced for every batch (common/constant_column.h). One per metadata column, in order; null
  // for _change_type, which Emit makes per batch.
  static std::vector<std::unique_ptr<ConstantColumn>> SnapshotConstants(const ChangelogSource::Shared& shared,
                                                                         const PendingSnapshot& pending) {
    const auto& snapshot = *pending.snapshot;
    std::vector<std::unique_ptr<ConstantColumn>> out;
    for (const std::string& name : shared.metadata_columns) {
      std::shared_ptr<arrow::Scalar> value;
      if (name == kChangeTypeColumn) {
        out.push_back(nullptr);
        continue;
      } else if (name == kChangeOrdinalColumn) {
        value = std::make_shared<arrow::Int32Scalar>(pending.ordinal);
      } else if (name == kCommitSnapshotIdColumn) {
        value = std::make_shared<arrow::Int64Scalar>(snapshot.snapshot_id);
      } else if (name == kCommitSequenceColumn) {
        value = std::make_shared<arrow::Int64Scalar>(snapshot.sequence_number);
      } else {
        value = std::make_shared<arrow::TimestampScalar>(snapshot.timestamp_ms * 1000,
                                                         shared.output_schema->GetFieldByName(name)->type());
      }
      out.push_back(std::make_unique<ConstantColumn>(std::move(value), shared.batch_rows));
    }
    return out;
  }

  std::shared_ptr<ChangelogSource::Shared> shared_;
  PendingSnapshot pending_;
  std::shared_ptr<const PlanMap> before_plan_, after_plan_;  // keep the tasks changes_ points at alive
  std::vector<FileChange> changes_;
  bool netting_;
  std::shared_ptr<const iceberg::ScanContext> context_;  // the snapshot's: one delete loader for all its files
  ChangeHasher hasher_;
  // The snapshot's constant metadata columns (SnapshotConstants); read by Emit on the executor.
  const std::vector<std::unique_ptr<ConstantColumn>> constants_;
  // Pass one's decision for every changed row of the snapshot, in order (empty: no netting).
  std::vector<uint8_t> decisions_;
  int64_t changed_rows_ = 0;  // changed rows kept by pass one so far
  int64_t next_ordinal_ = 0;  // pass two reading the files again: ordinal of its next changed row
  bool counted_ = false, finished_ = false;
  bool reread_ = false;  // pass one read the files: a pass reading them again counts and keeps nothing
  // Pass one's changed rows (their hashes and sides; their rows while they fit the budget).
  std::vector<SidedBatch> cache_;
  std::unique_ptr<OrderedStream<Emitted>> emitted_;  // pass two from cache_
  int64_t cache_bytes_ = 0;
  bool cache_overflow_ = false, cache_complete_ = false;
  size_t next_cached_ = 0;
  size_t next_change_ = 0;
  std::unique_ptr<FileCursor> cursor_;
  std::string current_path_;
  SnapshotReadStats stats_;
};

using KnownPositions = ChangelogSource::Shared::KnownPositions;

// The deleted positions of `path` in the state `task` describes. When `known` holds the positions of
// the same deletion vector and a subset of the task's position delete files, only the delete files
// added since are loaded (position deletes only add positions); otherwise all of them.
Result<KnownPositions> PositionsOf(iceberg::DeleteLoader& loader, const std::string& path, const FileScanTask& task,
                                   const KnownPositions* known) {
  KnownPositions out;
  out.deletion_vector = DeleteKey(task.deletion_vector);
  out.position_deletes = PathsOf(task.position_deletes);
  if (known && known->deletion_vector == out.deletion_vector &&
      std::includes(out.position_deletes.begin(), out.position_deletes.end(), known->position_deletes.begin(),
                    known->position_deletes.end())) {
    std::vector<DataFilePtr> added;
    for (const auto& f : task.position_deletes) {
      if (!known->position_deletes.count(DeleteKey(f))) added.push_back(f);
    }
    out.positions = known->positions;
    if (!added.empty()) {
      ARROW_ASSIGN_OR_RAISE(auto more, loader.DeletedPositions(path, nullptr, added));
      out.positions.Or(more);
    }
    return out;
  }
  ARROW_ASSIGN_OR_RAISE(out.positions, loader.DeletedPositions(path, task.deletion_vector, task.position_deletes));
  return out;
}

// Whether a file live in both states can gain live rows (its deletes shrank): only then can it add
// INSERTs to the snapshot.
bool MayInsert(const FileChange& c) {
  if (!c.same_equality_deletes) return true;
  puffin::PositionBitmap back = *c.before_positions;
  back.AndNot(*c.after_positions);
  return !back.IsEmpty();
}

}  // namespace

Result<std::shared_ptr<arrow::RecordBatchReader>> ReadSnapshotChanges(std::shared_ptr<ChangelogSource::Shared> shared,
                                                                      const PendingSnapshot& pending) {
  const auto& snapshot = pending.snapshot;
  const auto& m = *shared->table->metadata();
  iceberg::SnapshotPtr parent;
  if (snapshot->parent_snapshot_id) {
    parent = m.SnapshotById(*snapshot->parent_snapshot_id);
    if (!parent) {
      return InvalidArgument("table {}: snapshot {} has expired parent {}; its changes cannot be computed",
                             shared->table->name(), snapshot->snapshot_id, *snapshot->parent_snapshot_id);
    }
  }
  std::vector<FileChange> changes;
  std::shared_ptr<const PlanMap> before, after;
  if (snapshot->operation() != "replace") {
    ARROW_ASSIGN_OR_RAISE(before, shared->PlanOf(parent));
    ARROW_ASSIGN_OR_RAISE(after, shared->PlanOf(snapshot));
    std::shared_ptr<const iceberg::ScanContext> context;
    if (shared->range_metadata == shared->table->metadata()) context = shared->range_context;
    if (!context) {
      LS_ASSIGN_OR_RAISE_CTX(context, iceberg::ScanContext::Make(shared->table->io(), m, shared->schema),
                             "reading {}", shared->table->name());
    }
    auto& loader = *context->deletes;
    std::vector<FileChange> removed, changed, added;
    // What this snapshot leaves for the next one: the positions of every file it loads, and those
    // still valid from before for the files it does not.
    std::map<std::string, KnownPositions> known = std::move(shared->known_positions);
    shared->known_positions.clear();
    std::map<std::string, KnownPositions> next_known;
    for (const auto& [path, task] : *after) {
      auto it = before->find(path);
      if (it == before->end()) {
        added.push_back(FileChange::Of(task.file, nullptr, &task));
        continue;
      }
      auto was_known = known.find(path);
      if (SameDeleteFiles(it->second, task)) {
        if (was_known != known.end()) next_known.insert(known.extract(was_known));
        continue;
      }
      FileChange c = FileChange::Of(task.file, &it->second, &task);
      LS_ASSIGN_OR_RAISE_CTX(auto before_known,
                             PositionsOf(loader, path, it->second, was_known == known.end() ? nullptr : &was_known->second),
                             "loading the deletes of {} in snapshot {}", path, parent->snapshot_id);
      LS_ASSIGN_OR_RAISE_CTX(auto after_known, PositionsOf(loader, path, task, &before_known),
                             "loading the deletes of {} in snapshot {}", path, snapshot->snapshot_id);
      c.before_positions = std::move(before_known.positions);
      c.after_positions = after_known.positions;
      next_known.emplace(path, std::move(after_known));
      c.same_equality_deletes = PathsOf(it->second.equality_deletes) == PathsOf(task.equality_deletes);
      // A new position delete file of the partition that does not touch this file changes nothing.
      if (c.same_equality_deletes && *c.before_positions == *c.after_positions) continue;
      changed.push_back(std::move(c));
    }
    for (const auto& [path, task] : *before) {
      if (!after->count(path)) removed.push_back(FileChange::Of(task.file, &task, nullptr));
    }
    shared->known_positions = std::move(next_known);
    const bool deletes = !removed.empty() || !changed.empty();
    const bool inserts = !added.empty() || std::any_of(changed.begin(), changed.end(), MayInsert);
    const bool netting = deletes && inserts;
    for (auto* group : {&removed, &changed, &added}) {
      for (auto& c : *group) changes.push_back(std::move(c));
    }
    return std::make_shared<SnapshotChangeReader>(shared, pending, before, after, std::move(changes), netting,
                                                  std::move(context));
  }
  return std::make_shared<SnapshotChangeReader>(shared, pending, before, after, std::move(changes), false, nullptr);
}

}  // namespace lakesync::changelog
