// Reading many file scan tasks on every core, results in task order: each task is split into units of
// one row group (the Parquet reader's batches never span row groups, so a unit's batches are the
// same whichever thread reads it and however the file is split), the units run on the engine's one
// executor (common/executor.h) with a bounded read-ahead, and their results come back in task and
// row-group order. Scans, key resolution and the changelog read through it, so the output of each is
// identical for every thread count.
//
// Per task, the file's footer is read and its deletes loaded once (on the consumer's thread, in
// order); the units share the task's DeleteFilter, the scan's ScanContext shares position delete
// files between tasks, and the planned snapshot's EqualityDeleteIndex its equality-delete key maps
// (built once per scan, on this thread, the first time a task needs them: equality_deletes.h).
//
// Memory: at most `window` units (default 2 × threads) are read ahead, each holding what the caller's
// function keeps of one row group; a scan that keeps the batches holds at most
// (window + 1) × (one row group of the projected columns, decoded) plus the deletion vectors of the
// tasks in flight and the scan's equality-delete key maps, whatever the number of files.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "lakesync/common/executor.h"
#include "lakesync/formats/parquet/row_group_units.h"
#include "lakesync/iceberg/scan/data_file_reader.h"

namespace lakesync::iceberg {

// What the units of one task share: its index and the read options with its deletes.
struct TaskFile {
  size_t task_index = 0;
  DataFileReadOptions options;
};

// The task-specific part of the units of `tasks` (parquet_io::RowGroupUnits does the rest): a task is
// planned by loading its deletes and opening its file (errors carry the file's path), and a row group
// is opened with the task's deletes.
template <typename T>
typename parquet_io::RowGroupUnits<TaskFile, DataFileReader, T>::Hooks TaskUnitHooks(
    std::shared_ptr<const ScanContext> context, std::shared_ptr<const std::vector<FileScanTask>> tasks,
    DataFileReadOptions options, std::function<Result<T>(size_t task_index, DataFileReader& reader)> fn);

// Plans task `index` (see TaskUnitHooks).
Result<std::optional<parquet_io::PlannedFile<TaskFile, DataFileReader>>> PlanTask(const std::shared_ptr<const ScanContext>& context,
                                                        const std::vector<FileScanTask>& tasks,
                                                        const DataFileReadOptions& options, size_t index);
// Opens one row group of a planned task.
Result<std::unique_ptr<DataFileReader>> OpenTaskRowGroup(const std::shared_ptr<const ScanContext>& context,
                                                         const std::vector<FileScanTask>& tasks, const TaskFile& file,
                                                         int row_group);

// Reads `tasks` through `fn` (called on a pool thread with each unit's reader, which it drains as it
// likes) and returns fn's results in order. `options.use_threads` asks for a file's columns to be
// decoded in parallel: it is kept only where units run one at a time (one thread, a single task with
// few row groups and many columns, or a caller that is itself a pool thread: PreferSerialUnits);
// otherwise the units are the parallelism.
template <typename T>
class TaskUnitStream {
 public:
  using UnitFn = std::function<Result<T>(size_t task_index, DataFileReader& reader)>;
  using Units = parquet_io::RowGroupUnits<TaskFile, DataFileReader, T>;

  static Result<std::unique_ptr<TaskUnitStream>> Make(std::shared_ptr<const ScanContext> context,
                                                      std::shared_ptr<const std::vector<FileScanTask>> tasks,
                                                      DataFileReadOptions options, UnitFn fn, int window = 0) {
    std::unique_ptr<TaskUnitStream> s(new TaskUnitStream());
    const bool column_threads = options.use_threads;
    const size_t columns = options.columns.empty() ? context->schema->fields().size() : options.columns.size();
    const size_t files = tasks->size();
    options.use_threads = false;  // the units apply column_threads once the choice below is made
    s->units_ = std::make_unique<Units>(
        files, TaskUnitHooks<T>(std::move(context), std::move(tasks), std::move(options), std::move(fn)));
    size_t first_units = 0;
    if (files == 1) {
      ARROW_ASSIGN_OR_RAISE(first_units, s->units_->RowGroupsOfFirstFile());
    }
    // Serial: one file at a time, read whole as a stream (no row group is held in memory, and the
    // columns are decoded in parallel where asked for).
    const bool serial = PreferSerialUnits(files, first_units, columns);
    s->units_->Start(!serial, serial && column_threads, window);
    return s;
  }

  // fn's result for the next unit, nullopt after the last.
  Result<std::optional<T>> Next() { return units_->Next(); }

  // Whether the units run one at a time, on the caller's thread, one unit per file. A caller that
  // streams (a scan) then reads each file's batches as they come with StreamBatches() instead of Next().
  bool serial() const { return !units_->split(); }
  // Serial streams only: the files' batches, decoded on the caller's thread and finished on the pool
  // (parquet_io::RowGroupUnits::StreamBatches). The stream must not outlive this object.
  template <typename B>
  std::unique_ptr<OrderedStream<B>> StreamBatches(typename Units::template DecodeBatch<B> decode,
                                                  std::string file_context = {}) {
    return units_->template StreamBatches<B>(std::move(decode), std::move(file_context));
  }

 private:
  TaskUnitStream() = default;
  std::unique_ptr<Units> units_;
};

template <typename T>
typename parquet_io::RowGroupUnits<TaskFile, DataFileReader, T>::Hooks TaskUnitHooks(
    std::shared_ptr<const ScanContext> context, std::shared_ptr<const std::vector<FileScanTask>> tasks,
    DataFileReadOptions options, std::function<Result<T>(size_t task_index, DataFileReader& reader)> fn) {
  using Units = parquet_io::RowGroupUnits<TaskFile, DataFileReader, T>;
  typename Units::Hooks hooks;
  hooks.plan = [context, tasks, options](size_t index) { return PlanTask(context, *tasks, options, index); };
  hooks.open_row_group = [context, tasks](const TaskFile& file, int row_group) {
    return OpenTaskRowGroup(context, *tasks, file, row_group);
  };
  hooks.read = [fn = std::move(fn)](const TaskFile& file, int, DataFileReader& reader) {
    return fn(file.task_index, reader);
  };
  hooks.describe = [tasks](const TaskFile& file) {
    return "data file " + (*tasks)[file.task_index].file->file_path;
  };
  return hooks;
}

}  // namespace lakesync::iceberg
