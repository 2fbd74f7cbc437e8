#include "lakesync/iceberg/scan/task_units.h"

#include <algorithm>

#include "lakesync/formats/parquet/parquet_data_reader.h"

namespace lakesync::iceberg {

Status TaskUnitPlanner::PlanNextTask() {
  const size_t index = next_task_++;
  const FileScanTask& task = (*tasks_)[index];
  DataFileReadOptions options = options_;
  // The task's deletes, loaded once and shared by its units.
  if (options.delete_states.empty()) {
    LS_ASSIGN_OR_RAISE_CTX(auto own, DeleteFilter::Make(*context_->deletes, task), "reading data file {}",
                           task.file->file_path);
    options.delete_states.push_back(std::move(own));
  }
  // Opening reads the footer: which row groups there are (after any selection in the options).
  LS_ASSIGN_OR_RAISE_CTX(auto reader, DataFileReader::Open(context_, task, options), "reading data file {}",
                         task.file->file_path);
  std::vector<int> groups = reader->file_reader().selected_row_groups();
  if (groups.size() <= 1 || !split_) {
    TaskUnit unit;
    unit.task_index = index;
    unit.opened = std::move(reader);
    unit.options = std::move(options);
    planned_.push_back(std::move(unit));
    return Status::OK();
  }
  for (auto it = groups.rbegin(); it != groups.rend(); ++it) {
    TaskUnit unit;
    unit.task_index = index;
    unit.row_group = *it;
    unit.options = options;
    unit.options.row_groups = std::vector<int>{*it};
    planned_.push_back(std::move(unit));
  }
  return Status::OK();
}

Result<size_t> TaskUnitPlanner::PeekUnitsOfNextTask() {
  if (planned_.empty()) {
    if (next_task_ >= tasks_->size()) return 0;
    ARROW_RETURN_NOT_OK(PlanNextTask());
  }
  const size_t task = planned_.back().task_index;
  return static_cast<size_t>(std::count_if(planned_.begin(), planned_.end(),
                                           [&](const TaskUnit& u) { return u.task_index == task; }));
}

Result<std::optional<TaskUnit>> TaskUnitPlanner::Next() {
  while (planned_.empty()) {
    if (next_task_ >= tasks_->size()) return std::nullopt;
    ARROW_RETURN_NOT_OK(PlanNextTask());
  }
  TaskUnit unit = std::move(planned_.back());
  planned_.pop_back();
  // Planning decided use_threads after the first task may have been planned: apply the current one.
  unit.options.use_threads = options_.use_threads;
  return std::optional<TaskUnit>(std::move(unit));
}

Result<std::unique_ptr<DataFileReader>> TaskUnitPlanner::Open(TaskUnit& unit) const {
  if (unit.opened) {
    unit.opened->set_use_threads(unit.options.use_threads);
    return std::move(unit.opened);
  }
  const FileScanTask& task = (*tasks_)[unit.task_index];
  LS_ASSIGN_OR_RAISE_CTX(auto reader, DataFileReader::Open(context_, task, unit.options),
                         "reading row group {} of data file {}", unit.row_group, task.file->file_path);
  return reader;
}

}  // namespace lakesync::iceberg
