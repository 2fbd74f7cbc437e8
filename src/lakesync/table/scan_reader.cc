// Reading planned scan tasks: their row groups are read on every core through iceberg::DataFileReader
// (deletes applied, the filter evaluated, columns projected by the spec's rules) and emitted in task
// order (iceberg/scan/task_units.h), with --limit on top.
#include <arrow/record_batch.h>

#include "lakesync/iceberg/scan/data_file_reader.h"
#include "lakesync/iceberg/scan/task_units.h"
#include "lakesync/table/scan.h"
#include "lakesync/table/scan_internal.h"

namespace lakesync::table {
namespace {

// A unit's batches: one row group of one task (iceberg/scan/task_units.h), deletes applied.
using UnitBatches = std::vector<std::shared_ptr<arrow::RecordBatch>>;
using StreamedBatches = OrderedStream<std::shared_ptr<arrow::RecordBatch>>;

class ScanReader : public arrow::RecordBatchReader {
 public:
  ScanReader(std::shared_ptr<Table> table, std::unique_ptr<iceberg::TaskUnitStream<UnitBatches>> units,
             std::optional<int64_t> limit, std::shared_ptr<arrow::Schema> output_schema)
      : table_(std::move(table)), units_(std::move(units)), output_schema_(std::move(output_schema)) {
    if (limit) remaining_ = *limit;
  }

  std::shared_ptr<arrow::Schema> schema() const override { return output_schema_; }

  Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    *out = nullptr;
    while (remaining_ != 0) {
      if (units_->serial()) {
        if (!streamed_) StartStreaming();
        ARROW_ASSIGN_OR_RAISE(auto next, streamed_->Next());
        if (!next) return Status::OK();
        if (!*next || (*next)->num_rows() == 0) continue;
        Emit(std::move(*next), out);
        return Status::OK();
      }
      if (next_batch_ >= batches_.size()) {
        auto next = units_->Next();
        if (!next.ok()) return WithContext(next.status(), "reading " + table_->name());
        if (!next->has_value()) return Status::OK();
        batches_ = std::move(**next);
        next_batch_ = 0;
        continue;
      }
      Emit(std::move(batches_[next_batch_++]), out);
      return Status::OK();
    }
    return Status::OK();
  }

  // Serial reads: one file at a time, batch by batch (RowGroupUnits::StreamBatches): a batch is
  // decoded on this thread and finished (deletes, filter, projection) on the pool while the next one
  // decodes (memory: a few batches, as before parallel reads).
  void StartStreaming() {
    streamed_ = units_->StreamBatches<std::shared_ptr<arrow::RecordBatch>>(
        [table = table_->name()](const std::shared_ptr<const iceberg::TaskFile>&, iceberg::DataFileReader& reader)
            -> Result<std::optional<StreamedBatches::Unit>> {
          std::string where = "reading data file " + reader.path() + " of " + table;
          auto decoded = reader.NextDecoded();
          if (!decoded.ok()) return WithContext(decoded.status(), where);
          if (!*decoded) return std::nullopt;
          return std::optional<StreamedBatches::Unit>(
              [where = std::move(where), d = std::move(**decoded)]() -> Result<std::shared_ptr<arrow::RecordBatch>> {
                auto finished = d.Finish();
                if (!finished.ok()) return WithContext(finished.status(), where);
                return *finished ? (*finished)->batch : nullptr;
              });
        },
        "reading " + table_->name());
  }

  void Emit(std::shared_ptr<arrow::RecordBatch> batch, std::shared_ptr<arrow::RecordBatch>* out) {
    if (remaining_ > 0 && batch->num_rows() > remaining_) batch = batch->Slice(0, remaining_);
    if (remaining_ > 0) remaining_ -= batch->num_rows();
    *out = std::move(batch);
  }

 private:
  std::shared_ptr<Table> table_;
  std::unique_ptr<iceberg::TaskUnitStream<UnitBatches>> units_;
  std::shared_ptr<arrow::Schema> output_schema_;
  UnitBatches batches_;  // parallel: the current unit's batches
  size_t next_batch_ = 0;
  int64_t remaining_ = -1;  // -1: no limit
  // Destroyed first (waiting for the batches in flight), before the units and the file they read.
  std::unique_ptr<StreamedBatches> streamed_;
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
  read.with_row_lineage = options_.with_row_lineage;
  read.uuid_extension = true;
  read.batch_rows = options_.batch_rows;
  read.use_threads = options_.use_threads;
  // Units (row groups of the tasks) are read on every core and come out in task order.
  auto shared_tasks = std::make_shared<const std::vector<FileScanTask>>(std::move(tasks));
  auto read_unit = [](size_t, iceberg::DataFileReader& reader) -> Result<UnitBatches> {
    UnitBatches batches;
    while (true) {
      LS_ASSIGN_OR_RAISE_CTX(auto next, reader.Next(), "reading data file {}", reader.path());
      if (!next) break;
      if (next->batch->num_rows() > 0) batches.push_back(std::move(next->batch));
    }
    return batches;
  };
  LS_ASSIGN_OR_RAISE_CTX(auto units,
                         iceberg::TaskUnitStream<UnitBatches>::Make(std::move(context), shared_tasks, std::move(read),
                                                                    read_unit, options_.read_ahead_units),
                         "reading {}", table_->name());
  return std::make_shared<ScanReader>(table_, std::move(units), options_.limit, output_schema_);
}

}  // namespace lakesync::table
