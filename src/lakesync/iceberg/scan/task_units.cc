#include "lakesync/iceberg/scan/task_units.h"

#include "lakesync/formats/parquet/parquet_data_reader.h"

namespace lakesync::iceberg {

Result<std::optional<parquet_io::PlannedFile<TaskFile, DataFileReader>>> PlanTask(
    const std::shared_ptr<const ScanContext>& context, const std::vector<FileScanTask>& tasks,
    const DataFileReadOptions& options, size_t index) {
  const FileScanTask& task = tasks[index];
  auto file = std::make_shared<TaskFile>();
  file->task_index = index;
  file->options = options;
  // The task's deletes, loaded once and shared by its units.
  if (file->options.delete_states.empty()) {
    LS_ASSIGN_OR_RAISE_CTX(auto own, DeleteFilter::Make(*context->deletes, task), "reading data file {}",
                           task.file->file_path);
    file->options.delete_states.push_back(std::move(own));
  }
  // Opening reads the footer: which row groups there are (after any selection in the options).
  parquet_io::PlannedFile<TaskFile, DataFileReader> planned;
  LS_ASSIGN_OR_RAISE_CTX(planned.reader, DataFileReader::Open(context, task, file->options), "reading data file {}",
                         task.file->file_path);
  planned.row_groups = planned.reader->file_reader().selected_row_groups();
  planned.file = std::move(file);
  return std::optional<parquet_io::PlannedFile<TaskFile, DataFileReader>>(std::move(planned));
}

Result<std::unique_ptr<DataFileReader>> OpenTaskRowGroup(const std::shared_ptr<const ScanContext>& context,
                                                         const std::vector<FileScanTask>& tasks, const TaskFile& file,
                                                         int row_group) {
  DataFileReadOptions options = file.options;
  options.row_groups = std::vector<int>{row_group};
  return DataFileReader::Open(context, tasks[file.task_index], std::move(options));
}

}  // namespace lakesync::iceberg
