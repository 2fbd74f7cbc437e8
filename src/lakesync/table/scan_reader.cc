// Reading planned scan tasks in order, one iceberg::DataFileReader per task (deletes applied, the
// filter evaluated, columns projected by the spec's rules), with --limit on top.
#include <arrow/record_batch.h>

#include "lakesync/iceberg/scan/data_file_reader.h"
#include "lakesync/table/scan.h"
#include "lakesync/table/scan_internal.h"

namespace lakesync::table {
namespace {

class ScanReader : public arrow::RecordBatchReader {
 public:
  ScanReader(std::shared_ptr<Table> table, std::shared_ptr<const iceberg::ScanContext> context,
             iceberg::DataFileReadOptions read_options, std::optional<int64_t> limit, std::vector<FileScanTask> tasks,
             std::shared_ptr<arrow::Schema> output_schema)
      : table_(std::move(table)), context_(std::move(context)), read_options_(std::move(read_options)),
        tasks_(std::move(tasks)), output_schema_(std::move(output_schema)) {
    if (limit) remaining_ = *limit;
  }

  std::shared_ptr<arrow::Schema> schema() const override { return output_schema_; }

  Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    *out = nullptr;
    while (remaining_ != 0) {
      if (!reader_) {
        if (next_task_ >= tasks_.size()) return Status::OK();
        const FileScanTask& task = tasks_[next_task_++];
        LS_ASSIGN_OR_RAISE_CTX(reader_, iceberg::DataFileReader::Open(context_, task, read_options_),
                               "reading data file {} of {}", task.file->file_path, table_->name());
      }
      auto next = reader_->Next();
      if (!next.ok()) return WithContext(next.status(), "reading data file " + reader_->path() + " of " + table_->name());
      if (!next->has_value()) {
        reader_.reset();
        continue;
      }
      std::shared_ptr<arrow::RecordBatch> batch = std::move((*next)->batch);
      if (batch->num_rows() == 0) continue;
      if (remaining_ > 0 && batch->num_rows() > remaining_) batch = batch->Slice(0, remaining_);
      if (remaining_ > 0) remaining_ -= batch->num_rows();
      *out = std::move(batch);
      return Status::OK();
    }
    return Status::OK();
  }

 private:
  std::shared_ptr<Table> table_;
  std::shared_ptr<const iceberg::ScanContext> context_;
  iceberg::DataFileReadOptions read_options_;
  std::vector<FileScanTask> tasks_;
  std::shared_ptr<arrow::Schema> output_schema_;
  size_t next_task_ = 0;
  int64_t remaining_ = -1;  // -1: no limit
  std::unique_ptr<iceberg::DataFileReader> reader_;
};

}  // namespace

Result<std::shared_ptr<arrow::RecordBatchReader>> TableScan::Open() {
  ARROW_ASSIGN_OR_RAISE(auto tasks, PlanFiles());
  // One context per reader: its delete loader caches the delete files shared by the tasks.
  LS_ASSIGN_OR_RAISE_CTX(auto context, iceberg::ScanContext::Make(table_->io(), *table_->metadata(), state_->schema),
                         "reading {}", table_->name());
  iceberg::DataFileReadOptions read;
  for (const auto& f : state_->output->fields()) read.columns.push_back(f.id);
  read.filter = state_->filter;
  read.with_file_and_pos = options_.with_file_and_pos;
  read.uuid_extension = true;
  read.batch_rows = options_.batch_rows;
  read.use_threads = options_.use_threads;
  return std::make_shared<ScanReader>(table_, std::move(context), std::move(read), options_.limit, std::move(tasks),
                                      output_schema_);
}

}  // namespace lakesync::table
