// Appending rows: write them as data files in the table's layout and commit one append snapshot.
// Either every input is written and committed, or nothing is (files written for a failed append
// are deleted).
#pragma once

#include <arrow/type_fwd.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/formats/tabular/tabular.h"
#include "lakesync/iceberg/write/data_file_writer.h"
#include "lakesync/table/snapshot_update.h"

namespace lakesync::table {

struct AppendOptions {
  std::optional<tabular::Format> format;  // default: from each file's extension
  std::map<std::string, std::string> summary_properties;
};

struct AppendResult {
  int64_t snapshot_id = 0;
  int64_t added_records = 0;
  int64_t added_files = 0;
};

// Appends Parquet, CSV or JSON Lines files (columns matched to the table schema by name).
Result<AppendResult> AppendFiles(const std::shared_ptr<Table>& table, const std::vector<std::string>& inputs,
                                 const AppendOptions& options);

// Appends a stream of batches whose columns match the table schema by name.
Result<AppendResult> AppendBatches(const std::shared_ptr<Table>& table, arrow::RecordBatchReader& batches,
                                   const AppendOptions& options);

// Writer options for new data files of the table: its schema, default spec, location, properties and
// an output factory over the table's FileIO.
iceberg::DataWriterOptions DataWriterOptionsFor(const Table& table);

}  // namespace lakesync::table
