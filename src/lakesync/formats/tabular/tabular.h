// User-facing row files: reading Parquet, CSV and JSON Lines into Arrow batches shaped like a table's
// schema, and writing Arrow batches as an aligned text table, JSON Lines, CSV or Parquet.
//
// The JSON Lines form is a contract that tests and scripts rely on: one object per row, keys are
// column names; timestamps ISO-8601 (timestamptz in UTC with a "Z"), dates YYYY-MM-DD, times
// HH:MM:SS[.ffffff], decimals as strings ("14.20"), binary and fixed as base64, uuids in canonical
// text form, NaN and infinities as the strings "NaN", "Infinity", "-Infinity", structs as objects,
// lists as arrays, maps with string keys as objects and other maps as arrays of {"key","value"}.
// The readers accept exactly that form back.
#pragma once

#include <arrow/type_fwd.h>

#include <memory>
#include <optional>
#include <string>

#include "lakesync/common/status.h"
#include "lakesync/io/file_io.h"

namespace lakesync::tabular {

enum class Format { kParquet, kCsv, kJsonl, kTable };

// "parquet", "csv", "jsonl" (also "json", "ndjson"), "table". Errors name the value and the choices.
Result<Format> ParseFormat(std::string_view name);
// By file extension (.parquet/.parq, .csv, .jsonl/.ndjson/.json); error when unknown.
Result<Format> FormatFromPath(std::string_view location);

struct ReadOptions {
  // Batches are conformed to this schema: columns matched by name, cast to its types, missing
  // nullable columns filled with nulls. Missing required columns and unknown columns are errors
  // that name the column and the file. Null: the file's own schema.
  std::shared_ptr<arrow::Schema> target_schema;
  int64_t batch_rows = 64 * 1024;
};

// Opens a Parquet, CSV or JSON Lines file as a stream of batches (bounded memory).
Result<std::shared_ptr<arrow::RecordBatchReader>> OpenReader(const io::FileIO& io, const std::string& location,
                                                              Format format, const ReadOptions& options);

// Casts/reorders one batch to `target` (by column name), with the rules of ReadOptions.
// `source` names the input in error messages.
Result<std::shared_ptr<arrow::RecordBatch>> ConformBatch(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                         const std::shared_ptr<arrow::Schema>& target,
                                                         const std::string& source);

class RecordWriter {
 public:
  virtual ~RecordWriter() = default;
  virtual Status Write(const arrow::RecordBatch& batch) = 0;
  virtual Status Close() = 0;
};

// Writes to an output stream. kTable buffers up to `table_max_rows` rows to align columns and
// notes any rows it did not show.
Result<std::unique_ptr<RecordWriter>> MakeRecordWriter(Format format, std::shared_ptr<arrow::Schema> schema,
                                                       std::shared_ptr<arrow::io::OutputStream> out,
                                                       int64_t table_max_rows = 1000);

// The JSON Lines rendering of one row (no trailing newline).
Result<std::string> RowToJson(const arrow::RecordBatch& batch, int64_t row);

}  // namespace lakesync::tabular
