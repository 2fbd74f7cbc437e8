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
#include <arrow/util/type_fwd.h>

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
  // Batches are conformed to this schema: columns matched by name, converted to its types, missing
  // nullable columns (and struct fields) filled with nulls. Null: the file's own schema, inferred by
  // Arrow for CSV and by InferJsonlSchema for JSON Lines.
  std::shared_ptr<arrow::Schema> target_schema;
  // Most rows per batch (Parquet, JSON Lines; CSV batches follow Arrow's 4 MiB blocks).
  int64_t batch_rows = 64 * 1024;
};

// Opens a Parquet, CSV or JSON Lines file as a stream of batches (bounded memory).
//
// With a target schema, JSON Lines and CSV values are parsed by the target type in the encodings of
// the JSON Lines contract above (CSV: the same text without JSON quoting; an empty cell is null, a
// quoted empty cell "" an empty string; structs, lists and maps as JSON text). A timestamp without
// time zone refuses a zone offset; a timestamptz without one is UTC.
//
// Errors: NotFound when the file does not exist; from ReadNext, InvalidArgument naming the file, the
// place and the column for an unknown column, a null or missing value in a required column or
// nested field, a value of the wrong JSON kind, or one that does not parse or fit:
//   JSON Lines: "<file>: line N (row M), column 'a.b': <reason>" (lines count every line from 1,
//               rows only the non-blank ones; blank lines are skipped), and
//               "<file>: line N (row M): malformed JSON at character C: ..." for a line that is not
//               a JSON object;
//   CSV:        "<file>: data row N, column 'x': <reason>" (N counts data rows from 1, without the
//               header); header columns not in the table and required columns missing from the
//               header fail at open time;
//   Parquet:    "<file>: row N, column 'x': ..." from ConformBatch.
// Nested places are written "a.b" (struct field), "a[2]" (list element), "m["k"]" (map value of
// an object map), "m[0].key" / "m[0].value" (entries of an array map).
Result<std::shared_ptr<arrow::RecordBatchReader>> OpenReader(const io::FileIO& io, const std::string& location,
                                                              Format format, const ReadOptions& options);

// The column types of a JSON Lines file, for reading it without a table (table create --schema-from,
// apply creating its target). Arrow infers the structure from the first block (numbers, booleans,
// strings, lists, objects); the temporal types are lakesync's, from the spelling of every value in
// that block, because Arrow's guess loses information (it drops zone offsets, reads dates as
// timestamps and fractional seconds as strings): "2024-01-31" is a date; "2024-01-31T22:31:08.123Z"
// (or an offset) a timestamptz in UTC; without a zone a timestamp; more than six fractional digits
// the nanosecond variants. A column mixing zoned and unzoned values, or any other text, stays a
// string. Errors: NotFound for a missing file; InvalidArgument for malformed JSON or an empty file.
Result<std::shared_ptr<arrow::Schema>> InferJsonlSchema(const io::FileIO& io, const std::string& location);

// Casts/reorders one batch to `target` (by column name), with the rules of ReadOptions.
// `source` names the input in error messages; `first_row` is the number of rows of the source
// before this batch, so that errors name the row in the source (1-based).
// Errors: InvalidArgument "<source>: column 'x' is not in the table schema" (and "field 'x.y'" for a
// struct field the table lacks, at any depth: Arrow's cast would drop it), "<source>: required
// column 'x' is missing", "<source>: row N, column 'x': the value V of type T cannot be converted
// to U: ...", "<source>: row N, column 'a.b': null in a required column/field".
Result<std::shared_ptr<arrow::RecordBatch>> ConformBatch(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                         const std::shared_ptr<arrow::Schema>& target,
                                                         const std::string& source, int64_t first_row = 0);

class RecordWriter {
 public:
  virtual ~RecordWriter() = default;
  virtual Status Write(const arrow::RecordBatch& batch) = 0;
  // Hands every row written so far to the stream and flushes it, so that a follow loop can write a
  // batch and then record how far it got. The line formats (JSON Lines, CSV) only; a text table
  // aligns its columns over all rows and Parquet writes whole row groups, so both say Unsupported.
  virtual Status Flush() = 0;
  // Flushes, and for the formats that hold rows back, writes them (the stream stays open).
  virtual Status Close() = 0;
};

struct RecordWriterOptions {
  int64_t table_max_rows = 1000;                                      // kTable
  arrow::Compression::type parquet_codec = arrow::Compression::ZSTD;  // kParquet
};

// Writes to an output stream. kCsv writes a header row, then the JSON Lines values without JSON
// quoting: null is an empty field, an empty string or binary a quoted empty field (""), so that the
// CSV reader tells them apart. kTable buffers up to `table_max_rows` rows to align columns and
// notes any rows it did not show. kParquet compresses with `parquet_codec`.
Result<std::unique_ptr<RecordWriter>> MakeRecordWriter(Format format, std::shared_ptr<arrow::Schema> schema,
                                                       std::shared_ptr<arrow::io::OutputStream> out,
                                                       const RecordWriterOptions& options = {});

// The JSON Lines rendering of one row (no trailing newline).
Result<std::string> RowToJson(const arrow::RecordBatch& batch, int64_t row);

}  // namespace lakesync::tabular
