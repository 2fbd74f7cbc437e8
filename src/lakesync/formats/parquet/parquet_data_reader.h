// Reads a Parquet data file as Arrow batches in a requested Iceberg schema (the "read schema").
//
// File columns are matched to Iceberg fields by Parquet field id at every depth (structs, list
// elements, map keys/values), so renamed columns are still found. Files without any field ids (e.g.
// imported ones) are matched through a name mapping (table property `schema.name-mapping.default`)
// or, when none is given, by the read schema's current column names. A field absent from the file
// reads as the value the caller supplies for it (`ParquetReadOptions::constants`: identity partition
// values), else as its v3 `initial-default`, else as nulls; a required field that is absent without
// any value is an error naming the file and the column (spec "Column Projection"). Type promotions
// the spec allows are applied (int → long, float → double, decimal precision widening, and date →
// timestamp with `v3_promotions`); any other type difference is an error naming the column. Timestamps stored in another
// unit (ms, ns, INT96) are converted to the Iceberg unit.
//
// Batches come out in exactly ToArrowSchema(read schema), one row group at a time (bounded memory),
// never spanning row groups, each with the file position of its first row (what position deletes
// and deletion vectors address).
#pragma once

#include <arrow/io/interfaces.h>
#include <arrow/type_fwd.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lakesync/iceberg/model/data_file.h"
#include "lakesync/iceberg/model/literal.h"
#include "lakesync/iceberg/model/name_mapping.h"
#include "lakesync/iceberg/model/schema.h"

namespace parquet::arrow {
class FileReader;
}
namespace arrow {
class RecordBatchReader;
}

namespace lakesync::parquet_io {

// Files without field ids are matched through the table's name mapping, an Iceberg table property
// (iceberg/model/name_mapping.h).
using iceberg::MappedField;
using iceberg::NameMapping;

struct RowGroupInfo {
  int index = 0;
  int64_t first_row = 0;     // file position of the row group's first row
  int64_t num_rows = 0;
  int64_t start_offset = 0;  // byte offset where the row group starts (split offset)
  int64_t compressed_size = 0;
};

// Statistics of one column chunk, converted to the read schema's type.
struct ColumnChunkStats {
  std::optional<iceberg::Literal> lower;  // absent when unknown
  std::optional<iceberg::Literal> upper;
  std::optional<int64_t> null_count;
  int64_t value_count = 0;
};

// What a row-group filter sees: statistics of the read schema's primitive fields that are reached
// through structs only and present in the file, by field id.
struct RowGroupStats {
  int index = 0;
  int64_t num_rows = 0;
  std::map<int32_t, ColumnChunkStats> columns;
};

// Returns false to skip the row group (it certainly holds no wanted row).
using RowGroupFilter = std::function<bool(const RowGroupStats&)>;

struct ParquetReadOptions {
  int64_t batch_size = 64 * 1024;
  // Only these row groups (ascending file order); all when unset.
  std::optional<std::vector<int>> row_groups;
  RowGroupFilter row_group_filter;
  // Used only for files without field ids. When null such files are matched by column name.
  std::shared_ptr<const NameMapping> name_mapping;
  bool use_threads = false;
  // Match columns through the name mapping (or the read schema's names) even when the file has
  // field ids: Delta tables without id column mapping name their columns, and a file's ids may
  // come from another system.
  bool ignore_field_ids = false;
  // Values for fields of the read schema that the file does not hold, by field id, used before
  // initial-default: the identity partition values of the data file (see iceberg/scan). Promoted to
  // the field's type where the spec allows (a value written before int → long).
  std::map<int32_t, iceberg::Literal> constants;
  // The type promotions format version 3 adds: a date column read as timestamp or timestamp_ns
  // (midnight; not the zoned types, which the spec excludes). Off for v1/v2 tables, where such a
  // schema change is not allowed.
  bool v3_promotions = false;
  // Any other difference between a primitive column's type in the file and in the read schema is
  // converted value by value (Arrow's safe cast; a value that does not fit is an error naming the file
  // and the column) instead of refused. For Delta, whose overwrite may change a column's type: the
  // change feed of that version still reads the removed files, written with the old type. Off for
  // Iceberg, where a file's type can differ from the schema's only by a promotion the spec allows.
  bool convert_by_value = false;
  arrow::MemoryPool* pool = nullptr;
  // What the file's manifest entry says about it (ExpectManifestEntry): its row count, and the field
  // ids it has column metrics for. A file whose footer disagrees — fewer rows, or a read-schema column
  // the metrics name but the footer lacks (a damaged field id or schema) — is Corrupt instead of
  // being read with rows missing or a column of nulls.
  std::optional<int64_t> expected_record_count;
  std::set<int32_t> expected_field_ids;
};

// Sets the expectations of `options` from a data or delete file's manifest entry.
void ExpectManifestEntry(ParquetReadOptions& options, const iceberg::DataFile& file);

struct PositionedBatch {
  std::shared_ptr<arrow::RecordBatch> batch;
  int64_t first_row_position = 0;
  int row_group = 0;
};

// How a reader's decoded batches become batches of its read schema (immutable, shared).
class BatchConversion;

// A batch as decoded from the file, not yet in the read schema's layout: Convert() may run on any
// thread, also after the reader is gone, so a caller can convert one batch on the pool while the
// reader decodes the next (ParquetDataReader::NextDecoded).
struct DecodedBatch {
  std::shared_ptr<arrow::RecordBatch> file_batch;  // null for a row group read without any column
  int64_t num_rows = 0;
  int64_t first_row_position = 0;
  int row_group = 0;
  std::shared_ptr<const BatchConversion> conversion;

  // What Next() returns for this batch. Errors name the column and the file.
  Result<PositionedBatch> Convert() const;
};

class ParquetDataReader {
 public:
  // Opens the file and plans the projection. `location` names the file in errors. Returns Corrupt
  // (naming the location) for a file that is not Parquet or is truncated, or that disagrees with
  // the options' expectations (Next() also checks that every row group yields the rows its footer
  // says), InvalidArgument for a
  // column whose file type cannot be read as the read schema's type, or a required column missing
  // without a default or for row group indices the file does not have.
  static Result<std::unique_ptr<ParquetDataReader>> Open(std::shared_ptr<arrow::io::RandomAccessFile> file,
                                                         std::string location, iceberg::SchemaPtr read_schema,
                                                         ParquetReadOptions options = {});
  ~ParquetDataReader();

  // ToArrowSchema(read schema).
  const std::shared_ptr<arrow::Schema>& schema() const { return arrow_schema_; }
  const std::string& location() const { return location_; }
  int64_t num_rows() const { return num_rows_; }
  // Every row group of the file (not only the selected ones).
  const std::vector<RowGroupInfo>& row_groups() const { return row_groups_; }
  // Whether columns were matched by Parquet field ids (false: by name mapping or names).
  bool matched_by_field_id() const { return by_field_id_; }
  // The row groups that will be read, after selection and filtering.
  const std::vector<int>& selected_row_groups() const { return selected_; }

  // The row groups of a file split [start, start + length): those whose start offset lies in it.
  // Splits planned from a data file's split_offsets cover every row group exactly once this way.
  static std::vector<int> RowGroupsInRange(const std::vector<RowGroupInfo>& row_groups, int64_t start, int64_t length);

  // Statistics of one row group (what the filter sees).
  Result<RowGroupStats> StatsFor(int row_group) const;

  // Whether columns are decoded in parallel on Arrow's CPU pool (ParquetReadOptions::use_threads),
  // for the row groups not started yet.
  void set_use_threads(bool use_threads);

  // The next batch, or nullopt at the end. Returns Corrupt naming the location for undecodable data.
  Result<std::optional<PositionedBatch>> Next();
  // Next() in two halves: the batch decoded here (same errors, same batches), converted later by
  // DecodedBatch::Convert().
  Result<std::optional<DecodedBatch>> NextDecoded();

  // Reads everything that is left into one table.
  Result<std::shared_ptr<arrow::Table>> ReadAll();

  struct Plan;

 private:
  ParquetDataReader();

  std::string location_;
  iceberg::SchemaPtr read_schema_;
  ParquetReadOptions options_;
  std::shared_ptr<arrow::io::RandomAccessFile> file_;
  std::unique_ptr<parquet::arrow::FileReader> reader_;
  std::shared_ptr<arrow::Schema> arrow_schema_;
  std::shared_ptr<Plan> plan_;  // shared with conversion_, which points into it
  std::shared_ptr<const BatchConversion> conversion_;
  std::vector<int> column_indices_;  // leaf columns to read
  std::vector<RowGroupInfo> row_groups_;
  std::vector<int> selected_;
  bool by_field_id_ = true;
  int64_t num_rows_ = 0;

  // Iteration state.
  size_t next_selected_ = 0;
  std::unique_ptr<arrow::RecordBatchReader> current_;
  int current_row_group_ = -1;
  int64_t current_position_ = 0;
  int64_t current_remaining_ = 0;  // rows left in a row group read without columns
};

// Opens a reader for key columns only (key → position resolution): the table schema projected to
// `key_field_ids` (see SelectFields), with positions as above. Same errors as Open.
Result<std::unique_ptr<ParquetDataReader>> OpenKeyColumnReader(std::shared_ptr<arrow::io::RandomAccessFile> file,
                                                               std::string location,
                                                               const iceberg::Schema& table_schema,
                                                               const std::vector<int32_t>& key_field_ids,
                                                               ParquetReadOptions options = {});

}  // namespace lakesync::parquet_io
