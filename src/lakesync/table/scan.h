// Table scans: plan the data files of a snapshot that may match a filter (partition and metrics
// pruning), attach the delete files that apply to each (spec "Scan Planning": deletion vectors and
// position deletes with seq(D) <= seq(delete), equality deletes with seq(D) < seq(delete)), and read
// them as a stream of Arrow batches with deletes applied, the filter evaluated and columns projected
// (iceberg/scan/data_file_reader.h: the one data-file reader, with the spec's projection rules).
// Row groups are read in parallel on the engine's one executor (common/executor.h) and emitted in
// task order, so the output is the same for every thread count. Memory stays bounded by the
// read-ahead: (read_ahead_units + 1) row groups plus the delete sets of the files in flight.
#pragma once

#include <arrow/type_fwd.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/iceberg/expr/expression.h"
#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/scan/data_file_reader.h"
#include "lakesync/iceberg/scan/file_scan_task.h"
#include "lakesync/table/table.h"

namespace lakesync::table {

// Metadata columns a scan can add after the table columns (_file, _pos).
using iceberg::kFileColumn;
using iceberg::kPosColumn;
// Planning makes them; iceberg::DataFileReader reads them.
using FileScanTask = iceberg::FileScanTask;

struct ScanOptions {
  std::optional<int64_t> snapshot_id;         // default: the current snapshot of `ref`
  std::string ref = "main";                   // branch or tag
  std::optional<int64_t> as_of_timestamp_ms;  // the snapshot current at that time
  std::string filter;                         // SQL-like predicate, e.g. "id > 5 AND region = 'eu'"
  // A filter built in code, bound to the table's current schema; ANDed with `filter`.
  std::optional<iceberg::BoundExpr> bound_filter;
  std::vector<std::string> select;            // top-level columns, default all
  std::optional<int64_t> limit;
  bool case_sensitive = true;
  int64_t batch_rows = 64 * 1024;
  bool with_file_and_pos = false;             // append _file and _pos
  // Then append v3 row lineage: _row_id and _last_updated_sequence_number (iceberg/scan/
  // data_file_reader.h says how they are inherited; null on tables before v3).
  bool with_row_lineage = false;
  bool use_threads = true;                    // decode a file's columns in parallel
  // Row groups read ahead of the consumer on the engine's executor (0: twice the thread count);
  // memory is bounded by (read_ahead_units + 1) × one row group of the projected columns.
  int read_ahead_units = 0;
};

struct ScanPlanStats {
  int64_t manifests = 0;
  int64_t manifests_skipped = 0;
  int64_t data_files = 0;
  int64_t data_files_skipped = 0;
  int64_t delete_files = 0;
};

class TableScan {
 public:
  // Errors: kNotFound for an unknown snapshot id or ref, kInvalidArgument for a malformed filter or an
  // unknown column (both name it).
  static Result<std::unique_ptr<TableScan>> Make(std::shared_ptr<Table> table, ScanOptions options);

  // Null when the table has no snapshot (the scan is empty).
  const iceberg::SnapshotPtr& snapshot() const { return snapshot_; }
  const iceberg::SchemaPtr& schema() const { return schema_; }
  // The schema of the batches Open() returns.
  const std::shared_ptr<arrow::Schema>& output_schema() const { return output_schema_; }
  const ScanPlanStats& stats() const { return stats_; }

  Result<std::vector<FileScanTask>> PlanFiles();
  // Plans (if not done yet) and reads the tasks in order with iceberg::DataFileReader.
  Result<std::shared_ptr<arrow::RecordBatchReader>> Open();

  struct State;

 private:
  TableScan() = default;
  std::shared_ptr<Table> table_;
  ScanOptions options_;
  iceberg::SnapshotPtr snapshot_;
  iceberg::SchemaPtr schema_;
  std::shared_ptr<arrow::Schema> output_schema_;
  std::shared_ptr<State> state_;
  ScanPlanStats stats_;
  std::optional<std::vector<FileScanTask>> tasks_;
};

}  // namespace lakesync::table
