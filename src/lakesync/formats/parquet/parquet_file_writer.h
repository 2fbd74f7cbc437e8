// Writes Arrow record batches in a table's Arrow schema to one Parquet data file with Iceberg field
// ids, and returns the file's Iceberg metrics on Close.
//
// The Parquet schema follows the spec's Parquet appendix: field ids on every field (Arrow's writer
// stores the "PARQUET:field_id" metadata as Parquet field_id), 3-level lists with "element", maps as
// repeated "key_value" groups, uuid as FIXED_LEN_BYTE_ARRAY(16) with the UUID annotation, decimals
// as INT32/INT64/FIXED by precision, timestamps with isAdjustedToUTC for the tz types. The footer
// carries the Iceberg schema JSON under "iceberg.schema", as Java writes it. Top-level columns of
// the v3 `unknown` type are not written (the spec keeps them out of data files; readers fill nulls).
// Columns are dictionary-encoded unless the first batch shows that a dictionary would not make its
// first page smaller (parquet-mr's rule, ColumnsWithoutDictionaryGain in parquet_properties.h).
#pragma once

#include <arrow/io/interfaces.h>
#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <string>

#include "lakesync/formats/parquet/parquet_metrics.h"
#include "lakesync/formats/parquet/parquet_properties.h"
#include "lakesync/iceberg/model/schema.h"

namespace parquet::arrow {
class FileWriter;
}

namespace lakesync::parquet_io {

namespace internal {
class FloatingStatsCollector;
}

struct ParquetWriterOptions {
  ParquetWriteProperties parquet;
  MetricsConfig metrics;
  arrow::MemoryPool* pool = nullptr;  // default pool when null
  // Compressed bytes per in-memory Arrow byte assumed until the first row group is flushed; after
  // that the writer uses what it observed. Rolling writers pass the previous file's ratio on.
  double initial_compression_ratio = 1.0;
};

class ParquetFileWriter {
 public:
  // Starts a file on `sink` (positioned at 0). `location` only names the file in errors and results.
  // Returns InvalidArgument for a schema Arrow cannot represent (variant, geometry), IOError from
  // the sink.
  static Result<std::unique_ptr<ParquetFileWriter>> Make(std::shared_ptr<arrow::io::OutputStream> sink,
                                                         std::string location, iceberg::SchemaPtr schema,
                                                         ParquetWriterOptions options = {});
  ~ParquetFileWriter();

  // The Arrow schema batches must have: ToArrowSchema(schema). Batches whose types differ only in
  // nested field names or metadata are accepted; other types are cast when Arrow can do it safely.
  const std::shared_ptr<arrow::Schema>& arrow_schema() const { return table_arrow_schema_; }

  // Appends the rows. Returns InvalidArgument when the batch's columns do not match the schema, or a
  // required top-level column has nulls; IOError from the sink (with the location).
  Status Write(const arrow::RecordBatch& batch);

  int64_t record_count() const { return record_count_; }
  // Bytes flushed to the sink plus an estimate of the buffered row group (for rolling files).
  int64_t EstimatedSize() const;
  // Compressed bytes per in-memory byte, as observed so far (the initial ratio before any flush).
  double compression_ratio() const { return ratio_; }
  const std::string& location() const { return location_; }

  // Finishes the file (last row group, footer), closes the sink and returns the metrics.
  // Returns IOError from the sink, InvalidArgument when called twice.
  Result<ParquetFileMetrics> Close();
  // Closes the sink without finishing the file (the caller deletes what was written).
  Status Abort();

 private:
  ParquetFileWriter() = default;
  Status StartRowGroup();
  // Opens Arrow's writer, its column encodings chosen from the first batch (null: none written).
  Status OpenWriter(const arrow::RecordBatch* first_batch);

  std::string location_;
  iceberg::SchemaPtr schema_;
  ParquetWriterOptions options_;
  std::shared_ptr<arrow::io::OutputStream> sink_;
  std::shared_ptr<arrow::Schema> table_arrow_schema_;   // ToArrowSchema(schema)
  std::shared_ptr<arrow::Schema> writer_arrow_schema_;  // what Arrow's Parquet writer sees
  std::vector<int> written_columns_;                    // table column index per writer column
  std::unique_ptr<parquet::arrow::FileWriter> writer_;  // opened by the first Write (or Close)
  std::unique_ptr<internal::FloatingStatsCollector> floating_;
  int64_t record_count_ = 0;
  int64_t rows_in_row_group_ = 0;
  int64_t buffered_bytes_ = 0;   // in-memory Arrow bytes given to the open row group
  int64_t flushed_at_ = 0;       // sink position when the open row group started
  int64_t flushed_bytes_ = 0;    // compressed bytes of finished row groups
  int64_t flushed_memory_ = 0;   // in-memory bytes of finished row groups
  double ratio_ = 1.0;
  bool closed_ = false;
};

}  // namespace lakesync::parquet_io
