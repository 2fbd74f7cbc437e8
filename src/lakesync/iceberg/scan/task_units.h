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
#include "lakesync/iceberg/scan/data_file_reader.h"

namespace lakesync::iceberg {

// One unit: a row group (or the whole file, when it has at most one) of one task, ready to open.
struct TaskUnit {
  size_t task_index = 0;
  int row_group = -1;                         // -1: every row group of the file
  std::unique_ptr<DataFileReader> opened;     // set when planning already opened the right reader
  DataFileReadOptions options;                // with the task's deletes and the unit's row group
};

// Makes the units of `tasks` in order. Errors carry the file's path.
class TaskUnitPlanner {
 public:
  TaskUnitPlanner(std::shared_ptr<const ScanContext> context, std::shared_ptr<const std::vector<FileScanTask>> tasks,
                  DataFileReadOptions options)
      : context_(std::move(context)), tasks_(std::move(tasks)), options_(std::move(options)) {}

  // The next unit, nullopt after the last.
  Result<std::optional<TaskUnit>> Next();
  // The rows groups of the next task (planning it if needed); 0 when there are no more tasks.
  Result<size_t> PeekUnitsOfNextTask();

  // Opens the unit's reader (on the worker's thread).
  Result<std::unique_ptr<DataFileReader>> Open(TaskUnit& unit) const;

  const std::vector<FileScanTask>& tasks() const { return *tasks_; }
  const ScanContext& context() const { return *context_; }
  void set_use_threads(bool use_threads) { options_.use_threads = use_threads; }
  // Whether tasks are split into one unit per row group (default) or read whole, in one unit.
  void set_split_row_groups(bool split) { split_ = split; }
  // Plans again from the first task (after a change of the settings above).
  void Reset() {
    next_task_ = 0;
    planned_.clear();
  }

 private:
  Status PlanNextTask();

  std::shared_ptr<const ScanContext> context_;
  std::shared_ptr<const std::vector<FileScanTask>> tasks_;
  DataFileReadOptions options_;
  size_t next_task_ = 0;
  bool split_ = true;
  std::vector<TaskUnit> planned_;  // units of the planned task not handed out yet, in reverse order
};

// Reads `tasks` through `fn` (called on a pool thread with each unit's reader, which it drains as it
// likes) and returns fn's results in order. `options.use_threads` asks for a file's columns to be
// decoded in parallel: it is kept only where units run one at a time (one thread, a single task with
// few row groups and many columns, or a caller that is itself a pool thread); otherwise the units are the parallelism
// (a unit that waited on the pool from inside it could deadlock it).
template <typename T>
class TaskUnitStream {
 public:
  using UnitFn = std::function<Result<T>(size_t task_index, DataFileReader& reader)>;

  static Result<std::unique_ptr<TaskUnitStream>> Make(std::shared_ptr<const ScanContext> context,
                                                      std::shared_ptr<const std::vector<FileScanTask>> tasks,
                                                      DataFileReadOptions options, UnitFn fn, int window = 0) {
    std::unique_ptr<TaskUnitStream> s(new TaskUnitStream());
    s->fn_ = std::move(fn);
    const bool column_threads = options.use_threads;
    const size_t columns = options.columns.empty() ? context->schema->fields().size() : options.columns.size();
    s->planner_ = std::make_unique<TaskUnitPlanner>(std::move(context), tasks, std::move(options));
    size_t first_units = 0;
    if (tasks->size() == 1) {
      ARROW_ASSIGN_OR_RAISE(first_units, s->planner_->PeekUnitsOfNextTask());
    }
    const bool serial = PreferSerialUnits(tasks->size(), first_units, columns);
    s->serial_ = serial;
    s->planner_->set_use_threads(serial && column_threads);
    if (serial) {
      // One at a time: each file is read whole, as a stream (no row group is held in memory, and the
      // columns are decoded in parallel where asked for).
      s->planner_->set_split_row_groups(false);
      if (first_units > 1) s->planner_->Reset();
    }
    TaskUnitStream* self = s.get();
    s->stream_ = std::make_unique<OrderedStream<T>>(
        [self]() -> Result<std::optional<typename OrderedStream<T>::Unit>> {
          ARROW_ASSIGN_OR_RAISE(auto unit, self->planner_->Next());
          if (!unit) return std::nullopt;
          auto shared = std::make_shared<TaskUnit>(std::move(*unit));
          return std::optional<typename OrderedStream<T>::Unit>([self, shared]() -> Result<T> {
            ARROW_ASSIGN_OR_RAISE(auto reader, self->planner_->Open(*shared));
            return self->fn_(shared->task_index, *reader);
          });
        },
        serial ? 1 : window);
    return s;
  }

  // fn's result for the next unit, nullopt after the last.
  Result<std::optional<T>> Next() { return stream_->Next(); }

  // Whether the units run one at a time, on the caller's thread, one unit per file. A caller that
  // streams (a scan) then reads each file's batches as they come with NextReader() instead of Next().
  bool serial() const { return serial_; }
  // The next file's reader (serial streams only), null after the last.
  Result<std::unique_ptr<DataFileReader>> NextReader() {
    ARROW_ASSIGN_OR_RAISE(auto unit, planner_->Next());
    if (!unit) return nullptr;
    return planner_->Open(*unit);
  }

 private:
  TaskUnitStream() = default;
  bool serial_ = true;
  UnitFn fn_;
  std::unique_ptr<TaskUnitPlanner> planner_;
  std::unique_ptr<OrderedStream<T>> stream_;  // declared last: destroyed (waiting for its units) first
};

}  // namespace lakesync::iceberg
