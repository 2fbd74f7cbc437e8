// Rows read for one snapshot of a changelog range that a later snapshot of the same range deletes,
// kept so that the later snapshot need not read the data file again.
//
// Why: a merge-on-read table's data file is live across many snapshots, and every snapshot that adds
// a deletion vector (or position deletes) to it must emit the deleted rows' values, which only the
// data file holds. Read snapshot by snapshot, a file of the first commit is decoded again by each of
// the range's later snapshots that delete from it: on ten commits of 1M changes that was 41M rows
// decoded for 10M changes (docs/benchmarks.md, "Stop 36"). Data files are immutable, so a row's
// values read once serve every later snapshot of the range.
//
// How: before a range of several snapshots is read, the deleted positions of every data file at the
// range's last snapshot are loaded (SetRangeEnd). Reading a file for a snapshot, the rows live after
// that snapshot whose positions are deleted at the range's end are copied (Capture) and kept by file
// (Commit). A later snapshot whose only change to the file is newly deleted positions, all of them
// kept, with the same equality delete files as when they were kept, takes those rows from here
// (Find) instead of reading the file; anything else (rows coming back, equality deletes changed, a
// position not kept because it was filtered out or past the budget) reads the file as before. The
// rows a snapshot took are released once it is read to its end (ReleaseTaken; their memory goes with
// their chunk's, Chunk). Results are the same with or without this: kept rows are the file's rows at
// the same positions, in position order.
//
// Memory: at most `budget_bytes` of kept rows, taken ones still held included
// (ChangelogOptions::look_ahead_budget_bytes), plus the
// rows of the files being read while they are captured; a file whose rows would pass it is not kept
// (it is read again when needed). Thread-safe.
#pragma once

#include <arrow/type_fwd.h>

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/formats/puffin/positions_bitmap.h"

namespace lakesync::changelog {

class RowsAhead {
 public:
  using PositionsByFile = std::map<std::string, puffin::PositionBitmap>;

  // Rows kept from one batch of a data file, in position order. Taken rows stay in it until none is
  // left (then it is dropped) or a capture needs their room in the budget (then the chunks are copied
  // down to their rows not taken). Copying what was left after every snapshot copied a row once per
  // snapshot it waited for, serially on the thread that finishes each snapshot: 0.45 s (5% of the CPU)
  // of ten snapshots of 1M changes, now 13 ms (docs/benchmarks.md, "Stop 40").
  struct Chunk {
    std::shared_ptr<arrow::RecordBatch> rows;
    std::shared_ptr<const std::vector<int64_t>> positions;  // the file position of each row
  };

  // One data file's kept rows, in position order.
  struct Kept {
    std::set<std::string> equality_deletes;  // the file's equality delete files when its rows were kept
    std::vector<Chunk> chunks;
    puffin::PositionBitmap kept;  // every position held and not taken
    int64_t bytes = 0;            // of every row held, taken ones included

    // The rows of chunk `i` whose positions are in `which`, in order (null when none is). `which` holds
    // no taken position (Find hands these rows out only for positions still kept).
    Result<std::shared_ptr<arrow::RecordBatch>> RowsOf(size_t i, const puffin::PositionBitmap& which) const;
  };

  // Rows being kept while one file is read (one reader's, not shared: it may run on any thread).
  class Capture {
   public:
    // The positions that will be deleted by the range's end, in [begin, end).
    std::vector<int64_t> AheadIn(int64_t begin, int64_t end) const { return ahead_->ToVector(begin, end); }
    // Keeps the rows of `batch` at `rows` (indices), whose file positions are `positions`. A file
    // whose kept rows alone pass the budget is not kept.
    Status Add(const std::shared_ptr<arrow::RecordBatch>& batch, const std::vector<int64_t>& rows,
               std::vector<int64_t> positions);

   private:
    friend class RowsAhead;
    std::string path_;
    std::shared_ptr<const PositionsByFile> range_end_;  // keeps ahead_ alive
    const puffin::PositionBitmap* ahead_ = nullptr;
    int64_t budget_bytes_ = 0;
    Kept kept_;
    bool abandoned_ = false;
  };

  explicit RowsAhead(int64_t budget_bytes = 0) : budget_bytes_(budget_bytes) {}
  void set_budget_bytes(int64_t bytes) { budget_bytes_ = bytes; }
  int64_t budget_bytes() const { return budget_bytes_; }

  // The deleted positions of each data file at the last snapshot of the range about to be read (null:
  // nothing is kept). Drops the rows kept for the range before: what it did not take was kept for
  // positions it deleted otherwise (a file read again), and would only hold the budget.
  void SetRangeEnd(std::shared_ptr<const PositionsByFile> end);

  // A capture for reading `path` (whose equality delete files are `equality_deletes`), or null when
  // none of its positions is deleted by the range's end or nothing may be kept.
  std::unique_ptr<Capture> BeginCapture(const std::string& path, std::set<std::string> equality_deletes);
  // Keeps what a capture read to the end of its file holds, in place of what was kept for the file,
  // when it fits the budget. Called in file order on the reading thread, so that what is kept (and
  // so which files later snapshots read) does not depend on the thread count.
  void Commit(std::unique_ptr<Capture> capture);

  // The kept rows of `path` when they hold every position of `deleted` and were kept with the same
  // equality delete files; null otherwise. The caller marks what it took (Take).
  std::shared_ptr<const Kept> Find(const std::string& path, const std::set<std::string>& equality_deletes,
                                   const puffin::PositionBitmap& deleted) const;
  void Take(const std::string& path, const puffin::PositionBitmap& deleted);
  // Releases the rows taken since the last call (a snapshot read to its end: they are in its output,
  // and a position once deleted is only deleted again after coming back, which reads the file); their
  // memory goes with their chunk's (Chunk).
  Status ReleaseTaken();

  int64_t kept_bytes() const;

 private:
  // Puts `with` in place of a file's kept rows (erasing the entry when it holds no chunk).
  void Replace(std::map<std::string, std::shared_ptr<const Kept>>::iterator it, std::shared_ptr<Kept> with);
  // Copies every chunk holding taken rows down to its rows not taken (mutex_ held).
  Status CompactLocked();

  int64_t budget_bytes_;
  mutable std::mutex mutex_;
  std::shared_ptr<const PositionsByFile> range_end_;
  std::map<std::string, std::shared_ptr<const Kept>> kept_;
  std::map<std::string, puffin::PositionBitmap> taken_;
  int64_t kept_bytes_ = 0;
};

}  // namespace lakesync::changelog
