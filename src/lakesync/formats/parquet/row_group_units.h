// Parquet files read as units of one row group on the engine's executor (common/executor.h), the
// results handed back in file and row-group order. The three readers that split files this way share
// it: Iceberg scan tasks (iceberg/scan/task_units.h), Delta data and change files
// (delta/file_reader.cc) and input change files (formats/tabular/readers.cc). Each supplies only what
// differs (RowGroupUnits::Hooks): how a file is planned (its footer read, its own state such as
// deletes or partition values), how one row group is opened, and what a unit makes of its reader.
//
// What is common, and lives here:
// - choosing the units: a file with several row groups to read is split into one unit per row group;
//   a file with at most one, or any file of an unsplit read, is one unit read by the reader planning
//   opened (so its footer is read once);
// - the order: files are planned one at a time on the consumer's thread when their turn comes (a
//   missing or damaged file fails in its place), units run on the pool with at most `window` in
//   flight, and results come back in the order the units were made (OrderedStream);
// - for unsplit reads, the stream of batches decoded on the consumer's thread and finished on the
//   pool, in order (StreamBatches);
// - the read-ahead bound for a memory budget (ReadAheadWindow), which depends on the file only;
// - errors: a row-group unit's error names the row group and the file.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lakesync/common/column_threads.h"
#include "lakesync/common/executor.h"
#include "lakesync/common/status.h"

namespace parquet {
class FileMetaData;
}

namespace lakesync::parquet_io {

// How many row groups of a file to read ahead side by side within `budget_bytes` of decoded data
// (uncompressed sizes from the footer, each counted as the largest): at most the executor's default
// window. 0 when the file should stream instead — one row group, or fewer than two that fit. Whether
// it is 0 depends on the file alone, never on the thread count, so a caller that streams or splits
// by it gives the same batches whatever the thread count.
int ReadAheadWindow(const parquet::FileMetaData& metadata, int64_t budget_bytes);

// One file, planned: the caller's state of it (shared by its units, read-only from now on), a reader
// over the whole file (what it selects), kept for an unsplit unit, and the row groups it reads.
template <typename File, typename Reader>
struct PlannedFile {
  std::shared_ptr<const File> file;
  std::unique_ptr<Reader> reader;
  std::vector<int> row_groups;  // in file order
};

// Reads `files` files through `Hooks`, in order. File: the caller's state of one file, shared by its
// units (read-only once planned). Reader: the caller's reader of a file or of one row group; it has
// set_use_threads(bool). T: what a unit makes of its reader.
template <typename File, typename Reader, typename T>
class RowGroupUnits {
 public:
  using Planned = PlannedFile<File, Reader>;
  struct Hooks {
    // On the consumer's thread, in file order: reads file `index`'s footer. nullopt: nothing to read.
    std::function<Result<std::optional<Planned>>(size_t index)> plan;
    // On any thread: a reader of `row_group` alone, decoding on the calling thread.
    std::function<Result<std::unique_ptr<Reader>>(const File& file, int row_group)> open_row_group;
    // On any thread: the unit's result, draining `reader` (row_group -1: the whole file).
    std::function<Result<T>(const File& file, int row_group, Reader& reader)> read;
    // The file in errors ("data file s3://b/t/data/x.parquet").
    std::function<std::string(const File& file)> describe;
  };

  RowGroupUnits(size_t files, Hooks hooks) : files_(files), hooks_(std::move(hooks)) {}
  RowGroupUnits(const RowGroupUnits&) = delete;
  RowGroupUnits& operator=(const RowGroupUnits&) = delete;

  // The row groups of the first file that has something to read (planning it now), 0 when none:
  // what a caller looks at before choosing how to Start.
  Result<size_t> RowGroupsOfFirstFile() {
    ARROW_RETURN_NOT_OK(PlanUntilFound());
    return planned_ ? planned_->row_groups.size() : 0;
  }

  // Starts the read. `split`: files of several row groups become one unit per row group, run on the
  // pool with at most `window` in flight (<= 0: the executor's default). Otherwise each file is one
  // unit, run in turn on the consumer's thread (Next) or handed to it (NextFile), its columns decoded
  // in parallel where `column_threads` (and ColumnThreads allows).
  void Start(bool split, bool column_threads, int window = 0) {
    split_ = split;
    column_threads_ = column_threads;
    stream_ = std::make_unique<OrderedStream<T>>(
        [this]() -> Result<std::optional<typename OrderedStream<T>::Unit>> {
          ARROW_ASSIGN_OR_RAISE(auto unit, NextUnit());
          if (!unit) return std::nullopt;
          auto shared = std::make_shared<Unit>(std::move(*unit));
          return std::optional<typename OrderedStream<T>::Unit>([this, shared]() { return Run(*shared); });
        },
        split ? window : 1);
  }

  bool split() const { return split_; }

  // The next unit's result, nullopt after the last. The first error ends the read.
  Result<std::optional<T>> Next() { return stream_->Next(); }

  // Unsplit reads that stream: the next file and its reader, ready to read on this thread (null
  // reader after the last file).
  struct OpenedFile {
    std::shared_ptr<const File> file;
    std::unique_ptr<Reader> reader;
  };
  Result<OpenedFile> NextFile() {
    ARROW_ASSIGN_OR_RAISE(auto unit, NextUnit());
    if (!unit) return OpenedFile{};
    ARROW_ASSIGN_OR_RAISE(auto reader, Open(*unit));
    return OpenedFile{std::move(unit->file), std::move(reader)};
  }

  // Unsplit reads, streamed: the batches of file after file (NextFile). `decode` reads a file's next
  // batch on the consumer's thread (its columns decoded in parallel where ColumnThreads allows) and
  // returns the unit that finishes it (nullopt at the file's end); the units run on the pool while
  // the next batch decodes, so the finishing work neither waits for the decoding nor holds it up, and
  // their results come back in order (OrderedStream), at most kBatchesAhead decoded batches waiting.
  // A unit must own what it uses: its file's reader may be gone when it runs. Errors of planning or
  // opening a file get `file_context` (when not empty). The stream must not outlive these units.
  static constexpr int kBatchesAhead = 2;
  template <typename B>
  using BatchUnit = typename OrderedStream<B>::Unit;
  template <typename B>
  using DecodeBatch =
      std::function<Result<std::optional<BatchUnit<B>>>(const std::shared_ptr<const File>& file, Reader& reader)>;
  template <typename B>
  std::unique_ptr<OrderedStream<B>> StreamBatches(DecodeBatch<B> decode, std::string file_context = {}) {
    auto current = std::make_shared<OpenedFile>();
    return std::make_unique<OrderedStream<B>>(
        [this, current, decode = std::move(decode),
         file_context = std::move(file_context)]() -> Result<std::optional<BatchUnit<B>>> {
          while (true) {
            if (!current->reader) {
              auto next = NextFile();
              if (!next.ok()) return file_context.empty() ? next.status() : WithContext(next.status(), file_context);
              if (!next->reader) return std::nullopt;
              *current = std::move(*next);
            }
            ARROW_ASSIGN_OR_RAISE(auto unit, decode(current->file, *current->reader));
            if (unit) return unit;
            *current = {};
          }
        },
        kBatchesAhead);
  }

 private:
  struct Unit {
    std::shared_ptr<const File> file;
    int row_group = -1;              // -1: the whole file, through `opened`
    std::unique_ptr<Reader> opened;
  };

  // Plans files until one has something to read or none are left.
  Status PlanUntilFound() {
    while (!planned_ && next_file_ < files_) {
      ARROW_ASSIGN_OR_RAISE(planned_, hooks_.plan(next_file_++));
    }
    return Status::OK();
  }

  Result<std::optional<Unit>> NextUnit() {
    while (units_.empty()) {
      ARROW_RETURN_NOT_OK(PlanUntilFound());
      if (!planned_) return std::nullopt;
      Planned file = std::move(*planned_);
      planned_.reset();
      if (!split_ || file.row_groups.size() <= 1) {
        units_.push_back(Unit{std::move(file.file), -1, std::move(file.reader)});
        continue;
      }
      // Each unit opens a reader of its own; the planning reader (the footer) is not needed.
      for (int group : file.row_groups) units_.push_back(Unit{file.file, group, nullptr});
    }
    Unit unit = std::move(units_.front());
    units_.pop_front();
    return std::optional<Unit>(std::move(unit));
  }

  Result<std::unique_ptr<Reader>> Open(Unit& unit) const {
    std::unique_ptr<Reader> reader = std::move(unit.opened);
    if (!reader) {
      LS_ASSIGN_OR_RAISE_CTX(reader, hooks_.open_row_group(*unit.file, unit.row_group), "reading row group {} of {}",
                             unit.row_group, hooks_.describe(*unit.file));
    }
    reader->set_use_threads(ColumnThreads(column_threads_));
    return reader;
  }

  Result<T> Run(Unit& unit) const {
    ARROW_ASSIGN_OR_RAISE(auto reader, Open(unit));
    Result<T> result = hooks_.read(*unit.file, unit.row_group, *reader);
    if (!result.ok() && unit.row_group >= 0) {
      return WithContext(result.status(),
                         fmt::format("reading row group {} of {}", unit.row_group, hooks_.describe(*unit.file)));
    }
    return result;
  }

  size_t files_;
  Hooks hooks_;
  size_t next_file_ = 0;
  std::optional<Planned> planned_;  // planned, not yet made into units
  std::deque<Unit> units_;              // made, not yet handed out
  bool split_ = true;
  bool column_threads_ = false;
  std::unique_ptr<OrderedStream<T>> stream_;  // last: destroyed (waiting for its units) first
};

}  // namespace lakesync::parquet_io
