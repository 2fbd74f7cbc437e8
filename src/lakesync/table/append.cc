#include "lakesync/table/append.h"

#include <arrow/record_batch.h>

#include "lakesync/common/logging.h"
#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/table/pending_files.h"

namespace lakesync::table {
namespace {

// Streams every input into one rolling writer; the writer is aborted (files deleted) on any error.
class AppendJob {
 public:
  explicit AppendJob(const std::shared_ptr<Table>& table) : table_(table) {}

  Status Open() {
    ARROW_ASSIGN_OR_RAISE(writer_, iceberg::RollingDataWriter::Make(DataWriterOptionsFor(*table_)));
    ARROW_ASSIGN_OR_RAISE(target_, iceberg::ToArrowSchema(*table_->metadata()->Schema()));
    return Status::OK();
  }

  Status WriteAll(arrow::RecordBatchReader& reader, const std::string& source) {
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      ARROW_RETURN_NOT_OK(reader.ReadNext(&batch));
      if (!batch) return Status::OK();
      ARROW_ASSIGN_OR_RAISE(batch, tabular::ConformBatch(batch, target_, source));
      if (batch->num_rows() == 0) continue;
      ARROW_RETURN_NOT_OK(writer_->Write(batch));
    }
  }

  Result<AppendResult> Commit(const AppendOptions& options) {
    ARROW_ASSIGN_OR_RAISE(auto files, writer_->Close());
    writer_.reset();
    AppendResult result;
    SnapshotUpdate update(table_);
    for (auto& f : files) {
      result.added_records += f.record_count;
      ++result.added_files;
      written_.push_back(f.file_path);
      update.AddDataFile(std::move(f));
    }
    for (const auto& [k, v] : options.summary_properties) update.SetSummaryProperty(k, v);
    if (update.empty()) return result;  // nothing to append: no snapshot
    auto committed = update.Commit();
    if (!committed.ok()) {
      if (KindOf(committed.status()) != ErrorKind::kCommitStateUnknown) {
        DeleteWritten();
      } else {
        written_.clear();  // the commit may have landed: these files may be the table's now
      }
      return committed.status();
    }
    result.snapshot_id = committed->snapshot_id;
    return result;
  }

  void Abort() {
    if (writer_) {
      for (const auto& path : writer_->Abort()) written_.push_back(path);
      writer_.reset();
    }
    DeleteWritten();
  }

 private:
  void DeleteWritten() {
    for (const auto& path : written_) {
      auto st = table_->io()->Delete(path);
      if (!st.ok()) LS_LOG_WARN("could not delete {}: {}", path, st.message());
    }
    written_.clear();
  }

  std::shared_ptr<Table> table_;
  std::unique_ptr<iceberg::RollingDataWriter> writer_;
  std::shared_ptr<arrow::Schema> target_;
  std::vector<std::string> written_;
};

}  // namespace

iceberg::DataWriterOptions DataWriterOptionsFor(const Table& table) {
  const auto& m = *table.metadata();
  iceberg::DataWriterOptions options;
  options.schema = m.Schema();
  options.spec = m.Spec();
  options.table_location = m.location;
  options.properties = m.properties;
  options.output_factory = table.Outputs();
  options.operation_id = table.NewFileStem();  // one per writer; the writer numbers its files after it
  if (auto order = m.SortOrder(); order && !order->IsUnsorted()) options.sort_order_id = order->order_id;
  return options;
}

Result<AppendResult> AppendBatches(const std::shared_ptr<Table>& table, arrow::RecordBatchReader& batches,
                                   const AppendOptions& options) {
  ARROW_RETURN_NOT_OK(BeginWriteAttempt(*table));
  AppendJob job(table);
  Status st = job.Open();
  if (st.ok()) st = job.WriteAll(batches, "input");
  if (!st.ok()) {
    job.Abort();
    EndWriteAttempt(*table, st);
    return WithContext(st, "appending to " + table->name());
  }
  auto result = job.Commit(options);
  if (!result.ok()) job.Abort();
  EndWriteAttempt(*table, result.status());
  return result;
}

Result<AppendResult> AppendFiles(const std::shared_ptr<Table>& table, const std::vector<std::string>& inputs,
                                 const AppendOptions& options) {
  ARROW_ASSIGN_OR_RAISE(auto target, iceberg::ToArrowSchema(*table->metadata()->Schema()));
  ARROW_RETURN_NOT_OK(BeginWriteAttempt(*table));
  AppendJob job(table);
  if (Status opened = job.Open(); !opened.ok()) {
    EndWriteAttempt(*table, opened);
    return opened;
  }
  for (const auto& input : inputs) {
    Status st = [&]() -> Status {
      ARROW_ASSIGN_OR_RAISE(auto location, io::NormalizeLocation(input));
      tabular::Format format;
      if (options.format) {
        format = *options.format;
      } else {
        ARROW_ASSIGN_OR_RAISE(format, tabular::FormatFromPath(input));
      }
      tabular::ReadOptions read;
      read.target_schema = target;
      ARROW_ASSIGN_OR_RAISE(auto reader, tabular::OpenReader(*table->io(), location, format, read));
      return job.WriteAll(*reader, input);
    }();
    if (!st.ok()) {
      job.Abort();
      EndWriteAttempt(*table, st);
      return WithContext(st, "appending " + input + " to " + table->name());
    }
  }
  auto result = job.Commit(options);
  if (!result.ok()) job.Abort();
  EndWriteAttempt(*table, result.status());
  return result;
}

}  // namespace lakesync::table
